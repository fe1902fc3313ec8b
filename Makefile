# karpgate's build. `make run` and `make test` are the two commands a newcomer
# needs; everything they depend on is built here from the Go module proxy.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO          ?= go
# Karpenter v1.15's modules need Go 1.26.10 or later; the Go module proxy
# serves this toolchain, and the go command fetches it once and runs it.
# .ci/run and the README export the same.
export GOTOOLCHAIN := go1.27.3
K8S_VERSION := v1.37.2
ASSETS      := $(CURDIR)/bin/k8s/$(K8S_VERSION)
TOOLS       := $(ASSETS)/kube-apiserver $(ASSETS)/etcd $(ASSETS)/kubectl \
               $(ASSETS)/kube-scheduler $(ASSETS)/kube-controller-manager
# The simulated-node stack of `make run` and the Karpenter e2e tests:
# Karpenter's kwok provider and the kwok controller. Every release in
# KARPENTER_VERSIONS (newest first) lands in bin/karpenter/<version>/; the
# e2e tests run on each. The newest, HARNESS_KARPENTER (the release karpgate
# links), is built by hack/harness with kwok, helm and promtool; an older one
# by its own build-only module, hack/karpenter-<version>. `make run` runs
# KARPENTER_VERSION, the newest unless told otherwise (make run
# KARPENTER_VERSION=v1.0.8: the v1beta1 migration story, with conversion
# through karpgate).
KARPENTER_VERSIONS := v1.15.0 v1.0.8
KARPENTER_VERSION ?= v1.15.0
HARNESS_KARPENTER := v1.15.0
ifeq ($(filter $(KARPENTER_VERSION),$(KARPENTER_VERSIONS)),)
$(error KARPENTER_VERSION=$(KARPENTER_VERSION): the local cluster runs one of $(KARPENTER_VERSIONS))
endif
KARPENTER_DIR := $(CURDIR)/bin/karpenter
KARPENTERS  := $(foreach v,$(KARPENTER_VERSIONS),$(KARPENTER_DIR)/$(v)/karpenter)
KWOK_VERSION := v0.8.0
KWOK        := $(CURDIR)/bin/kwok/$(KWOK_VERSION)/kwok
# etcdctl lets tests read etcd itself (which version an object is stored at);
# same module pins as the etcd server, in hack/harness.
ETCDCTL_VERSION := v3.7.0
ETCDCTL     := $(CURDIR)/bin/etcdctl/$(ETCDCTL_VERSION)/etcdctl
HELM_VERSION := v3.22.0
HELM        := $(CURDIR)/bin/helm/$(HELM_VERSION)/helm
GOLANGCI_LINT_VERSION := v2.15.0
# golangci-lint type-checks the standard library of the Go that built it, so
# its folder names that Go too: a toolchain bump builds it again.
GOLANGCI_LINT := $(CURDIR)/bin/golangci-lint/$(GOLANGCI_LINT_VERSION)-$(GOTOOLCHAIN)/golangci-lint
# Prometheus v3.14.0 is module version v0.314.0: hack/harness builds
# promtool from the github.com/prometheus/prometheus requirement of
# karpgate's own go.mod, whose PromQL parser the dashboard test uses.
PROMETHEUS_VERSION := v3.14.0
PROMTOOL    := $(CURDIR)/bin/promtool/$(PROMETHEUS_VERSION)/promtool
# The peers `make bench-peers` compares lint with, pinned by hack/<tool>/go.mod.
CONFTEST_VERSION    := v0.71.1
CONFTEST            := $(CURDIR)/bin/conftest/$(CONFTEST_VERSION)/conftest
KUBECONFORM_VERSION := v0.8.0
KUBECONFORM         := $(CURDIR)/bin/kubeconform/$(KUBECONFORM_VERSION)/kubeconform
# krew, for the release tests: krew-index's validate-krew-manifest checks
# the krew manifest `make release` writes, and krew installs the plugin from
# its archive. Pinned by hack/krew.
KREW_VERSION  := v0.4.4
KREW          := $(CURDIR)/bin/krew/$(KREW_VERSION)/krew
VALIDATE_KREW := $(CURDIR)/bin/krew/$(KREW_VERSION)/validate-krew-manifest
# actionlint checks the GitHub workflows (.github/workflows) and the Action
# (action.yml) offline in make lint. Pinned by hack/actionlint.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT    := $(CURDIR)/bin/actionlint/$(ACTIONLINT_VERSION)/actionlint
# The CNCF distribution registry the release tests push the chart to as an
# OCI artifact and install it from, on loopback. Pinned by hack/registry.
REGISTRY_VERSION := v3.1.2
REGISTRY      := $(CURDIR)/bin/registry/$(REGISTRY_VERSION)/registry
# Karpenter v1.0.8's own budget code for the fidelity tests (budget/fidelity):
# a binary links one version of sigs.k8s.io/karpenter, and karpgate links
# v1.15, so v1.0.8 answers from the build-only module hack/budget-oracle-v1.0.8.
BUDGET_ORACLE_KARPENTER := v1.0.8
BUDGET_ORACLE       := $(CURDIR)/bin/budget-oracle/$(BUDGET_ORACLE_KARPENTER)/budget-oracle
# Extra flags for bench-peers, e.g. BENCH_PEERS_FLAGS='-karpgate-baseline /tmp/karpgate-main -runs 5'.
BENCH_PEERS_FLAGS ?=
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS     := -s -w -X github.com/karpgate/karpgate/internal/buildinfo.Version=$(VERSION) \
               -X github.com/karpgate/karpgate/internal/buildinfo.Commit=$(COMMIT)
