# eval-operator. `make help` lists the targets.

CHART ?= charts/eval-operator
# The release version, from one place: the chart's appVersion. It is the
# default image tag, and the manager's --version and evaloperator_build_info.
VERSION ?= $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' $(CHART)/Chart.yaml)
# The source revision; Go's own VCS stamp when empty (a plain go build).
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BUILDINFO = github.com/eval-operator/eval-operator/internal/buildinfo
LDFLAGS ?= -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).revision=$(REVISION)
IMG ?= ghcr.io/eval-operator/eval-operator:$(VERSION)

# Tool versions, pinned. Every tool installs into bin/ from the Go module proxy.
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
GINKGO_VERSION ?= $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2)
HELM_VERSION ?= v3.19.0
KUSTOMIZE_VERSION ?= v5.8.2
SETUP_ENVTEST_VERSION ?= v0.25.1
CRD_REF_DOCS_VERSION ?= v0.3.0
CYCLONEDX_GOMOD_VERSION ?= v1.10.0
# The control plane the tests run against; keep in step with hack/envtest/go.mod.
ENVTEST_K8S_VERSION ?= 1.36.3
# The oldest Kubernetes the CRDs support (docs/operating.md), which
# test-oldest runs the CEL suite against: the version hack/envtest-oldest pins.
ENVTEST_OLDEST_K8S_VERSION := $(shell sed -n 's/^[[:space:]]*k8s\.io\/kubernetes v\([0-9.]*\).*/\1/p' hack/envtest-oldest/go.mod)

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
GINKGO ?= $(LOCALBIN)/ginkgo
HELM ?= $(LOCALBIN)/helm
KUSTOMIZE ?= $(LOCALBIN)/kustomize
SETUP_ENVTEST ?= $(LOCALBIN)/setup-envtest
CRD_REF_DOCS ?= $(LOCALBIN)/crd-ref-docs
CYCLONEDX_GOMOD ?= $(LOCALBIN)/cyclonedx-gomod
# promtool: Debian's prometheus package where apt is present (seconds), else
# built from the prometheus module pinned in hack/promtool/go.mod (minutes).
PROMTOOL ?= $(LOCALBIN)/promtool
PROMQL_NAMES ?= $(LOCALBIN)/promql-names
ENVTEST_DIR ?= $(LOCALBIN)/k8s
ENVTEST_OLDEST_DIR ?= $(LOCALBIN)/k8s-$(ENVTEST_OLDEST_K8S_VERSION)

# Test suites find the control plane here (sigs.k8s.io/controller-runtime/pkg/envtest).
export KUBEBUILDER_ASSETS ?= $(ENVTEST_DIR)

GINKGO_FLAGS ?= --timeout=30m --poll-progress-after=120s

