# fsmgen — see README.md. `make test` is what CI runs.
GO       ?= go
FUZZTIME ?= 60s
# Random statecharts make fuzz runs against the real XState (make test runs 300).
CHARTDIFF ?= 3000
SPECS    := $(wildcard examples/*/*.fsm.yaml)
# Every go test has a timeout, with room for a busy 2-core machine on a cold build cache
# (internal/gogen took 352 s there, of go's default 600): TIMEOUT for each package of the
# race run and the modules, SLOWTIMEOUT for the slow generator packages (NORACE) and make
# race, LONGTIMEOUT for make fuzz's long runs. A package that runs out of it fails with the
# tests then running and the goroutines (testprogress shows go test's panic).
TIMEOUT     ?= 15m
SLOWTIMEOUT ?= 30m
LONGTIMEOUT ?= 60m

.PHONY: all build generate check-generated test race test-modules coverage vet fmt-check check-examples fuzz bench bench-durable bench-smoke clean test-long

# The modules beside the main one: the store adapters (each its own module, so that a
# program that uses neither never downloads a database driver), the programs and
# cross-process tests that run the seeds on them, and the inspector's tests over both
# stores and in headless Chromium.
# preview/browsertest: the preview page's tests in headless Chromium (chromedp).
# svg: the SVG renderer (Graphviz as WebAssembly) and its fsmgen, for diagram --format svg.
MODULES := store/sqlite store/postgres examples/durable examples/build/worker examples/scaleout examples/evolve inspect/browsertest otel preview/browsertest svg

all: build

build:
	$(GO) build -o bin/fsmgen ./cmd/fsmgen

# Generate the example machines into generated/<name>/.
generate:
	$(GO) run ./cmd/fsmgen generate --root generated $(SPECS)

# Fail (with a diff) when generated/ differs from what the specs produce, including missing
# and stale files.
check-generated:
	$(GO) run ./cmd/fsmgen generate --check --root generated $(SPECS)
	$(GO) run ./cmd/fsmgen generate --check -o examples/evolve/v1 examples/evolve/v1/ticket.fsm.yaml
	$(GO) run ./cmd/fsmgen generate --check -o examples/evolve/v2 examples/evolve/v2/ticket.fsm.yaml
	$(GO) run ./cmd/fsmgen generate --check -o examples/evolve/v3 examples/evolve/v3/ticket.fsm.yaml
	$(GO) run ./cmd/fsmgen generate --check -o examples/evolve/v4 examples/evolve/v4/ticket.fsm.yaml
	$(GO) run ./cmd/fsmgen generate --check -o examples/evolve/v5 examples/evolve/v5/ticket.fsm.yaml

# The whole test suite: formatting, vet, every test (with the race detector but for NORACE), the exact
# allocation counts of the seed machines (without it: it allocates), the seed specs checked
# clean, and short fuzz runs of the loader and checker and of the whole generator.
test: fmt-check vet check-examples check-generated bin/testprogress
	$(TESTGO) -race -count=1 -timeout $(TIMEOUT) $$($(GO) list ./... | grep -v -x $(NORACE:./%=-e github.com/fsmgen/fsmgen/%))
	@# The modules' tests mostly wait on databases and processes: they run meanwhile.
	@bash -c 'set -o pipefail; $(MAKE) --no-print-directory test-modules & mods=$$!; 		$(TESTGO) -count=1 -timeout $(SLOWTIMEOUT) $(NORACE); rc=$$?; wait $$mods || rc=1; exit $$rc'
	$(TESTGO) -count=1 -timeout $(TIMEOUT) -run '^TestManyUnknownKeys$$' ./spec/
	$(TESTGO) -count=1 -timeout $(TIMEOUT) -run '^TestAllocs$$' ./examples/...
	$(MAKE) --no-print-directory coverage
	$(MAKE) --no-print-directory fuzz FUZZTIME=10s CHARTDIFF=
	$(MAKE) --no-print-directory bench-smoke

# The loader and checker, the Go emitter, the test generator, the output budget and the
# comparisons with XState start no goroutine (but the budget's calibration, a sampler of
# memory figures), nor do their tests: the race detector has nothing to find in them and
# would add half to their time, tenfold to the budget's (they generate, build and test
# hundreds of packages, run hundreds of charts, estimate outputs of megabytes), so make
# test runs them without it (make race runs every package with it).
NORACE := ./internal/lower ./internal/gogen ./internal/chartdiff ./internal/importer ./internal/testgen ./internal/budget

race: bin/testprogress
	$(TESTGO) -race -count=1 -timeout $(SLOWTIMEOUT) ./...

# go test with progress: packages as they finish, slow tests, failures in full (a timeout
# with the tests it stopped and the goroutines), every skipped test with its reason on a
# SKIP line and their count at the end, and every half minute what is still running.
TESTGO = $(CURDIR)/bin/testprogress

.PHONY: bin/testprogress
bin/testprogress:
	@$(GO) build -o $@ ./internal/cmd/testprogress

# Vet and test each module of MODULES, all at once (they mostly wait on databases and
# processes; each PostgreSQL test starts a server of its own), every line prefixed by its
# module.
test-modules: bin/testprogress
	@bash -c 'set -o pipefail; pids=(); for m in $(MODULES); do \
		( (cd $$m && $(GO) vet ./... && $(TESTGO) -race -count=1 -timeout $(TIMEOUT) ./...) 2>&1 | sed -u "s|^|[$$m] |" ) & pids+=($$!); done; \
		rc=0; for p in "$${pids[@]}"; do wait $$p || rc=1; done; exit $$rc'

# The scale-out proof at the size of its acceptance bar: 1, 4 and 8 worker processes, 1,000
# orders, 50,000 events, on SQLite and PostgreSQL, and on PostgreSQL with the server
# restarted, connections terminated and COMMITs cut by a proxy under 4 workers (a few minutes
# on 2 CPUs; make test runs a short scenario of each); then the random-spec property tests at
# ten times make test's size.
test-long:
	cd examples/scaleout && SCALEOUT_FULL=1 $(GO) test -count=1 -timeout 60m ./...
	@echo "random specs: 3,000 flat specs and 1,000 statecharts, every reachable state reached by the generated tests; 150 specs built and tested"
	FSMGEN_RANDSPECS=3000 FSMGEN_RANDSPECS_BUILD=150 FSMGEN_RANDCHARTS=1000 $(GO) test -count=1 -timeout $(LONGTIMEOUT) -run '^TestRandom(Specs|Charts)Reach' ./internal/testgen

# Statement coverage of each generated seed package by its generated tests alone.
coverage:
	$(GO) test -count=1 -timeout $(TIMEOUT) -cover -run '^TestFsm' ./generated/...

# Refresh the preview's embedded copy of Mermaid (preview/assets) from the package the
# lockfile of internal/mermaid/testdata/mermaid-check installs (npm ci there first);
# TestMermaidCopy fails until the copy matches it.
.PHONY: preview-mermaid
preview-mermaid:
	$(GO) generate ./preview

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

check-examples:
	$(GO) run ./cmd/fsmgen check $(SPECS)

fuzz:
	$(GO) test -timeout $(TIMEOUT) ./internal/lower -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME) -fuzzminimizetime 3s
	@if [ -n "$(CHARTDIFF)" ]; then echo "chartdiff: $(CHARTDIFF) random statecharts against XState"; \
		FSMGEN_CHARTDIFF_MACHINES=$(CHARTDIFF) $(GO) test -count=1 -timeout $(LONGTIMEOUT) -run '^TestAgainstXState$$' ./internal/chartdiff; \
		echo "chartdiff: the Go code of 200 random statecharts against the interpreter"; \
		FSMGEN_CHARTDIFF_CODE=200 $(GO) test -count=1 -timeout $(LONGTIMEOUT) -run '^TestAcceptedSpecsBuild$$' ./internal/lower; \
		echo "mutated specs: 8 variants of each spec, generated and tested"; \
		FSMGEN_MUTATIONS=8 $(GO) test -count=1 -timeout $(LONGTIMEOUT) -run '^TestMutatedSpecs$$' ./internal/gogen; \
		echo "generated code against the interpreter: 1,000 event sequences per spec"; \
		FSMGEN_SEQUENCES=1000 $(GO) test -count=1 -timeout $(LONGTIMEOUT) -run '^TestDifferential$$' ./internal/gogen; fi
	$(GO) test -timeout $(TIMEOUT) ./internal/gogen -run '^$$' -fuzz FuzzGenerate -fuzztime $(FUZZTIME) -fuzzminimizetime 3s

# The full benchmark run (about 20 minutes on 2 CPUs): generated code against looplab/fsm,
# qmuntal/stateless and a hand-written switch, and generation scaling; writes BENCHMARKS.md.
bench:
	bash bench/run.sh

# The durable numbers (about 10 minutes on 2 CPUs): the scale-out benchmark at its
# acceptance size (1, 4 and 8 worker processes; 1,000 orders; 50,000 events) on SQLite and
# a PostgreSQL server it starts, against the same-work floor and the two-statement floor,
# with the server's time by statement; writes examples/scaleout/RESULTS.md, then
# BENCHMARKS.md from it and the runtime results make bench last wrote.
bench-durable:
	cd examples/scaleout && $(GO) run ./cmd/bench -statements -count 3 -o RESULTS.md
	cd bench && $(GO) run ./cmd/report -dir results -notes notes.md -o ../BENCHMARKS.md

# What CI runs of the bench module (its own go.mod): vet, the agreement and scaling tests,
# every benchmark once, so that it never rots; and the committed big machine (spec, generated
# code, hand-written switch) up to date.
bench-smoke:
	cd bench && $(GO) vet ./...
	@# Each benchmark runs once so that it never rots; its one-iteration figures measure
	@# nothing, so they are not shown (make bench measures).
	cd bench && bash -c 'set -o pipefail; $(GO) test -count=1 -timeout $(TIMEOUT) -bench . -benchtime 1x ./... | sed -E "s/^(Benchmark[^[:space:]]+)[[:space:]].*/\1: ran once (a smoke run, not a measurement)/"'
	cd bench/big && $(GO) run ../cmd/bigspec -o - | cmp - big.fsm.yaml
	cd bench/hand && $(GO) run ../cmd/bighand -o - | cmp - big_switch.go
	cd bench/big && $(GO) tool fsmgen generate --check --outputs go -o . big.fsm.yaml
	cd bench/persist && $(GO) tool fsmgen generate --check --outputs go -o . persist.fsm.yaml
	@for m in chart chartact chartflat; do \
		(cd bench/$$m && $(GO) run ../cmd/chartspec -machine $$m -o - | cmp - $$m.fsm.yaml && \
		$(GO) tool fsmgen generate --check --outputs go -o . $$m.fsm.yaml) || exit 1; done

clean:
	rm -rf bin
