# callbus — see README.md for what each target does.
GO      ?= go
PKGS    ?= ./...
BENCH   ?= .
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test vet fmt-check asyncapi chart rules fuzz bench bench-micro sim clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The test command of the README: formatting, vet, every test with the race
# detector, and the AsyncAPI document through a real parser (Node.js). Tests that
# need a program this machine lacks (chromium for the setup page) skip, and go test
# shows skips only with -v: they write why to SKIP_REPORT, listed at the end.
# The status page's screenshot is kept as bin/status-status.png, the dashboard's
# preview (its panels over a real Prometheus) as bin/grafana-dashboard.png.
# CALLBUS_REQUIRE_INTEGRATION=1 (CI) makes them fail instead.
SKIP_REPORT := $(CURDIR)/bin/skipped-tests.txt
test: fmt-check vet asyncapi
	@mkdir -p bin && rm -f $(SKIP_REPORT)
	@echo "$(GO) test -race -count=1 -timeout 30m $(PKGS)"; status=0; \
	CALLBUS_SKIP_REPORT=$(SKIP_REPORT) CALLBUS_STATUS_SCREENSHOT=$(CURDIR)/bin/status CALLBUS_DASHBOARD_SCREENSHOT=$(CURDIR)/bin/grafana $(GO) test -race -count=1 -timeout 30m $(PKGS) || status=$$?; \
	if [ -s $(SKIP_REPORT) ]; then echo "SKIPPED, not tested on this machine:"; sed 's/^/  /' $(SKIP_REPORT); fi; \
	exit $$status

# The AsyncAPI document parsed by @asyncapi/parser, with the checker's own tests.
asyncapi:
	npm ci --prefix tools/asyncapi --ignore-scripts --no-audit --no-fund --silent
	node tools/asyncapi/check.mjs
	node --test tools/asyncapi/check.test.mjs

# Short fuzzing of every decoder (FUZZTIME per target).
FUZZTIME ?= 20s
fuzz:
	@for f in $$($(GO) test -list 'Fuzz.*' ./internal/callcenter/ | grep ^Fuzz); do \
		echo "== $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./internal/callcenter/ || exit 1; \
	done

# The Helm chart: lint and render every values file, then decode every manifest
# into the Kubernetes types and check that values.schema.json is the one generated
# from config/iparams.json (deploy/ is its own Go module; `cd deploy && go test
# -update` regenerates the schema).
HELM_VERSION ?= v3.22.0
KUBE_VERSION ?= 1.30.0
bin/helm:
	GOBIN="$(CURDIR)/bin" $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

chart: bin/helm rules
	bin/helm lint --strict --kube-version $(KUBE_VERSION) deploy/helm/callbus
	bin/helm template callbus deploy/helm/callbus --kube-version $(KUBE_VERSION) >/dev/null
	@for f in deploy/helm/callbus/ci/*.yaml; do \
		echo "== $$f"; \
		bin/helm lint --strict --kube-version $(KUBE_VERSION) deploy/helm/callbus --values "$$f" || exit 1; \
		bin/helm template callbus deploy/helm/callbus --kube-version $(KUBE_VERSION) --values "$$f" >/dev/null || exit 1; \
	done
	cd deploy && HELM="$(CURDIR)/bin/helm" $(GO) test -count=1 ./...

# The alerting rules (the chart's PrometheusRule) through promtool: syntax and lint,
# then every alert against synthetic series. promtool is Debian's `prometheus`
# package (.ci/run installs it).
PROMTOOL ?= promtool
rules:
	$(PROMTOOL) check rules deploy/helm/callbus/rules/callbus.rules.yaml
	$(PROMTOOL) test rules deploy/prometheus/callbus.rules_test.yaml

# End-to-end benchmarks of the poller binary (one run each; see the README for
# the figures): CALLBUS_BENCH_BACKLOG calls of backlog, CALLBUS_BENCH_LIVE of live
# traffic at plan 100.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime 1x -timeout 60m ./cmd/poller/

# Micro-benchmarks of the packages (store commits, simulator, ...).
bench-micro:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

# The simulator on its own, a minute of call-center life per real second.
sim: build
	bin/callcenter-sim --addr 127.0.0.1:8080 --api-key sim-admin-key --seed 1 --speed 60

clean:
	rm -rf bin
