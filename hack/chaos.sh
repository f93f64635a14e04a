#!/usr/bin/env bash
# Fault injection on the local control plane (make chaos): the operator is
# SIGKILLed, fails over between two leader-elected replicas, and rides out a
# kube-apiserver restart and an etcd freeze while a burst of jobs of all six
# kinds runs, some with a failurePolicy, some suspended and resumed by the
# harness, some whose restart meets a pod hanging terminating on a node the
# harness loses; then invariants are checked
# (outcomes, exact restartCount, whole-job restarts against the pods'
# restart attempts, no duplicate or doubled pods, sticky terminal
# conditions). Arguments go to
# e2e/chaos, e.g.
#   hack/chaos.sh                          # full: 300 jobs per scenario
#   hack/chaos.sh --quick                  # 60 jobs, a few faults (make test)
#   hack/chaos.sh --seed 42 --scenarios kill,failover --jobs 100
# Results: _output/chaos/<timestamp>/{report.md,report.json,operator-*.log,cluster/logs}.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOPROXY="${GOPROXY:-https://proxy.golang.org}" GOFLAGS="${GOFLAGS:--mod=mod}"
KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$(hack/controlplane.sh --print-dir)}"
export KUBEBUILDER_ASSETS
exec go run ./e2e/chaos "$@"