# The component version the API server and kubectl report; without it they say v0.0.0.
# Major and minor come from K8S_VERSION (v1.37.2: 1 and 37), so a bump is one line.
K8S_MAJOR   := $(word 1,$(subst ., ,$(K8S_VERSION:v%=%)))
K8S_MINOR   := $(word 2,$(subst ., ,$(K8S_VERSION)))
K8S_LDFLAGS := -s -w \
               -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
               -X k8s.io/component-base/version.gitMajor=$(K8S_MAJOR) \
               -X k8s.io/component-base/version.gitMinor=$(K8S_MINOR) \
               -X k8s.io/client-go/pkg/version.gitVersion=$(K8S_VERSION) \
               -X k8s.io/client-go/pkg/version.gitMajor=$(K8S_MAJOR) \
               -X k8s.io/client-go/pkg/version.gitMinor=$(K8S_MINOR)
FUZZTIME    ?= 10s
TEST_FLAGS  ?=
# The build flags of every go command here: -trimpath (no machine paths in a
# binary) and no DWARF. Go's build cache keys a compiled package by its flags
# (and by CGO_ENABLED, which the builds that share packages set to 0), so one
# set for bin/karpgate, the harness's programs, the control plane, go vet,
# golangci-lint and the tests compiles each package once for all of them;
# release/build.go, the Action's source build and the e2e tests' builds take
# the same (internal/buildinfo.GoBuildFlags; test/layout holds them equal).
# Every binary is linked with -s -w, or -w for a test, which throws the DWARF
# away: -dwarf=false does not make it (a tenth of each compile, and the same
# machine code).
GO_BUILD_FLAGS := -trimpath -gcflags=all=-dwarf=false
# `make test` runs lint and the tests with GO_BUILD_FLAGS, so go vet,
# golangci-lint and every test binary reuse the packages the harness and
# bin/karpgate compiled. `make race` runs the same targets under the race
# detector (RACE=-race): the webhook server, the policy hot reload and the
# controller loop share state across goroutines, and the e2e tests run them in
# process against a real API server. It compiles every package again,
# instrumented (8 minutes of two cores on a fresh machine), and its tests take
# about a third more CPU; CI runs both (.ci/run).
RACE        ?=
TEST_BUILD  = $(strip $(GO_BUILD_FLAGS) $(RACE))
# The race detector needs cgo; bin/karpgate is built without it.
TEST_ENV    = CGO_ENABLED=$(if $(RACE),1,0)
TEST_LINK   := -ldflags=-w
# go test's own vet pass; off under `make test`, whose lint has just run
# go vet with every analyzer (see below).
TEST_VET    :=