comma := ,

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
# allowDangerousTypes: temperature and passingThreshold are JSON numbers in the
# service's API, so they are numbers (float64) in the CRD too.
manifests: controller-gen ## Generate the CRDs and RBAC from the Go markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=true webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	rm -f charts/eval-operator/files/crds/*.yaml
	cp config/crd/bases/*.yaml charts/eval-operator/files/crds/
	cp config/rbac/role.yaml charts/eval-operator/files/manager-role.yaml
	cp config/rest/role.yaml charts/eval-operator/files/rest-role.yaml
	hack/argocd-health.sh
	hack/monitoring.sh
	go run ./hack/kindlists

.PHONY: generate
generate: controller-gen ## Generate the DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: docs
docs: crd-ref-docs ## Generate the API reference (docs/reference/api.md) from the Go types and the flag reference (docs/reference/flags.md) from the manager's flags.
	$(CRD_REF_DOCS) --config hack/docs/crd-ref-docs.yaml --source-path api/v1alpha1 --renderer markdown \
	  --output-path docs/reference/api.md --log-level ERROR
	UPDATE_DOCS=1 go test ./cmd -run '^TestFlagReferenceIsCurrent$$' -count=1

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint, on hack/image (a module of its own) too.
	$(GOLANGCI_LINT) run
	cd hack/image && $(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	$(GOLANGCI_LINT) run --fix

# Flux's source CRDs, for the control planes of the tests of a Testset's
# sourceRef: generated from Flux's Go API module at the version go.mod names.
FLUX_CRDS ?= $(LOCALBIN)/flux-crds
.PHONY: flux-crds
flux-crds: controller-gen ## Generate Flux's source CRDs (GitRepository, OCIRepository, Bucket) into bin/flux-crds from Flux's Go API module.
	@mkdir -p $(FLUX_CRDS)
	$(CONTROLLER_GEN) crd paths=github.com/fluxcd/source-controller/api/v1 output:crd:dir=$(FLUX_CRDS)

.PHONY: test
test: manifests generate envtest flux-crds ginkgo helm kustomize test-rules ## Run the unit and envtest suites (CEL, controllers, REST server), the alerting rule tests and the short reliability runs.
	$(GINKGO) $(GINKGO_FLAGS) -r --randomize-all --race --cover --coverprofile=cover.out ./api/... ./cmd/... ./internal/... ./hack/dev/... ./hack/kindlists/... ./test/framework/...
	@# The reliability suite drives manager binaries (built without -race) with
	@# load from the test process; the race detector would make that load
	@# generator several times slower and starve the manager it measures.
	$(GINKGO) $(GINKGO_FLAGS) --randomize-all ./test/reliability

.PHONY: test-rules
test-rules: promtool ## Check the alerting rules and run their unit tests (promtool test rules).
	$(PROMTOOL) check rules config/prometheus/rules.yaml
	$(PROMTOOL) test rules config/prometheus/rules_test.yaml

.PHONY: test-oldest
test-oldest: manifests generate envtest-oldest ginkgo ## Install the CRDs into the oldest supported kube-apiserver (built from module sources into bin/k8s-<version>) and run the CEL validation suite against it.
	KUBEBUILDER_ASSETS=$(ENVTEST_OLDEST_DIR) $(GINKGO) $(GINKGO_FLAGS) --randomize-all ./api/v1alpha1

##@ Benchmarks and reliability

# BENCH_ARGS are the benchmark's flags: -n, -c (MaxConcurrentReconciles values),
# -latency, -rss-n, -rest-n, -rest-c, -out (see test/bench/bench_test.go).
BENCH_ARGS ?=
BENCH_LONG_ARGS ?= -n=10000 -c=16 -rest-n=1000
# How long test-reliability fuzzes the REST server's request decoder.
RELIABILITY_FUZZTIME ?= 3m
# How long test-reliability's hostile tenant floods the REST server (make
# test runs it for 20 seconds).
RELIABILITY_HOSTILE_DURATION ?= 10m

.PHONY: bench
bench: manifests generate envtest flux-crds ## Measure the operator against the API-server and upstream floors (N=1000; a few minutes). Not part of test.
	go test -tags=bench -run '^TestBench$$' -v -count=1 -timeout=30m ./test/bench -args $(BENCH_ARGS)

.PHONY: bench-long
bench-long: manifests generate envtest flux-crds ## The benchmark with N=10000, including the manager binary's memory with 10,000 Metrics.
	go test -tags=bench -run '^TestBench$$' -v -count=1 -timeout=90m ./test/bench -args $(BENCH_LONG_ARGS)

.PHONY: test-reliability
test-reliability: manifests generate envtest ginkgo helm ## Kill and stop injection, fault soak, secret hygiene, a hostile tenant and fuzzing: the long versions (~18 min).
	RELIABILITY_LONG=1 RELIABILITY_FUZZTIME=$(RELIABILITY_FUZZTIME) RELIABILITY_HOSTILE_DURATION=$(RELIABILITY_HOSTILE_DURATION) \
	  $(GINKGO) $(GINKGO_FLAGS) ./test/reliability

##@ Build

.PHONY: build
build: manifests generate ## Build the manager and the kubectl-eval plugin into bin/.
	go build -trimpath -ldflags="$(LDFLAGS)" -o $(LOCALBIN)/manager ./cmd
	go build -trimpath -ldflags="$(LDFLAGS)" -o $(LOCALBIN)/kubectl-eval ./cmd/kubectl-eval

.PHONY: version
version: ## Print the release version (the chart's appVersion).
	@echo $(VERSION)

.PHONY: install-plugin
install-plugin: ## Install the kubectl-eval plugin into $GOBIN (on PATH, kubectl runs it as `kubectl eval`).
	go install -trimpath ./cmd/kubectl-eval

.PHONY: run
run: manifests generate ## Run the manager against the current kubeconfig (standalone mode unless ARGS sets --api-url).
	go run ./cmd --serve-api=:8082 $(ARGS)

.PHONY: dev
# exec: Ctrl-C and make's SIGTERM reach hack/dev itself, which stops the
# manager and the control plane before it exits.
# The addresses the manager listens on: move one when its port is taken,
# e.g. make dev DEV_API_ADDR=127.0.0.1:18082.
DEV_API_ADDR ?= 127.0.0.1:8082
DEV_PROBE_ADDR ?= 127.0.0.1:8081
DEV_METRICS_ADDR ?= 127.0.0.1:8080
dev: dev-notice build envtest ## Run a local control plane and the manager (standalone, REST on 127.0.0.1:8082) with a demo key; Ctrl-C stops all.
	go build -o $(LOCALBIN)/dev ./hack/dev
	exec $(LOCALBIN)/dev --manager=$(LOCALBIN)/manager --serve-api=$(DEV_API_ADDR) \
		--health-probe-bind-address=$(DEV_PROBE_ADDR) --metrics-bind-address=$(DEV_METRICS_ADDR) -- $(ARGS)

.PHONY: dev-notice
dev-notice:
	@echo "make dev: building the manager, the tools and the local control plane into bin/ first."
	@echo "  The first time this downloads the Go modules (go: downloading ... lines) and may build"
	@echo "  kube-apiserver and etcd from source: 5 to 25 minutes, once. Later runs start in seconds."

.PHONY: test-e2e
test-e2e: manifests generate envtest ginkgo promtool ## Run the built manager against a local control plane and a fake upstream with faults (test/e2e).
	PROMQL_NAMES=$(PROMQL_NAMES) $(GINKGO) $(GINKGO_FLAGS) --tags=e2e ./test/e2e

.PHONY: cluster
# The real node runs IMG as built by make image; the chart's default image
# name and tag are the same, and its IfNotPresent pull policy finds it there.
cluster: image ## Start a real one-node cluster on this machine (root; containerd, runc, CNI from Debian; Kubernetes built from module sources) with IMG imported; KUBECONFIG=.cluster/kubeconfig.
	hack/cluster/cluster.sh up
	hack/cluster/cluster.sh load $(IMAGE_DIR)/eval-operator.tar

# Argo Rollouts' controller and CRDs, built from the module source pinned in
# hack/argo-rollouts/go.mod (no release binary can be downloaded here).
ARGO_ROLLOUTS ?= $(LOCALBIN)/argo-rollouts

.PHONY: argo-rollouts
argo-rollouts: ## Build Argo Rollouts' controller and its CRDs into bin/argo-rollouts (for make test-cluster's canary).
	hack/argo-rollouts/build.sh $(ARGO_ROLLOUTS)

.PHONY: cluster-down
cluster-down: ## Stop the real node and undo every change it made to the machine (processes, mounts, bridge, rules, cgroups, sysctls).
	hack/cluster/cluster.sh down

.PHONY: test-cluster
test-cluster: ginkgo helm kustomize argo-rollouts ## Run the operator as pods on the real node (make cluster first): installs, probes, RBAC, the REST Service, failover, rolling update, Argo Rollouts canaries gated on evaluation (standalone, against a remote service, through the web provider, and the example GitOps loop), uninstall.
	IMG=$(IMG) HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) KUBECTL=$(KUBECTL) CLUSTER_KUBECONFIG=$(CURDIR)/.cluster/kubeconfig \
	  ARGO_ROLLOUTS=$(ARGO_ROLLOUTS) \
	  $(GINKGO) $(GINKGO_FLAGS) --tags=cluster ./test/cluster

##@ Deployment

CONTAINER_TOOL ?= docker
KUBECTL ?= kubectl
# Platforms docker-buildx builds for.
PLATFORMS ?= linux/amd64,linux/arm64
# ignore-not-found=true makes uninstall and undeploy succeed when already gone.
ignore-not-found ?= false
# helm-lint also renders the chart with every option on.
HELM_ALL_OPTIONS ?= replicaCount=2,serveApi.enabled=true,tls.certSecret=eval-operator-api-tls,networkPolicy.enabled=true,serviceMonitor.enabled=true,apiUrl=https://evaluation.example.com/api/v2,defaultApiKeySecret=eval-api-key,certManager.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true

# make image builds IMG without a container engine (hack/image): static
# binaries for IMAGE_PLATFORMS, cross-compiled (GOOS/GOARCH, no emulation),
# with a CycloneDX SBOM of each (cyclonedx-gomod, also a release artifact in
# IMAGE_DIR/bin/<os>_<arch>/), and CA_CERTS, on no base image.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_DIR ?= dist/image
# The image's CA bundle: Debian's ca-certificates package at a pinned version
# and digest (hack/debian-ca-certs.sh), not the build machine's /etc/ssl,
# which may hold the machine's own CAs. Set CA_CERTS and CA_CERTS_ORIGIN to
# use another bundle.
CA_CERTS_DEB_VERSION ?= 20230311+deb12u1
CA_CERTS_DEB_SHA256 ?= 0d5f444f594e48c1e16a41d8fc628a09b24c658916a1274025c2330f2a802bed
CA_CERTS ?= $(LOCALBIN)/ca-certificates-$(CA_CERTS_DEB_VERSION).crt
CA_CERTS_ORIGIN ?= Debian ca-certificates $(CA_CERTS_DEB_VERSION), sha256 $(CA_CERTS_DEB_SHA256)
IMAGE_TOOL ?= $(LOCALBIN)/image
# The image's OCI annotations: where it comes from.
IMAGE_SOURCE ?= https://github.com/eval-operator/eval-operator
IMAGE_ORIGIN = --source=$(IMAGE_SOURCE) --revision=$(REVISION) --version=$(VERSION)

.PHONY: image
image: image-tool cyclonedx-gomod $(CA_CERTS) ## Build IMG for IMAGE_PLATFORMS without Docker: OCI layout dist/image/oci, tarball dist/image/eval-operator.tar, SBOMs dist/image/bin/*/*.cdx.json.
	@for p in $(subst $(comma), ,$(IMAGE_PLATFORMS)); do \
		os=$${p%/*}; arch=$${p#*/}; out=$(IMAGE_DIR)/bin/$${os}_$${arch}; \
		echo "go build $$p"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags="$(LDFLAGS)" -o $$out/manager ./cmd; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags="$(LDFLAGS)" -o $$out/kubectl-eval ./cmd/kubectl-eval; \
		for b in manager kubectl-eval; do \
			GOOS=$$os GOARCH=$$arch $(CYCLONEDX_GOMOD) bin -json -noserial -notimestamp -version $(VERSION) \
			  -output $$out/$$b.cdx.json $$out/$$b; \
		done; \
	done
	$(IMAGE_TOOL) build --ref=$(IMG) --platforms=$(IMAGE_PLATFORMS) --ca-certs=$(CA_CERTS) \
	  --ca-certs-origin="$(CA_CERTS_ORIGIN)" $(IMAGE_ORIGIN) \
	  --bin-dir=$(IMAGE_DIR)/bin --layout=$(IMAGE_DIR)/oci --tarball=$(IMAGE_DIR)/eval-operator.tar

