# training-operator: a drop-in replacement for the Kubeflow Training Operator v1.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

export GOPROXY ?= https://proxy.golang.org
export GOFLAGS ?= -mod=mod
export GOTOOLCHAIN ?= local

CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen
CRD_REF_DOCS := go run github.com/elastic/crd-ref-docs@v0.3.0
GOLANGCI_LINT_VERSION := v2.15.0
CACHE_ROOT := $(or $(TRAINING_OPERATOR_CACHE),$(XDG_CACHE_HOME),$(HOME)/.cache)/training-operator
GOLANGCI_LINT := $(CACHE_ROOT)/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)
# Control-plane binaries (etcd, kube-apiserver, ...) live in a cache outside the clone.
CONTROLPLANE_BIN = $(shell hack/controlplane.sh --print-dir)
TEST_TIMEOUT ?= 40m
TEST_PARALLEL ?= 2

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: ## Regenerate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...

.PHONY: api-docs
api-docs: ## Regenerate the API reference (docs/api-reference.md) from the Go types.
	$(CRD_REF_DOCS) --log-level=ERROR --source-path=./apis --config=hack/api-docs.yaml --renderer=markdown --output-path=docs/api-reference.md

# The operator's RBAC markers; the Kueue integration's are a role of their
# own (config/rbac/kueue), granted only with kueue.integration=operator.
RBAC_PACKAGES = $(shell go list ./controllers/... ./internal/operator/... ./internal/serving/cert/... | grep -v '/controllers/kueue$$' | paste -sd';' -)

.PHONY: manifests
manifests: ## Regenerate CRDs, RBAC and webhook manifests.
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/kubeflow.org/... output:crd:artifacts:config=config/crd/bases
	go run ./hack/crdpatch config/crd/bases
	$(CONTROLLER_GEN) crd paths=./apis/scheduling/... paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:artifacts:config=config/crd/external
	$(CONTROLLER_GEN) rbac:roleName=training-operator paths="$(RBAC_PACKAGES)" output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=training-operator-kueue paths=./controllers/kueue/... output:rbac:artifacts:config=config/rbac/kueue
	@if compgen -G "webhooks/*.go" >/dev/null; then \
		$(CONTROLLER_GEN) webhook paths=./webhooks/... output:webhook:artifacts:config=config/webhook; fi
	$(MAKE) chart-sync dashboard

# A program of its own (hack/dashboard): the operator does not link Grafana's SDK.
.PHONY: dashboard
dashboard: ## Regenerate the chart's Grafana dashboard (charts/training-operator/files/dashboard.json).
	go run ./hack/dashboard -out charts/training-operator/files/dashboard.json

.PHONY: chart-sync
chart-sync: ## Copy CRDs, RBAC rules and webhooks from config/ into the Helm chart and config/default/rbac.
	go run ./hack/chart

.PHONY: fmt
fmt: ## Format the code.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -s -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# test/prometheus is a module of its own: Prometheus' dependencies stay out
# of the operator's go.mod.
PROM_TEST_DIR := test/prometheus

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: vet-prometheus
vet-prometheus: ## go vet of test/prometheus (compiles Prometheus: not part of make test).
	cd $(PROM_TEST_DIR) && go vet ./...

$(GOLANGCI_LINT):
	mkdir -p $(dir $@)
	GOBIN=$(CACHE_ROOT)/tools/gobin-lint go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(CACHE_ROOT)/tools/gobin-lint/golangci-lint $@

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (built once into the cache).
	$(GOLANGCI_LINT) run ./...
	cd $(PROM_TEST_DIR) && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml ./...

.PHONY: verify
verify: generate manifests api-docs fmt-check vet ## Fail when generated files are stale.
	@git add -N . >/dev/null 2>&1 || true
	@if ! git diff --quiet -- apis config charts docs; then \
		echo "generated files are stale; run 'make generate manifests api-docs' and commit:"; \
		git diff --stat -- apis config charts docs; exit 1; fi

.PHONY: build
build: ## Build the operator binary into bin/manager.
	go build -o bin/manager .

# Container image of the operator (Dockerfile: static build on distroless nonroot).
IMG ?= ghcr.io/seed-d8a409e9/training-operator:latest
CONTAINER_TOOL ?= docker

.PHONY: image
image: ## Build the container image $(IMG) (needs Docker).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: controlplane
controlplane: ## Build (once, cached) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, helm.
	hack/controlplane.sh

.PHONY: controlplane-kueue
controlplane-kueue: ## The control plane plus Kueue (once, cached), which only the e2e suite uses.
	hack/controlplane.sh --with-kueue

##@ Tests

# Each suite adds its counts of tests run, skipped and failed to this file;
# make test prints it last. A suite that skips anything on the local control
# plane fails (hack/testsummary).
TEST_SUMMARY := _output/test-summary.txt
GOTESTSUM := go run gotest.tools/gotestsum@v1.13.0 --format pkgname-and-test-fails

.PHONY: test
test: ## Run every test: unit and integration (race detector), the alert rules and dashboard on Prometheus' code, e2e and the quick fault-injection profile.
	@mkdir -p $(dir $(TEST_SUMMARY)) && rm -f $(TEST_SUMMARY)
	@rc=0; $(MAKE) --no-print-directory controlplane verify test-unit test-integration test-prometheus e2e chaos-quick || rc=$$?; \
		go run ./hack/testsummary -summary $(TEST_SUMMARY) -print; exit $$rc

