#!/usr/bin/env bash
# Benchmarks on the local control plane (throughput, latency, API requests per
# job, memory). The harness lands with the benchmark issue.
set -euo pipefail
echo "make bench: not implemented yet; it will measure jobs/s, create-to-running latency," >&2
echo "apiserver requests per job and operator memory on the local control plane." >&2
exit 0