$(LOCALBIN)/ca-certificates-$(CA_CERTS_DEB_VERSION).crt: hack/debian-ca-certs.sh | $(LOCALBIN)
	hack/debian-ca-certs.sh $(CA_CERTS_DEB_VERSION) $(CA_CERTS_DEB_SHA256) $@

# With podman on the machine, image-check also loads the tarball (which must
# work) and runs the image; a sandbox that cannot run containers at all
# (e.g. no permission to set rlimits) is reported, not failed.
.PHONY: image-check
image-check: image ## Check the image: user, entrypoint, no shell, static binaries, both platforms, each binary's SBOM, the pinned CA bundle, OCI source/revision/version annotations, /manager --help, pushable.
	$(IMAGE_TOOL) check --ref=$(IMG) --platforms=$(IMAGE_PLATFORMS) --ca-certs=$(CA_CERTS) $(IMAGE_ORIGIN) \
	  --layout=$(IMAGE_DIR)/oci --tarball=$(IMAGE_DIR)/eval-operator.tar
	@if ! command -v podman >/dev/null; then echo "podman not installed: the image itself was not run"; exit 0; fi; \
	podman load -q -i $(IMAGE_DIR)/eval-operator.tar; \
	if out=$$(podman run --rm --read-only $(IMG) --help 2>&1); then \
		grep -q -- -api-url <<<"$$out" || { echo "$$out"; echo "podman: /manager --help printed no usage" >&2; exit 1; }; \
		echo "ok podman: the image runs /manager --help with a read-only root"; \
	elif grep -q 'OCI permission denied\|OCI runtime error\|cannot set up namespace\|newuidmap' <<<"$$out"; then \
		echo "podman cannot run containers on this machine, the image was not run: $$out"; \
	else echo "$$out"; exit 1; fi

