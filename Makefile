# callbus — see README.md for what each target does.
GO      ?= go
PKGS    ?= ./...
BENCH   ?= .
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build test vet fmt-check fuzz bench sim clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The test command of the README: formatting, vet, and every test with the race detector.
test: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)

# Short fuzzing of every decoder (FUZZTIME per target).
FUZZTIME ?= 20s
fuzz:
	@for f in $$($(GO) test -list 'Fuzz.*' ./internal/callcenter/ | grep ^Fuzz); do \
		echo "== $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./internal/callcenter/ || exit 1; \
	done

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

# The simulator on its own, a minute of call-center life per real second.
sim: build
	bin/callcenter-sim --addr 127.0.0.1:8080 --api-key sim-admin-key --seed 1 --speed 60

clean:
	rm -rf bin
