#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok, helm, kueue) from the Go module proxy into a cache folder
# kept outside the clone, so fresh clones on the same machine reuse it.
# Kueue (about 7 minutes to compile cold on 2 cores, its modules already downloaded) is built only with --with-kueue,
# for the e2e suite and make bench, its only users.
# Usage: hack/controlplane.sh [--print-dir] [--with-kueue]
set -euo pipefail

ETCD_VERSION=v3.6.16
K8S_VERSION=v1.37.2
K8S_STAGING_VERSION=v0.37.2
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.22.0
KUEUE_VERSION=v0.17.0

key="etcd-${ETCD_VERSION}_k8s-${K8S_VERSION}_kwok-${KWOK_VERSION}_helm-${HELM_VERSION}"
cache_root="${TRAINING_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/training-operator}"
dir="${cache_root}/controlplane/${key}"
bin="${dir}/bin"
# Kueue lives in a sibling folder keyed by its own version (linked into bin), so
# bumping it does not rebuild kubernetes and adding it did not invalidate bin.
kueue_dir="${cache_root}/controlplane/kueue-${KUEUE_VERSION}"

with_kueue=false
for arg in "$@"; do
  case "${arg}" in
    --print-dir) echo "${bin}"; exit 0 ;;
    --with-kueue) with_kueue=true ;;
    *) echo "usage: $0 [--print-dir] [--with-kueue]" >&2; exit 2 ;;
  esac
done

# No ",direct": a refused module must fail fast instead of dialling VCS hosts.
export GOPROXY="${GOPROXY_CONTROLPLANE:-https://proxy.golang.org}"
export GOFLAGS=-mod=mod
export GOTOOLCHAIN=local
mkdir -p "${bin}"
log() { echo "[controlplane] $(date +%H:%M:%S) $*" >&2; }

have() {
  if [[ -x "${bin}/$1" && -f "${bin}/.$1.ok" ]]; then
    log "$1: cached"
    return 0
  fi
  return 1
}
mark() { touch "${bin}/.$1.ok"; }

# step runs a build step, saying every minute that it is still at work (a
# cold build is long and go prints nothing while it compiles) and how long
# it took.
step() {
  local what="$1"; shift
  local t0; t0=$(date +%s)
  ( while sleep 60; do log "${what}: still building ($(( $(date +%s) - t0 ))s)"; done ) &
  local ticker=$!
  local rc=0
  "$@" || rc=$?
  kill "${ticker}" 2>/dev/null || true
  wait "${ticker}" 2>/dev/null || true
  if (( rc == 0 )); then
    log "${what}: built in $(( $(date +%s) - t0 ))s"
  fi
  return "${rc}"
}

build_etcd() {
  have etcd && return 0
  log "building etcd ${ETCD_VERSION}"
  local w="${dir}/src/etcd"
  mkdir -p "${w}"
  cat > "${w}/go.mod" <<EOM
module local/etcdwrap

go 1.26.0

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
EOM
  cat > "${w}/tools.go" <<'EOM'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
EOM
  step "etcd ${ETCD_VERSION}" bash -c 'cd "$1" && go mod tidy && go build -trimpath -ldflags="-s -w" -o "$2/etcd" go.etcd.io/etcd/server/v3' _ "${w}" "${bin}"
  mark etcd
}

# k8s_gomod prints a go.mod named local/$1 that requires kubernetes with its
# staging modules pinned.
k8s_gomod() {
  {
    echo "module local/$1"
    echo
    echo "go 1.26.0"
    echo
    echo "godebug default=go1.26"
    echo
    echo "require k8s.io/kubernetes ${K8S_VERSION}"
    echo
    echo "replace ("
    for r in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
      cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
      cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice \
      externaljwt kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl \
      kubelet metrics mount-utils pod-security-admission sample-apiserver streaming; do
      echo "	k8s.io/${r} => k8s.io/${r} ${K8S_STAGING_VERSION}"
    done
    echo ")"
  }
}

# k8s_ldflags stamps the version the binaries report (kubectl version, the
# apiserver's /version).
k8s_ldflags() {
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  local ld="-s -w"
  for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ld+=" -X ${p}.gitVersion=${K8S_VERSION} -X ${p}.gitMajor=1 -X ${p}.gitMinor=${minor}"
    ld+=" -X ${p}.gitTreeState=clean -X ${p}.buildDate=2026-01-01T00:00:00Z"
  done
  echo "${ld}"
}

build_k8s() {
  have kube-apiserver && have kube-controller-manager && have kube-scheduler && return 0
  log "building kubernetes ${K8S_VERSION}"
  local w="${dir}/src/k8s"
  mkdir -p "${w}"
  k8s_gomod k8swrap > "${w}/go.mod"
  cat > "${w}/tools.go" <<'EOM'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
EOM
  local ld; ld="$(k8s_ldflags)"
  step "kubernetes ${K8S_VERSION} (kube-apiserver, kube-controller-manager, kube-scheduler; the longest step)" \
    bash -c 'cd "$1" && go mod tidy && go build -trimpath -ldflags="$2" -o "$3/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler' _ "${w}" "${ld}" "${bin}"
  mark kube-apiserver; mark kube-controller-manager; mark kube-scheduler
}