export KUBEBUILDER_ASSETS := $(ASSETS)

# Independent targets build side by side: two streams keep both cores busy
# while one of them links, downloads or waits on a test's API server.
MAKEFLAGS += --jobs=2
# The install tests render the Helm chart with this helm.
export KARPGATE_HELM := $(HELM)
# The alert tests run this promtool.
export KARPGATE_PROMTOOL := $(PROMTOOL)
# `karpgate run` and the Karpenter e2e tests run these (internal/devcluster/karpenterstack):
# Karpenter's from the folder of its release under KARPGATE_KARPENTER_DIR.
export KARPGATE_KARPENTER_DIR := $(KARPENTER_DIR)
export KARPGATE_KWOK := $(KWOK)
# The storage migration tests read etcd with this etcdctl.
export KARPGATE_ETCDCTL := $(ETCDCTL)
# The release tests check the krew manifest with these.
export KARPGATE_KREW := $(KREW)
export KARPGATE_VALIDATE_KREW := $(VALIDATE_KREW)
# The chart tests push to and install from this registry.
export KARPGATE_REGISTRY := $(REGISTRY)
# hack/actionworkflow's test checks that actionlint sees the Action's steps.
export KARPGATE_ACTIONLINT := $(ACTIONLINT)
# The budget fidelity tests ask Karpenter v1.0.8's code through this oracle.
export KARPGATE_BUDGET_ORACLE := $(BUDGET_ORACLE)

.PHONY: build tools etcdctl helm promtool budget-oracle golangci-lint actionlint registry pre-commit peers krew release generate manifests release-facts test race unit e2e twins lint bench bench-peers load scale fuzz run clean help

help: ## List the targets.
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

build: bin/karpgate ## Build the karpgate binary into bin/.

# Rebuilt every time: Go's own cache makes an unchanged build instant.
bin/karpgate: FORCE
	CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '$(LDFLAGS)' -o $@ ./cmd/karpgate

FORCE:

tools: $(TOOLS) $(KARPENTERS) $(KWOK) ## Build the control plane, each Karpenter release's kwok provider and kwok from source (once; cached).

# The harness's client programs, from hack/harness, whose modules are
# karpgate's own versions (see its go.mod): the packages they share with
# each other and with bin/karpgate compile once. One recipe builds them one
# after another, each `go build` using every core, so that two of them never
# compile the same package at the same time; each gets the version stamps
# its own release build sets (karpenter_build_info reports Karpenter's).
# -tags remove_all_sd leaves out Prometheus's cloud service discovery (AWS,
# Azure, GCE and a dozen more SDKs), which `promtool test rules` never uses.
HARNESS_TOOLS := $(KARPENTER_DIR)/$(HARNESS_KARPENTER)/karpenter $(KWOK) $(HELM) $(PROMTOOL)
HARNESS_BUILD := cd hack/harness && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -tags remove_all_sd

$(HARNESS_TOOLS) &:
	@mkdir -p $(foreach t,$(HARNESS_TOOLS),$(dir $(t)))
	@echo "building Karpenter $(HARNESS_KARPENTER) with its kwok provider, kwok $(KWOK_VERSION), helm $(HELM_VERSION) and promtool $(PROMETHEUS_VERSION) from source"
	$(HARNESS_BUILD) -ldflags '-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$(HARNESS_KARPENTER)' -o $(KARPENTER_DIR)/$(HARNESS_KARPENTER)/karpenter sigs.k8s.io/karpenter/kwok
	$(HARNESS_BUILD) -ldflags '-s -w' -o $(KWOK) sigs.k8s.io/kwok/cmd/kwok
	$(HARNESS_BUILD) -ldflags '-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)' -o $(HELM) helm.sh/helm/v3/cmd/helm
	$(HARNESS_BUILD) -ldflags '-s -w -X github.com/prometheus/common/version.Version=$(PROMETHEUS_VERSION:v%=%)' -o $(PROMTOOL) github.com/prometheus/prometheus/cmd/promtool