# make chart packages the chart to run IMG: its repository in values.yaml,
# its tag as the appVersion (the default image tag).
CHART_VERSION ?= $(shell sed -n 's/^version: //p' $(CHART)/Chart.yaml)
IMG_TAG = $(lastword $(subst :, ,$(IMG)))
IMG_REPO = $(patsubst %:$(IMG_TAG),%,$(IMG))

.PHONY: chart
chart: manifests helm ## Package the chart, running IMG, as dist/eval-operator-CHART_VERSION.tgz.
	rm -rf dist/chart && mkdir -p dist/chart && cp -r $(CHART) dist/chart/
	sed -i '0,/^  repository: /s|^  repository: .*|  repository: $(IMG_REPO)|' dist/chart/eval-operator/values.yaml
	$(HELM) package dist/chart/eval-operator --version $(CHART_VERSION) --app-version $(IMG_TAG) -d dist
	$(HELM) template eval-operator dist/eval-operator-$(CHART_VERSION).tgz | grep -q 'image: $(IMG)$$' || \
		{ echo "dist/eval-operator-$(CHART_VERSION).tgz does not run $(IMG)" >&2; exit 1; }

.PHONY: docker-build
docker-build: ## Build the manager image IMG.
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: docker-buildx
docker-buildx: ## Build and push IMG for every platform in PLATFORMS.
	$(CONTAINER_TOOL) buildx build --platform=$(PLATFORMS) --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --push -t $(IMG) .

