#!/usr/bin/env bash
# Runs the e2e suite on a kind cluster (needs Docker). Not runnable on hosts
# without a Docker engine; `make e2e` runs the same suite on the local control plane.
set -euo pipefail
if ! docker info >/dev/null 2>&1; then
  echo "make e2e-kind needs a running Docker engine (kind creates node containers)." >&2
  echo "Use 'make e2e' for the same suite on the local control plane built from source." >&2
  exit 1
fi
echo "The kind path (image build, kind config with GPU-labelled KWOK nodes) lands with the e2e issue." >&2
exit 1