# kubectl, which the tests' kubectl-facing checks run (make test puts this bin
# first in PATH): built here so that no check is skipped for want of it.
build_kubectl() {
  have kubectl && return 0
  log "building kubectl ${K8S_VERSION}"
  local w="${dir}/src/kubectl"
  mkdir -p "${w}"
  k8s_gomod kubectlwrap > "${w}/go.mod"
  cat > "${w}/tools.go" <<'EOM'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
EOM
  local ld; ld="$(k8s_ldflags)"
  step "kubectl ${K8S_VERSION}" bash -c 'cd "$1" && go mod tidy && go build -trimpath -ldflags="$2" -o "$3/kubectl" k8s.io/kubernetes/cmd/kubectl' _ "${w}" "${ld}" "${bin}"
  mark kubectl
}

# kwok from its module source with hack/kwok-uid.patch applied: like a
# kubelet it deletes and patches a pod by UID. Unpatched, it acts by name on
# stale events (its queue lags under load) and deleted or patched the pod
# that had since taken the name: a replacement killed in a loop (make chaos:
# 21 deletions of one replica in a minute) or a whole-job restart nobody
# asked for. The marker's name changes with the patch, so a cached unpatched
# kwok is rebuilt (about a minute).
kwok_patch="$(cd "$(dirname "$0")" && pwd)/kwok-uid.patch"
kwok_marker="kwok-$(sha256sum "${kwok_patch}" | cut -c1-12)"
build_kwok() {
  if [[ -x "${bin}/kwok" && -f "${bin}/.${kwok_marker}.ok" ]]; then
    log "kwok: cached"
    return 0
  fi
  log "building kwok ${KWOK_VERSION} with hack/kwok-uid.patch"
  local w="${dir}/src/kwok"
  step "kwok ${KWOK_VERSION}" bash -c '
    set -euo pipefail
    src="$(go mod download -json "sigs.k8s.io/kwok@$1" | sed -n "s/^[[:space:]]*\"Dir\": \"\(.*\)\",\{0,1\}$/\1/p")"
    [[ -d "${src}" ]] || { echo "kwok $1: module source not found" >&2; exit 1; }
    rm -rf "$2" && mkdir -p "$(dirname "$2")" && cp -r "${src}" "$2" && chmod -R u+w "$2"
    cd "$2" && patch -s -p1 < "$3"
    go build -trimpath -ldflags="-s -w" -o "$4/kwok" ./cmd/kwok' _ "${KWOK_VERSION}" "${w}" "${kwok_patch}" "${bin}"
  rm -f "${bin}"/.kwok*.ok
  mark "${kwok_marker}"
}

build_helm() {
  have helm && return 0
  log "building helm ${HELM_VERSION}"
  local ld="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
  for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ld+=" -X ${p}.k8sVersionMajor=1 -X ${p}.k8sVersionMinor=37"
  done
  step "helm ${HELM_VERSION}" env GOBIN="${bin}" go install -trimpath -ldflags="${ld}" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  mark helm
}

# The e2e suite runs kueue out of cluster and installs its CRDs and webhooks
# itself, so the manifests shipped in the module are kept next to the binary.
build_kueue() {
  if ! [[ -x "${kueue_dir}/bin/kueue" && -f "${kueue_dir}/bin/.kueue.ok" ]]; then
    log "building kueue ${KUEUE_VERSION}"
    mkdir -p "${kueue_dir}/bin"
    step "kueue ${KUEUE_VERSION}" env GOBIN="${kueue_dir}/bin" go install -trimpath \
      -ldflags="-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=${KUEUE_VERSION}" \
      "sigs.k8s.io/kueue/cmd/kueue@${KUEUE_VERSION}"
    local src
    # Outside our module, so the download cannot touch its go.mod.
    src="$(cd "${kueue_dir}" && go mod download -json "sigs.k8s.io/kueue@${KUEUE_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
    rm -rf "${kueue_dir}/manifests"
    mkdir -p "${kueue_dir}/manifests/crd"
    cp "${src}"/config/components/crd/bases/*.yaml "${kueue_dir}/manifests/crd/"
    cp "${src}/config/components/webhook/manifests.yaml" "${kueue_dir}/manifests/webhook.yaml"
    chmod -R u+w "${kueue_dir}/manifests"
    touch "${kueue_dir}/bin/.kueue.ok"
  else
    log "kueue: cached"
  fi
  ln -sfn "${kueue_dir}/bin/kueue" "${bin}/kueue"
  ln -sfn "${kueue_dir}/manifests" "${bin}/kueue-manifests"
}

# One writer at a time: concurrent callers wait for the first build.
exec 9>"${dir}/.lock"
flock 9
start=$(date +%s)
build_etcd
build_k8s
build_kubectl
build_kwok
build_helm
if [[ "${with_kueue}" == true ]]; then
  build_kueue
fi
log "control plane ready in ${bin} ($(( $(date +%s) - start ))s)"
echo "${bin}"