# Built from the module proxy by hack/harness, as the harness's client
# programs are (above): the usual envtest download is not reachable, and
# building pins exactly what we test. Kubernetes 1.37's own modules there are
# karpgate's versions, so the control plane shares about 1,300 compiled
# packages with the harness and bin/karpgate (client-go, the API server
# libraries, gRPC, OpenTelemetry, the standard library): about 300
# CPU-seconds less on a fresh machine than on Kubernetes's exact pins. It
# builds after the harness's programs, not beside them, so that no package
# is compiled by two go commands at once. One `go build` makes the five
# control-plane binaries and etcdctl: one scheduler compiles what they share
# once and overlaps each link with the others' compiles. A major-version
# suffix names a binary by the element before it, so etcd's server comes out
# as "server".
# No file prerequisites on purpose: the folders are named by version, and a
# fresh checkout's new timestamps must not trigger a rebuild of minutes.
K8S_PACKAGES := k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl \
                k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager \
                go.etcd.io/etcd/server/v3 go.etcd.io/etcd/etcdctl/v3

$(TOOLS) $(ETCDCTL) &: | $(HARNESS_TOOLS)
	@mkdir -p $(ASSETS) $(dir $(ETCDCTL)) $(ASSETS)/.build
	@echo "building kube-apiserver, etcd, kubectl, kube-scheduler, kube-controller-manager $(K8S_VERSION) and etcdctl $(ETCDCTL_VERSION) from source (minutes the first time)"
	$(HARNESS_BUILD) -ldflags '$(K8S_LDFLAGS)' -o $(ASSETS)/.build/ $(K8S_PACKAGES)
	mv $(ASSETS)/.build/server $(ASSETS)/etcd
	mv $(ASSETS)/.build/etcdctl $(ETCDCTL)
	mv $(ASSETS)/.build/kube-apiserver $(ASSETS)/.build/kubectl $(ASSETS)/.build/kube-scheduler $(ASSETS)/.build/kube-controller-manager $(ASSETS)/
	rmdir $(ASSETS)/.build

# An older Karpenter release's kwok provider, from its own build-only module
# (the Kubernetes libraries of its time), with its version stamped as its
# Makefile does.
$(KARPENTER_DIR)/%/karpenter:
	@mkdir -p $(dir $@)
	@echo "building Karpenter $* with its kwok provider from source"
	cd hack/karpenter-$* && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$*' -o $@ sigs.k8s.io/karpenter/kwok

krew: $(KREW) ## Build krew and validate-krew-manifest from the Go module proxy (once; cached), for the release tests.

$(KREW) $(VALIDATE_KREW) &:
	@mkdir -p $(dir $(KREW))
	@echo "building krew $(KREW_VERSION) and validate-krew-manifest from source"
	cd hack/krew && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $(dir $(KREW)) sigs.k8s.io/krew/cmd/krew sigs.k8s.io/krew/cmd/validate-krew-manifest

registry: $(REGISTRY) ## Build the CNCF distribution registry from the Go module proxy (once; cached), for the OCI chart tests.

# Upstream's registry command with its in-memory storage driver only
# (hack/registry/main.go says why). hack/registry's go.mod takes the
# harness's versions of the modules they share (OpenTelemetry, gRPC,
# Prometheus's client, golang.org/x), and it builds as the harness does, so
# that those packages, three fifths of its own, compile once.
$(REGISTRY):
	@mkdir -p $(dir $@)
	@echo "building the distribution registry $(REGISTRY_VERSION) from source"
	cd hack/registry && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -tags remove_all_sd -ldflags '-s -w -X github.com/distribution/distribution/v3/version.version=$(REGISTRY_VERSION)' -o $@ .

etcdctl: $(ETCDCTL) ## Build etcdctl from source (once; cached, with the control plane), for the storage migration tests.

helm: $(HELM) ## Build helm from the Go module proxy (once; cached, with the harness's other programs), for the chart tests.

promtool: $(PROMTOOL) ## Build promtool from the Go module proxy (once; cached, with the harness's other programs), for the alert tests.