.PHONY: test-unit
test-unit: ## Unit tests (no cluster), under the race detector.
	@mkdir -p $(dir $(TEST_SUMMARY))
	$(GOTESTSUM) --post-run-command "go run ./hack/testsummary -suite unit -summary $(TEST_SUMMARY)" -- \
		-race -count=1 $$(go list ./... | grep -v -e /e2e/suite -e /harness/cluster -e /test/integration)

# kubectl-facing checks run the control plane's kubectl (first in PATH).
.PHONY: test-integration
test-integration: controlplane ## Integration tests on a real local apiserver, under the race detector.
	@mkdir -p $(dir $(TEST_SUMMARY))
	KUBEBUILDER_ASSETS=$(CONTROLPLANE_BIN) PATH=$(CONTROLPLANE_BIN):$$PATH \
		$(GOTESTSUM) --post-run-command "go run ./hack/testsummary -suite integration -summary $(TEST_SUMMARY)" -- \
		-race -count=1 -timeout $(TEST_TIMEOUT) -p $(TEST_PARALLEL) ./test/integration/... ./harness/cluster/...

# The alert rules and dashboard on Prometheus' own code (a module of its
# own, so Prometheus' dependencies stay out of the operator's go.mod).
.PHONY: test-prometheus
test-prometheus: controlplane ## The chart's alert rules (promtool's rule tests) and dashboard queries against the running operator, on Prometheus' code (test/prometheus).
	@mkdir -p $(dir $(TEST_SUMMARY))
	cd $(PROM_TEST_DIR) && KUBEBUILDER_ASSETS=$(CONTROLPLANE_BIN) PATH=$(CONTROLPLANE_BIN):$$PATH \
		$(GOTESTSUM) --post-run-command "go -C $(CURDIR) run ./hack/testsummary -suite prometheus -summary $(TEST_SUMMARY)" -- \
		-race -count=1 -timeout $(TEST_TIMEOUT) ./...

# Parallel ginkgo processes of the e2e suite (they share one cluster and operator).
E2E_PROCS ?= 3
GINKGO := go run github.com/onsi/ginkgo/v2/ginkgo

.PHONY: e2e
e2e: controlplane-kueue build ## End-to-end suite on the local control plane with fake GPU nodes (E2E_PROCS parallel processes).
	@mkdir -p $(dir $(TEST_SUMMARY))
	@rc=0; KUBEBUILDER_ASSETS=$(CONTROLPLANE_BIN) PATH=$(CONTROLPLANE_BIN):$$PATH $(GINKGO) --procs=$(E2E_PROCS) --timeout=$(TEST_TIMEOUT) -v \
		--json-report=e2e-report.json --output-dir=_output ./e2e/suite || rc=$$?; \
		go run ./hack/testsummary -suite e2e -summary $(TEST_SUMMARY) -ginkgo _output/e2e-report.json || rc=1; exit $$rc

# Fuzz targets (webhooks/fuzz_test.go): one per kind, defaulting then
# validation, listed by go test. Not part of make test, which runs only their
# seed corpus.
FUZZ_TARGETS ?= $$(go test -list '^Fuzz' ./webhooks/ | grep '^Fuzz')
FUZZ_TIME ?= 60s
# Go minimizes every new interesting input for up to a minute by default, and
# counts no execs meanwhile: large YAML inputs kept the workers minimizing
# for most of a 60 s run (8-13 execs reported). Short minimization keeps
# them fuzzing.
FUZZ_MINIMIZE_TIME ?= 2s

.PHONY: fuzz
fuzz: ## Fuzz each kind's defaulting and validation for FUZZ_TIME (60s); findings land in webhooks/testdata/fuzz.
	for t in $(FUZZ_TARGETS); do \
		go test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZ_TIME) -fuzzminimizetime=$(FUZZ_MINIMIZE_TIME) ./webhooks/ || exit 1; \
	done

.PHONY: e2e-kind
e2e-kind: ## End-to-end suite on a kind cluster with the Helm chart (needs Docker and kind); see e2e/kind/README.md.
	hack/e2e-kind.sh

.PHONY: bench
bench: controlplane-kueue build ## Benchmarks against the performance targets (the kueue scenarios run Kueue); direct connections, counts from the operator's metrics (BENCH_ARGS="--full", "--scenarios burst,restart", "--compare A B", "--cpu-profile", "--proxy", ...).
	hack/bench.sh $(BENCH_ARGS)

.PHONY: chaos-quick
chaos-quick: controlplane build ## The trimmed fault-injection profile run by make test (60 jobs per scenario).
	@mkdir -p $(dir $(TEST_SUMMARY))
	hack/chaos.sh --quick --summary $(TEST_SUMMARY)

.PHONY: chaos
chaos: controlplane build ## Fault injection: operator kills, leader failover, apiserver/etcd outages (CHAOS_ARGS="--quick", "--seed N", ...).
	hack/chaos.sh $(CHAOS_ARGS)

##@ Run

.PHONY: dev
dev: controlplane build ## Run the operator on a local sandbox cluster until Ctrl-C.
	go run ./hack/sandbox --nodes 4 --crds config/crd/bases --run "MY_POD_NAMESPACE=default bin/manager --config hack/dev/config.yaml --zap-devel"

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
