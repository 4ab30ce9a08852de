# callbus — see README.md for what each target does.
GO      ?= go
PKGS    ?= ./...
BENCH   ?= .
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build generate demo test vet fmt-check asyncapi contract-check contract-baseline models models-test chart rules fuzz bench bench-micro chaos partitions sim clean e2e-k8s

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

# Every generated file (the //go:generate lines beside each generator): the values
# schemas, the READMEs' parameter tables, the event catalog page, the dashboard,
# and the TypeScript and Python models (make models, with Node.js). CI fails when
# one is stale (git diff after make generate).
generate:
	$(GO) generate ./...
	cd deploy && $(GO) generate ./...
	@if command -v node >/dev/null && command -v npm >/dev/null; then $(MAKE) --no-print-directory models; \
	elif [ "$$CALLBUS_REQUIRE_INTEGRATION" = 1 ]; then echo "node or npm not found, and CALLBUS_REQUIRE_INTEGRATION=1"; exit 1; \
	else echo "generate: node or npm not found (install Node.js 20.19+): models/ was not regenerated"; fi

# The README's first command: build the poller, saying so (the first build compiles
# nats-server and the rest, minutes on a small machine; later ones take seconds),
# then run the demo. DEMO_FLAGS, e.g. DEMO_FLAGS='--speed 60', go to `poller demo`.
DEMO_FLAGS ?=
demo:
	@echo "== building bin/ (the first build takes 2-5 minutes on a 2-core machine, later ones seconds)"
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...
	@echo "== bin/poller demo $(DEMO_FLAGS)  (Ctrl-C to stop)"
	@bin/poller demo $(DEMO_FLAGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The test command of the README: formatting, vet, the AsyncAPI document through a
# real parser (Node.js), and every test with the race detector. An optional part
# this machine lacks (node for the AsyncAPI check, redis-server for the Redis
# tests, chromium for the setup page) is skipped, and, as go test shows skips only
# with -v, the reason is written to SKIP_REPORT and listed at the end.
# CALLBUS_REQUIRE_INTEGRATION=1 (CI) makes every such skip a failure.
# The status page's screenshot is kept as bin/status-status.png, the dashboard's
# preview (its panels over a real Prometheus) as bin/grafana-dashboard.png.
# go mod download first: a test builds the consumer example as a module of its own
# with GOPROXY=off, from the module cache this fills. Progress is printed per package
# as each one ends (gotestsum, from the Go module proxy on first use).
SKIP_REPORT := $(CURDIR)/bin/skipped-tests.txt
GOTESTSUM ?= $(GO) run gotest.tools/gotestsum@v1.13.0
test: fmt-check vet
	@echo "== make test: about 20 minutes on a 2-core machine (cmd/poller's end-to-end and partition tests are most of it)"
	@mkdir -p bin && rm -f $(SKIP_REPORT)
	@$(GO) mod download
	@if command -v node >/dev/null && command -v npm >/dev/null; then $(MAKE) --no-print-directory asyncapi || exit 1; \
	elif [ "$$CALLBUS_REQUIRE_INTEGRATION" = 1 ]; then echo "node or npm not found, and CALLBUS_REQUIRE_INTEGRATION=1"; exit 1; \
	else echo "asyncapi: node or npm not found (install Node.js 20+): the AsyncAPI document was not parsed" >>$(SKIP_REPORT); fi
	@if command -v node >/dev/null && command -v npm >/dev/null && command -v python3 >/dev/null; then $(MAKE) --no-print-directory models-test || exit 1; \
	elif [ "$$CALLBUS_REQUIRE_INTEGRATION" = 1 ]; then echo "node, npm or python3 not found, and CALLBUS_REQUIRE_INTEGRATION=1"; exit 1; \
	else echo "models-test: node, npm or python3 not found: the TypeScript and Python models were not tested" >>$(SKIP_REPORT); fi
	@echo "$(GO) test -race -count=1 -timeout 30m $(PKGS)  (a line per package as it ends)"; status=0; \
	CALLBUS_SKIP_REPORT=$(SKIP_REPORT) CALLBUS_STATUS_SCREENSHOT=$(CURDIR)/bin/status CALLBUS_DASHBOARD_SCREENSHOT=$(CURDIR)/bin/grafana \
		$(GOTESTSUM) --format pkgname-and-test-fails --format-hide-empty-pkg -- -race -count=1 -timeout 30m $(PKGS) || status=$$?; \
	if [ -s $(SKIP_REPORT) ]; then echo "SKIPPED, not tested on this machine:"; sed 's/^/  /' $(SKIP_REPORT); \
		if [ "$$CALLBUS_REQUIRE_INTEGRATION" = 1 ]; then status=1; fi; fi; \
	exit $$status

# The AsyncAPI document parsed by @asyncapi/parser, with the checker's own tests.
asyncapi:
	npm ci --prefix tools/asyncapi --ignore-scripts --no-audit --no-fund --silent
	node tools/asyncapi/check.mjs
	node --test tools/asyncapi/check.test.mjs

# The TypeScript and Python models (models/ts, models/python) generated from
# schemas/ by quicktype (pinned in tools/models/package-lock.json); models-test
# decodes every example of schemas/examples with both (node, python3).
models:
	npm ci --prefix tools/models --ignore-scripts --no-audit --no-fund --silent
	node tools/models/generate.mjs

models-test:
	npm ci --prefix tools/models --ignore-scripts --no-audit --no-fund --silent
	node --test tools/models/decode.test.mjs

# The contract gate: schemas/ and schemas/asyncapi.yaml against the last released
# contract, the committed copy schemas/released/; fails naming the type and JSON
# pointer of each breaking change (internal/contract). A breaking change ships as
# a new version of the type beside the old one (docs/consuming.md#versions).
contract-check:
	$(GO) run ./tools/contractcheck -current schemas -released schemas/released

# When a release is cut: the contract as it is becomes the released baseline.
contract-baseline:
	rm -rf schemas/released && mkdir -p schemas/released
	cp -R schemas/envelope.json schemas/event.json schemas/headers.json schemas/asyncapi.yaml schemas/data schemas/defs schemas/released/

# Fuzzing: every Fuzz target of every package of PKGS, each for FUZZTIME (go test
# fuzzes one target of one package at a time). The packages whose tests declare a
# Fuzz function are found by go list and grep, their targets by go test -list. A
# crasher fails the run and is saved under the package's testdata/fuzz/<target>/,
# where every plain go test then replays it. A run that ends in Go 1.26's fuzzing
# deadline race (a bare "context deadline exceeded" at the end of FUZZTIME, no
# failing input written) is run once more instead of failing the build.
FUZZTIME ?= 20s
fuzz:
	@dirs=$$($(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' $(PKGS)); \
	pkgs=$$(for d in $$dirs; do grep -lqs '^func Fuzz' $$d/*_test.go && echo $$d; done); \
	[ -n "$$pkgs" ] || { echo "no fuzz targets"; exit 1; }; \
	list=$$($(GO) test -list '^Fuzz' $$pkgs) || { echo "$$list"; exit 1; }; \
	targets=$$(echo "$$list" | awk '/^Fuzz/ { fs = fs " " $$1; next } \
		/^ok/ { n = split(fs, f, " "); for (i = 1; i <= n; i++) print $$2 "@" f[i]; fs = "" }'); \
	echo "fuzzing $$(echo $$targets | wc -w) targets for $(FUZZTIME) each"; \
	log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for t in $$targets; do \
		pkg=$${t%@*}; f=$${t#*@}; echo "== $$pkg $$f"; \
		for try in 1 2; do \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg > $$log 2>&1; rc=$$?; cat $$log; \
			[ $$rc -eq 0 ] && break; \
			if [ $$try -eq 1 ] && grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
				echo "== $$f: the fuzzing engine's own deadline race (go.dev/issue/75804, fixed in Go 1.27), no failing input: once more"; \
			else exit 1; fi; \
		done; \
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

# The chart on a real one-node Kubernetes (v1.37.2, built from the Go module proxy
# and cached in ~/.cache/callbus-k8s), inside network namespace k8s: install, fail
# over, upgrade, rotate, drain, roll back, uninstall, each audited (see
# docs/helm.md). Needs root; installs its Debian packages; tears everything down.
e2e-k8s:
	deploy/e2e-k8s/run.sh

# The alerting rules (the chart's PrometheusRule) through promtool: syntax and lint,
# then every alert against synthetic series. promtool is Debian's `prometheus`
# package (.ci/run installs it).
PROMTOOL ?= promtool
rules:
	$(PROMTOOL) check rules deploy/helm/callbus/rules/callbus.rules.yaml
	$(PROMTOOL) test rules deploy/prometheus/callbus.rules_test.yaml

# End-to-end benchmarks of the poller binary (one run each; see the README for
# the figures): CALLBUS_BENCH_BACKLOG calls of backlog, with JetStream's own rate
# right before and after and the ratio end-to-end ÷ raw, and CALLBUS_BENCH_LIVE of
# live traffic at plan 100. CALLBUS_BENCH_CPUPROFILE / CALLBUS_BENCH_TRACE save
# profiles of the poller.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime 1x -timeout 60m ./cmd/poller/

# The fleet chaos test in its full form (60 accounts, three rounds of every
# fault); make test runs its short form (30 accounts, one round).
chaos:
	CALLBUS_FLEET_CHAOS=full $(GO) test -count=1 -run '^TestFleetChaos$$' -v -timeout 30m ./cmd/poller/

# The partition scenarios in their full form (each fault held a minute; make test
# runs them for 15 s): every poller, redis-server and nats-server in a network
# namespace of its own (root, iproute2, iptables), cut, delayed, lossy and
# flapping links, each scenario audited. Prints the results table
# (docs/partitions.md).
PARTITIONS_REPORT := $(CURDIR)/bin/partitions.md
partitions:
	@mkdir -p bin && rm -f $(PARTITIONS_REPORT)
	@status=0; CALLBUS_PARTITIONS=full CALLBUS_PARTITIONS_REPORT=$(PARTITIONS_REPORT) \
		$(GO) test -count=1 -run '^TestPartition' -v -timeout 60m ./cmd/poller/ || status=$$?; \
	echo "| scenario | faults | events | lost | duplicates | chain breaks | two-writer tokens | worst leaderless |"; \
	echo "|---|---|---|---|---|---|---|---|"; cat $(PARTITIONS_REPORT) 2>/dev/null; \
	echo "$$(nproc) cores, $$(uname -r), $$(date -u +%Y-%m-%d)"; exit $$status

# Micro-benchmarks of the packages (store commits, simulator, ...).
bench-micro:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

# The simulator on its own, a minute of call-center life per real second.
sim: build
	bin/callcenter-sim --addr 127.0.0.1:8080 --api-key sim-admin-key --seed 1 --speed 60

clean:
	rm -rf bin