budget-oracle: $(BUDGET_ORACLE) ## Build the oracle answering with Karpenter v1.0.8's budget code, for the budget fidelity tests.

# Rebuilt every time, as bin/karpgate is: main.go is ours and changes, and
# Go's own cache makes an unchanged build instant.
$(BUDGET_ORACLE): FORCE
	@mkdir -p $(dir $@)
	cd hack/budget-oracle-$(BUDGET_ORACLE_KARPENTER) && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $@ .

golangci-lint: $(GOLANGCI_LINT) ## Build golangci-lint from the Go module proxy (once; cached), for make lint.

$(GOLANGCI_LINT):
	@mkdir -p $(dir $@)
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION) from source"
	CGO_ENABLED=0 GOBIN=$(dir $@) $(GO) install $(GO_BUILD_FLAGS) -ldflags '-s -w -X main.version=$(GOLANGCI_LINT_VERSION)' github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

actionlint: $(ACTIONLINT) ## Build actionlint from the Go module proxy (once; cached), for make lint.

$(ACTIONLINT):
	@mkdir -p $(dir $@)
	@echo "building actionlint $(ACTIONLINT_VERSION) from source"
	cd hack/actionlint && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '-s -w -X github.com/rhysd/actionlint.version=$(ACTIONLINT_VERSION)' -o $@ github.com/rhysd/actionlint/cmd/actionlint

peers: $(CONFTEST) $(KUBECONFORM) ## Build conftest and kubeconform from the Go module proxy (once; cached), for bench-peers.

# Built by the build-only modules in hack/conftest and hack/kubeconform, whose
# go.sum pins every dependency; no file prerequisites, as for the control plane.
$(CONFTEST):
	@mkdir -p $(dir $@)
	@echo "building conftest $(CONFTEST_VERSION) from source"
	cd hack/conftest && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '-s -w -X github.com/open-policy-agent/conftest/internal/version.Version=$(CONFTEST_VERSION)' -o $@ github.com/open-policy-agent/conftest

$(KUBECONFORM):
	@mkdir -p $(dir $@)
	@echo "building kubeconform $(KUBECONFORM_VERSION) from source"
	cd hack/kubeconform && CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '-s -w' -o $@ github.com/yannh/kubeconform/cmd/kubeconform

# The version of a release: the v* tag checked out, or a snapshot named by
# the commit (krew and Helm want semantic versions). Every archive entry and
# SBOM is dated by the commit's time, so a rebuild gives the same bytes.
RELEASE_VERSION   ?= $(shell git describe --tags --exact-match --match 'v*' 2>/dev/null || echo v0.0.0-snapshot.$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown))
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
RELEASE_FLAGS     ?=

release: ## Release artifacts into dist/: archives for linux/darwin amd64/arm64, SBOMs, checksums, Helm chart, schema, krew manifest.
	$(GO) run $(GO_BUILD_FLAGS) ./cmd/karpgate-dev release --version $(RELEASE_VERSION) --commit $(COMMIT) --date $(SOURCE_DATE_EPOCH) --out dist $(RELEASE_FLAGS)

generate: ## Regenerate the deepcopy functions and CRDs of karpgate's API (api/karpgate) from its Go types.
	$(GO) run $(GO_BUILD_FLAGS) ./hack/apigen

manifests: ## Regenerate manifests/ (kustomize base and overlays, monitoring, Helm chart) from the Go types.
	$(GO) run $(GO_BUILD_FLAGS) ./cmd/karpgate-dev manifests --out manifests

release-facts: ## Regenerate internal/karpenter/release/releases.json from the Karpenter modules pinned under hack/releases.
	$(GO) run $(GO_BUILD_FLAGS) ./hack/releasefacts

# `make test` runs two streams side by side (--jobs=2 below): the unit tests
# start as soon as lint is done, while the tools the end-to-end tests need
# are still building; the end-to-end tests start when those are built.
# build is a prerequisite of e2e so that the command the Dockerfile runs is
# one CI runs (test/e2e/dockerfile_test.go keeps them identical).
test: unit e2e twins ## Lint, build, then every test: unit, fuzz seeds, e2e against a real API server, the twins' differential test.

