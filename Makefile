# ctxgate: `make demo` on a fresh machine, `make test` before every commit.
# The real work is in build.sh and scripts/; targets here only order it.

SHELL := /bin/bash
GO    ?= go
.DEFAULT_GOAL := build

# A sample request for `make demo` (override: make demo DEMO_REQUEST=path).
DEMO_REQUEST ?= $(firstword $(sort $(wildcard testdata/requests/default/*.json)))
# `make bench BENCH=Evaluate PKGS=./host/...`
BENCH ?= .
PKGS  ?= ./...

.PHONY: tools build modules dist test demo bench bench-go golden quality fuzz load clean clean-tools

## tools: the Debian packages and TinyGo 0.42.0 (cached; a no-op when present)
tools:
	@scripts/install-deps.sh
	@scripts/install-tinygo.sh >/dev/null

## build: both Extism modules, the Envoy filter and the CLI; prints sizes
build: tools
	@./build.sh

## modules: rebuild the committed modules (host/wasm/*.wasm,
## guest/envoy/envoy-filter.wasm) from the sources, e.g. after a merge; commit them
modules: tools
	@./build.sh modules
	@git status --short -- host/wasm guest/envoy/envoy-filter.wasm

## dist: release artifacts into dist/: static binaries, the modules, OCI images
## of the Envoy filter and of ctxgate serve, SBOM, licences, SHA256SUMS
dist: build
	@scripts/dist.sh

## test: build, then vet and test everything (natively, under TinyGo, through the modules)
test: build
	@# The committed modules must be what the sources build to (make modules).
	scripts/check-modules.sh
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt -w these files:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./guest/extism/...
	cd release && $(GO) vet ./...
	cd internal/otlptest && $(GO) vet ./...
	$(GO) test ./...
	@# The release images, SBOM and deploy/k8s, read back with their libraries;
	@# the serve image runs as deploy/k8s runs it (chrooted; needs root).
	cd release && $(GO) test ./...
	@# Traces as the OpenTelemetry Collector's own OTLP receiver gets them from
	@# a ctxgate serve process (gRPC and HTTP); a module of its own, so the
	@# Collector's dependencies stay out of go.mod.
	cd internal/otlptest && CTXGATE_BIN=$(CURDIR)/bin/ctxgate $(GO) test ./...
	@# The READMEs' install commands, run as written in a fresh copy with only
	@# Go, Node and Debian's python3: the CLI, the library in its own module,
	@# the JS tarball, the Python client; each decides as bin/ctxgate.
	scripts/test-install.sh
	@# The pure packages' tests again, compiled by TinyGo for wasip1 (over wazero).
	scripts/test-tinygo.sh
	@# The committed quality report must be what the data and the current
	@# policies give (skips, saying so, when ../shared/data is absent).
	CTXGATE_QUALITY_STRICT=1 $(GO) test -count=1 ./bench/eval/quality -run TestQualityReport
	@# The same module in workerd, Node and Deno, byte for byte.
	scripts/test-edge.sh
	@# The JavaScript package (Node, Deno, workerd, Chromium, LangChain.js,
	@# LlamaIndex.TS, the client against serve) and the Python client.
	scripts/test-js.sh
	scripts/test-python.sh
	@# The official OpenAI Node SDK against the gateway (chat, responses,
	@# models, embeddings, pass-through, errors) with a local upstream.
	scripts/test-openai.sh
	@# Every fuzz target for FUZZTIME (default 20s; 8s in .ci/run), natively and through the modules.
	scripts/fuzz.sh

## demo: install what is missing, build, and decide one sample request
demo: build
	@missing=""; \
	[ -x bin/ctxgate ] || missing="$$missing bin/ctxgate (cmd/ctxgate is not in this checkout yet)"; \
	[ -n "$(DEMO_REQUEST)" ] && [ -f "$(DEMO_REQUEST)" ] || missing="$$missing a sample request (testdata/requests/default/*.json)"; \
	if [ -n "$$missing" ]; then echo "demo: cannot run, missing:$$missing" >&2; exit 1; fi
	@echo "$$ bin/ctxgate eval $(DEMO_REQUEST)"
	@bin/ctxgate eval $(DEMO_REQUEST)

## bench: the performance suite (native vs both modules, cold start, throughput,
## serve under load); writes docs/performance.md. Ratios from one run, never asserted.
bench: build
	TINYGO="$$(scripts/install-tinygo.sh)" $(GO) run ./bench/cmd/perf

## bench-go: the Go benchmarks, for benchstat (make bench-go BENCH=Evaluate PKGS=./gate)
bench-go: build
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)

## quality: regenerate docs/quality.md, its plots and README.md's quality
## block from ../shared/data
quality:
	$(GO) run ./bench/eval/cmd/evalset

## fuzz: every fuzz target for FUZZTIME each (make fuzz FUZZTIME=2m)
fuzz: build
	scripts/fuzz.sh

## load: drive `ctxgate serve` /v1/gate with concurrent clients (make load LOAD_FLAGS=-h)
load: build
	$(GO) run ./bench/load $(LOAD_FLAGS)

## golden: regenerate testdata/decisions from testdata/requests
golden:
	$(GO) test ./gate -run TestGolden -update

## clean: local builds and release artifacts (not the committed modules, not
## the TinyGo install: see clean-tools)
clean:
	rm -f host/wasm/.*.inputs guest/envoy/.*.inputs
	rm -rf bin dist

## clean-tools: remove the cached TinyGo builds (make tools rebuilds, ~1 min)
clean-tools:
	rm -rf "$${CTXGATE_CACHE:-$$HOME/.cache/ctxgate}"/tinygo-*
