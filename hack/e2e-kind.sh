#!/usr/bin/env bash
# Runs the e2e suite (e2e/suite) on a kind cluster: the operator image from
# `make image`, installed with the Helm chart; KWOK (from the kwok Go module)
# simulates the GPU nodes of e2e/kind/nodes.yaml with the pod stages of
# harness/cluster/kwok-stages.yaml, as in the local control plane of `make e2e`.
#
# Needs a running Docker engine, kind and kubectl; helm is taken from PATH or
# from `make controlplane`. Environment:
#   KIND_CLUSTER_NAME   cluster name (default training-operator-e2e)
#   KIND_NODE_IMAGE     kindest/node image (default: kind's own)
#   IMG                 operator image to build and load
#   E2E_OPERATOR_NAMESPACE  release namespace (default kubeflow)
#   E2E_KEEP_CLUSTER=1  keep the cluster afterwards (its kubeconfig is in _output/e2e-kind)
#   ARTIFACTS           where failure artifacts go (default _output)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

CLUSTER="${KIND_CLUSTER_NAME:-training-operator-e2e}"
IMG="${IMG:-ghcr.io/seed-d8a409e9/training-operator:e2e}"
NAMESPACE="${E2E_OPERATOR_NAMESPACE:-kubeflow}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
ARTIFACTS="${ARTIFACTS:-${root}/_output}"
WORK="${root}/_output/e2e-kind"
KUBECONFIG_FILE="${WORK}/kubeconfig"
REAL_NODE_KEY=e2e.training-operator.kubeflow.org/real-node

log() { echo "[e2e-kind] $(date +%H:%M:%S) $*" >&2; }
die() {
  echo "e2e-kind: $*" >&2
  exit 1
}

# Fail fast, before building anything.
command -v docker >/dev/null 2>&1 || die "docker is not installed: kind runs its nodes as Docker containers.
Use 'make e2e' to run the same suite on the local control plane (no Docker needed)."
docker info >/dev/null 2>&1 || die "no running Docker engine ('docker info' failed): kind runs its nodes as Docker containers.
Use 'make e2e' to run the same suite on the local control plane (no Docker needed)."
command -v kind >/dev/null 2>&1 || die "kind is not installed (e.g. go install sigs.k8s.io/kind@latest)."
command -v kubectl >/dev/null 2>&1 || die "kubectl is not installed."
HELM="$(command -v helm || true)"
if [[ -z "${HELM}" ]]; then
  HELM="$(hack/controlplane.sh --print-dir)/helm"
  [[ -x "${HELM}" ]] || die "helm is not installed; run 'make controlplane' (builds it) or install helm."
fi

mkdir -p "${WORK}"
export KUBECONFIG="${KUBECONFIG_FILE}"
kc() { kubectl --kubeconfig "${KUBECONFIG_FILE}" "$@"; }

cleanup() {
  local rc=$?
  if [[ ${rc} -ne 0 ]] && kind get clusters 2>/dev/null | grep -qx "${CLUSTER}"; then
    log "failed (exit ${rc}); exporting cluster logs to ${ARTIFACTS}/e2e-kind-logs"
    kind export logs "${ARTIFACTS}/e2e-kind-logs" --name "${CLUSTER}" >/dev/null 2>&1 || true
  fi
  if [[ -z "${E2E_KEEP_CLUSTER:-}" ]]; then
    kind delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
  else
    log "keeping cluster ${CLUSTER} (KUBECONFIG=${KUBECONFIG_FILE})"
  fi
  exit ${rc}
}
trap cleanup EXIT

log "creating kind cluster ${CLUSTER}"
kind delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
kind create cluster --name "${CLUSTER}" --config e2e/kind/kind-config.yaml \
  --kubeconfig "${KUBECONFIG_FILE}" --wait 3m ${KIND_NODE_IMAGE:+--image "${KIND_NODE_IMAGE}"}
# Test pods must land on the fake nodes only: taint the real node(s); the
# operator and KWOK tolerate the taint and select the label.
kc label nodes --all "${REAL_NODE_KEY}=true"
kc taint nodes --all "${REAL_NODE_KEY}=true:NoSchedule"

log "building and loading ${IMG}"
make image IMG="${IMG}"
kind load docker-image "${IMG}" --name "${CLUSTER}"

log "installing KWOK ${KWOK_VERSION} from the Go module cache"
kwok_dir="$(go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "${kwok_dir}/kustomize/kwok" ]] || die "sigs.k8s.io/kwok@${KWOK_VERSION} has no kustomize/kwok in the module cache (${kwok_dir})"
overlay="${WORK}/kwok"
rm -rf "${overlay}" && mkdir -p "${overlay}"
cp -R "${kwok_dir}/kustomize" "${overlay}/kustomize" && chmod -R u+w "${overlay}/kustomize"
cp e2e/kind/kwok-patch.yaml "${overlay}/"
cat >"${overlay}/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- kustomize/kwok
images:
- name: registry.k8s.io/kwok/kwok
  newTag: ${KWOK_VERSION}
patches:
- path: kwok-patch.yaml
EOF
kc apply --server-side -k "${overlay}"
kc -n kube-system rollout status deployment/kwok-controller --timeout=3m
kc wait --for=condition=Established crd/stages.kwok.x-k8s.io --timeout=1m
# The same stages as the local control plane (defaults + annotation-driven pod exit).
kc apply --server-side -f harness/cluster/kwok-stages.yaml

log "installing the chart into ${NAMESPACE}"
"${HELM}" install training-operator charts/training-operator \
  --kubeconfig "${KUBECONFIG_FILE}" --namespace "${NAMESPACE}" --create-namespace \
  --values e2e/kind/values.yaml \
  --set image.repository="${IMG%:*}" --set image.tag="${IMG##*:}" \
  --wait --timeout 5m

log "creating the fake GPU nodes"
kc create -f e2e/kind/nodes.yaml
kc wait --for=condition=Ready node -l type=kwok --timeout=2m

log "running the e2e suite"
E2E_KUBECONFIG="${KUBECONFIG_FILE}" E2E_OPERATOR_NAMESPACE="${NAMESPACE}" ARTIFACTS="${ARTIFACTS}" \
  go test -count=1 -timeout 30m ./e2e/suite/... -args -ginkgo.v
