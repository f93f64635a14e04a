#!/usr/bin/env bash
# Benchmarks on the local control plane (make bench): job throughput and
# latency, API requests, reconciles, status writes and Events per job,
# operator CPU and memory, a restart at scale, and the raw limit of the same
# control plane, with the targets met or not. The operator and the raw client
# talk to the apiserver directly; the operator's requests are counted from its
# rest_client_requests_total. Arguments go to e2e/bench, e.g.
#   hack/bench.sh                       # --quick (default, a few minutes)
#   hack/bench.sh --full                # the issue's sizes (long)
#   hack/bench.sh --operator /path/to/other-manager --operator-args '--config={config}'
#   hack/bench.sh --compare bin/manager /path/to/other-manager
#   hack/bench.sh --scenarios burst,restart
#   hack/bench.sh --scenarios restart-policy   # whole-job restart of a 1+127 job (restart is the operator's)
#   hack/bench.sh --full --scenarios raw-client-500,burst-500 --repeat 3   # median of 3 pairs
#   hack/bench.sh --scenarios burst --cpu-profile   # run-*/burst-50.cpu.pb.gz (go tool pprof -top)
#   hack/bench.sh --scenarios burst --proxy         # + requests by verb and resource
#   hack/bench.sh --full --scenarios kueue          # 500 jobs through one Kueue queue, Kueue's integration then ours
# Results: _output/bench/<timestamp>/{report.md,report.json,run-*/operator.log}.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOPROXY="${GOPROXY:-https://proxy.golang.org}" GOFLAGS="${GOFLAGS:--mod=mod}"
KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$(hack/controlplane.sh --print-dir)}"
export KUBEBUILDER_ASSETS
# The default operator under test is bin/manager: build it from this tree, so
# that a run never measures a stale binary (make bench builds it too).
go build -o bin/manager .
exec go run ./e2e/bench "$@"