# dist/overlay sets the manager image to IMG on top of config/default, so a
# build never edits the committed config/.
.PHONY: image-overlay
image-overlay: kustomize
	rm -rf dist/overlay && mkdir -p dist/overlay
	cd dist/overlay && $(KUSTOMIZE) create --resources ../../config/default && \
	$(KUSTOMIZE) edit add patch --kind Deployment \
	  --patch '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "$(IMG)"}]'

.PHONY: build-installer
build-installer: manifests image-overlay ## Render dist/install.yaml (CRDs, RBAC, manager with IMG) and dist/crds.yaml.
	$(KUSTOMIZE) build dist/overlay > dist/install.yaml
	$(KUSTOMIZE) build config/crd > dist/crds.yaml

.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs, and with them every Metric and deletion object (remote Metrics stay).
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests image-overlay ## Deploy the operator with image IMG to the cluster of the current kubeconfig.
	$(KUSTOMIZE) build dist/overlay | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: kustomize ## Remove what deploy installed, CRDs included.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: helm-lint
helm-lint: helm ## Lint and render the Helm chart (defaults and every option on); check its CRDs and RBAC match config/.
	diff -r config/crd/bases $(CHART)/files/crds
	diff config/rbac/role.yaml $(CHART)/files/manager-role.yaml
	diff config/rest/role.yaml $(CHART)/files/rest-role.yaml
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set $(HELM_ALL_OPTIONS)
	$(HELM) template eval-operator $(CHART) --namespace eval-operator-system > /dev/null
	$(HELM) template eval-operator $(CHART) --namespace eval-operator-system --set $(HELM_ALL_OPTIONS) > /dev/null

.PHONY: test-packaging
test-packaging: manifests envtest ginkgo helm kustomize ## Apply the kustomize and Helm renders to a real API server (envtest); upgrade from chart 0.1.0 (from git history).
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) KUBECTL=$(KUBECTL) $(GINKGO) $(GINKGO_FLAGS) --tags=packaging ./test/packaging

##@ Dependencies

.PHONY: envtest
envtest: $(ENVTEST_DIR)/kube-apiserver ## Provide kube-apiserver and etcd in bin/k8s (download, else build from module sources).

# setup-envtest downloads release binaries where the network allows; offline
# machines with only a module proxy build the same version from source.
$(ENVTEST_DIR)/kube-apiserver: hack/envtest/go.mod hack/envtest/build.sh
	@mkdir -p $(ENVTEST_DIR)
	@if [ -z "$$ENVTEST_BUILD_FROM_SOURCE" ] && $(MAKE) -s setup-envtest >/dev/null 2>&1 && \
	   dir=$$(timeout 120 $(SETUP_ENVTEST) use $(ENVTEST_K8S_VERSION) --bin-dir $(LOCALBIN)/envtest-download -p path 2>/dev/null); then \
		cp "$$dir"/kube-apiserver "$$dir"/etcd $(ENVTEST_DIR)/; \
	else \
		hack/envtest/build.sh $(ENVTEST_DIR); \
	fi
	@touch $@