# make test's lint, unit and e2e tests under the race detector (see RACE
# above). The twins' differential test is not among them: it judges on one
# goroutine, where the race detector finds nothing.
race: RACE := -race
race: unit e2e ## make test's lint, unit and e2e tests under the race detector (CI runs it after make test).

# Under `make test` and `make race`, lint comes before either test run: it compiles every
# package's dependencies with $(TEST_BUILD) once, which both runs then reuse, rather
# than two go commands compiling the same packages at the same time.
ifneq ($(filter test race,$(MAKECMDGOALS)),)
unit e2e: lint
# The differential test waits for the unit tests and then takes their
# place beside the end-to-end tests, the longest stream, rather than take
# a job slot they are waiting for.
twins: unit
# lint's go vet runs every analyzer; go test's default vet is a subset of
# them under another cache key, which would go over the same code again.
TEST_VET := -vet=off
endif

# Under make test, make race, make e2e and make run, karpgate's own builds and the registry wait
# for the harness's programs, and karpgate's for the control plane too: they share compiled
# packages (hack/harness/go.mod, hack/registry/go.mod), and two go commands building at once
# would each compile them.
ifneq ($(filter test race e2e run,$(MAKECMDGOALS)),)
bin/karpgate bin/karpgate-dev: | $(HARNESS_TOOLS) $(TOOLS)
$(REGISTRY): | $(HARNESS_TOOLS)
endif
# Under make test, lint's go vet compiles every package as bin/karpgate does, many of them
# the harness's and the control plane's too, so it waits for those builds and bin/karpgate's.
ifneq ($(filter test,$(MAKECMDGOALS)),)
lint: | $(HARNESS_TOOLS) $(TOOLS) bin/karpgate
endif

UNIT_PACKAGES = $$($(GO) list ./... | grep -v -e /test/e2e -e /test/twins)

# A few unit tests (the rollout guard's conflict retries, the stack's kwok
# resync) start the control plane, so it is built before they run. It comes
# last here so that the budget oracle still builds first, before Karpenter
# v1.0.8 (e2e), whose compiled packages it shares.
unit: promtool budget-oracle actionlint $(TOOLS) ## The tests outside test/e2e (RACE=-race: under the race detector); a few start the control plane.
	$(TEST_ENV) $(GO) test $(TEST_BUILD) $(TEST_LINK) $(TEST_VET) -count=1 -timeout 45m $(TEST_FLAGS) $(UNIT_PACKAGES)

# The differential test of the rules and their CEL twins, without the race
# detector: it judges requests on one goroutine, where the race detector
# finds nothing and makes CEL about seven times slower. It compiles as
# bin/karpgate does (CGO_ENABLED=0, GO_BUILD_FLAGS), so it reuses the
# packages that build compiled. TWINS_FLAGS='-args -twins.all' judges
# the whole corpus rather than the sample that exercises every twin.
TWINS_FLAGS ?=
twins: build ## The rules' CEL twins against their Rego, on the verdict corpus and the rule fixtures (no race detector).
	CGO_ENABLED=0 $(GO) test $(GO_BUILD_FLAGS) $(TEST_VET) -count=1 -timeout 60m $(TEST_FLAGS) ./test/twins $(TWINS_FLAGS)

e2e: tools etcdctl helm promtool krew registry pre-commit build ## Only the end-to-end tests (RACE=-race: under the race detector).
	$(TEST_ENV) $(GO) test $(TEST_BUILD) $(TEST_LINK) $(TEST_VET) -count=1 -timeout 45m $(TEST_FLAGS) ./test/e2e/...

# The pre-commit e2e test drives the real pre-commit, a Python program: the
# one client installed from Debian's packages rather than built from Go
# modules. As root (CI, a fresh container) make installs it; otherwise it
# says the command to run.
pre-commit: ## Install the real pre-commit (Debian's package) the pre-commit e2e test drives, if missing.
	@command -v pre-commit >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing pre-commit from Debian's packages"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pre-commit; \
	  else \
	    echo "pre-commit is missing: sudo apt-get install -y pre-commit (or pipx install pre-commit)" >&2; exit 1; \
	  fi; }