.PHONY: envtest-oldest
envtest-oldest: $(ENVTEST_OLDEST_DIR)/kube-apiserver ## Build the oldest supported kube-apiserver and its etcd into bin/k8s-<version> from module sources (hack/envtest-oldest).

$(ENVTEST_OLDEST_DIR)/kube-apiserver: hack/envtest-oldest/go.mod hack/envtest/build.sh
	MODULE=hack/envtest-oldest hack/envtest/build.sh $(ENVTEST_OLDEST_DIR)
	@touch $@

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint.
$(GOLANGCI_LINT): $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: ginkgo
ginkgo: $(GINKGO) ## Install the ginkgo CLI at the version in go.mod.
$(GINKGO): $(LOCALBIN)
	$(call go-install-tool,$(GINKGO),github.com/onsi/ginkgo/v2/ginkgo,$(GINKGO_VERSION))

.PHONY: helm
helm: $(HELM) ## Install helm.
$(HELM): $(LOCALBIN)
	$(call go-install-tool,$(HELM),helm.sh/helm/v3/cmd/helm,$(HELM_VERSION))

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: promtool
promtool: $(PROMTOOL) $(PROMQL_NAMES) ## Install promtool (Debian's package, else built from hack/promtool) and build promql-names (the metric names in rules and dashboards).

# remove_all_sd leaves out the service discoveries, which rule tests never use
# (and some of whose modules the proxy does not serve).
PROMTOOL_BUILD = cd hack/promtool && CGO_ENABLED=0 go build -trimpath -tags remove_all_sd
$(PROMTOOL): hack/promtool/go.mod | $(LOCALBIN)
	@if command -v apt-get >/dev/null && hack/debian-promtool.sh $@; then $@ --version | head -1; \
	else $(PROMTOOL_BUILD) -o $@ github.com/prometheus/prometheus/cmd/promtool; fi
$(PROMQL_NAMES): hack/promtool/go.mod hack/promtool/promql-names/main.go | $(LOCALBIN)
	$(PROMTOOL_BUILD) -o $@ ./promql-names

.PHONY: image-tool
image-tool: $(IMAGE_TOOL) ## Build hack/image, which builds and checks the image.
$(IMAGE_TOOL): hack/image/go.mod hack/image/go.sum $(wildcard hack/image/*.go) | $(LOCALBIN)
	cd hack/image && go build -o $(IMAGE_TOOL) .

.PHONY: crd-ref-docs
crd-ref-docs: $(CRD_REF_DOCS) ## Install crd-ref-docs.
$(CRD_REF_DOCS): $(LOCALBIN)
	$(call go-install-tool,$(CRD_REF_DOCS),github.com/elastic/crd-ref-docs,$(CRD_REF_DOCS_VERSION))

.PHONY: cyclonedx-gomod
cyclonedx-gomod: $(CYCLONEDX_GOMOD) ## Install cyclonedx-gomod, which writes the image's SBOM.
$(CYCLONEDX_GOMOD): $(LOCALBIN)
	$(call go-install-tool,$(CYCLONEDX_GOMOD),github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod,$(CYCLONEDX_GOMOD_VERSION))

.PHONY: setup-envtest
setup-envtest: $(SETUP_ENVTEST)
$(SETUP_ENVTEST): $(LOCALBIN)
	$(call go-install-tool,$(SETUP_ENVTEST),sigs.k8s.io/controller-runtime/tools/setup-envtest,$(SETUP_ENVTEST_VERSION))

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

# go-install-tool installs package $(2) at version $(3) as $(1)-$(3) and links
# $(1) to it, so a version bump in this file reinstalls the tool.
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)")" = "$$(realpath $(1)-$(3))" ] || { \
set -e; \
echo "Installing $(2)@$(3)" ; \
rm -f "$(1)" ; \
GOBIN="$(LOCALBIN)" go install $(2)@$(3) ; \
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ; \
ln -sf "$$(realpath "$(1)-$(3)")" "$(1)" ; \
}
endef