# go vet and golangci-lint compile the packages they check with the test
# runs' flags ($(TEST_BUILD); GOFLAGS reaches golangci-lint's go list), so those
# compiled packages serve the tests too instead of being compiled twice.
lint: $(GOLANGCI_LINT) $(ACTIONLINT) ## go vet, gofmt, go.mod tidiness, golangci-lint (.golangci.yml), opa fmt on the built-in rules, actionlint on the workflows and the Action.
	$(TEST_ENV) $(GO) vet $(TEST_BUILD) ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy; run go mod tidy:"; $(GO) mod tidy -diff; exit 1; }
	$(TEST_ENV) GOFLAGS='$(TEST_BUILD)' $(GOLANGCI_LINT) run --allow-parallel-runners ./...
	$(TEST_ENV) $(GO) test $(TEST_BUILD) $(TEST_LINK) -vet=off -count=1 -run '^TestRegoIsFormatted$$' ./policies
	$(ACTIONLINT) .github/workflows/*.yaml
	$(TEST_ENV) $(GO) run $(TEST_BUILD) $(TEST_LINK) ./hack/actionworkflow action.yml | $(ACTIONLINT) -stdin-filename action.yml -

bench: tools ## Benchmarks, with their in-run baselines.
	$(GO) test $(GO_BUILD_FLAGS) -run '^$$' -bench . -benchmem -count=1 ./...

bench-peers: build peers ## karpgate lint, kubeconform and conftest side by side on generated corpora: wall-time ratios, peak memory.
	$(GO) run $(GO_BUILD_FLAGS) ./test/benchpeers -karpgate bin/karpgate -conftest $(CONFTEST) -kubeconform $(KUBECONFORM) $(BENCH_PEERS_FLAGS)

load: ## per install (client CA, trusted source, default; the 512Mi memory plan): 64 clients for 30s alone, then 30s beside every attack: p50/p99, errors, peak memory.
	$(GO) test $(GO_BUILD_FLAGS) -run '^$$' -bench '^BenchmarkLoadUnderAttack$$' -benchtime 1x -count=1 ./webhook/admission -args -load.duration 30s -load.attacks all

scale: tools ## karpgate on 50 NodePools and 1,000 simulated nodes with a real Karpenter: recompute time, cache memory, /status p50/p99.
	$(GO) test $(GO_BUILD_FLAGS) -run '^$$' -bench '^BenchmarkScale$$' -benchtime 1x -count=1 -timeout 60m ./test/e2e/karpenter -args -scale

fuzz: ## Every fuzz target for $(FUZZTIME) each (FUZZTIME=1m make fuzz for longer).
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test $(GO_BUILD_FLAGS) -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$target"; \
	    $(GO) test $(GO_BUILD_FLAGS) -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# karpgate-dev is karpgate plus `run`; the shipped binary (make build, the
# Dockerfile) links no test harness, so `run` lives in its own command.
bin/karpgate-dev: FORCE
	CGO_ENABLED=0 $(GO) build $(GO_BUILD_FLAGS) -ldflags '$(LDFLAGS)' -o $@ ./cmd/karpgate-dev

# RUN_FLAGS=--karpenter=false: the CRDs-only cluster, without Karpenter.
RUN_FLAGS   ?=

# Only the release it runs: a first `make run` builds one Karpenter, not all.
run: $(TOOLS) $(KARPENTER_DIR)/$(KARPENTER_VERSION)/karpenter $(KWOK) bin/karpgate-dev ## A local cluster with karpgate and Karpenter (KARPENTER_VERSION, default the newest) on simulated nodes, until Ctrl-C (RUN_FLAGS=--karpenter=false: CRDs only).
	bin/karpgate-dev run --assets $(ASSETS) --kubeconfig $(CURDIR)/bin/run/kubeconfig --karpenter-version $(KARPENTER_VERSION) $(RUN_FLAGS)

clean: ## Remove build output (keeps the built control plane binaries).
	rm -f bin/karpgate bin/karpgate-dev
