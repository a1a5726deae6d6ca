# make test installs what the tests need, then runs every test with the race detector.
GO ?= go
NODE_COMPAT := internal/clientcompat/node

# Fuzz targets (package:function). make test runs each briefly, by a fixed count of inputs
# rather than a duration, so a slow machine does the same work instead of timing out.
FUZZ_TARGETS := ./internal/protocol:FuzzDecodeChatRequest ./internal/protocol:FuzzSplitMatchesEncodingJSON ./internal/protocol:FuzzAppendMatchesEncodingJSON ./internal/simulation:FuzzParseFault \
	./internal/simulation:FuzzParseLatency ./internal/server:FuzzSSEWriter ./internal/generate:FuzzSchemaInstance ./observability:FuzzDecodeSpanRecord \
	./internal/jsonenc:FuzzAppendStringMatchesEncodingJSON ./internal/jsonenc:FuzzAppendSlogStringMatchesSlog ./internal/jsonenc:FuzzAppendSlogFloatMatchesSlog \
	./internal/protocol:FuzzDecodeResponsesRequest ./internal/protocol:FuzzEchoAsBefore ./internal/protocol:FuzzAppendCompactMatchesEncodingJSON \
	./internal/protocol:FuzzValidMatchesEncodingJSON
FUZZ_COUNT ?= 20000x

.PHONY: test check deps fuzz run build bench soak hostile

# The end-to-end tests (Node clients, coding agents' CLIs, Chromium, Prometheus, Redis) run only
# with this switch, and under it a missing tool fails them (internal/testutil.EndToEnd).
test: export MOCKGATEWAY_E2E = 1
test: deps check
	$(GO) test -race -count=1 -timeout 12m ./...
	# Stack sizes and allocation counts are only what production has without the race detector,
	# which doubles stacks and changes what escapes (the !race files).
	$(GO) test -count=1 -run '^(TestParkedStreamStack|TestBlockedStreamStack)$$' ./internal/server
	$(GO) test -count=1 -run '^TestResponsesDecodeStack$$' ./internal/protocol
	$(GO) test -count=1 -run '^(TestShortAnswerAllocations|TestRequestAllocations)$$' ./internal/generate ./observability
	cd deploy/test && $(GO) test -race -count=1 -timeout 10m ./...
	cd deploy/helm/test && $(GO) test -race -count=1 -timeout 10m ./...
	$(MAKE) --no-print-directory fuzz

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$fn ($(FUZZ_COUNT))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZ_COUNT) -parallel 2 $$pkg || exit 1; \
	done

# check: formatting, vet and staticcheck (pinned; go run fetches and caches it), the mechanical
# part of review.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd deploy/test && $(GO) vet ./...
	cd deploy/helm/test && $(GO) vet ./...
	cd internal/clientcompat/gosdk && $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cd deploy/test && $(GO) run $(STATICCHECK) ./...
	cd deploy/helm/test && $(GO) run $(STATICCHECK) ./...
	cd internal/clientcompat/gosdk && $(GO) run $(STATICCHECK) ./...

# deps: what the tests need beyond the Go toolchain — the Node SDK and Vercel AI SDK used by the
# client-compatibility test (installed from the lock file); for deploy/test, Debian's
# docker-compose and Prometheus v3.13.1 (server and promtool) built from its Go module and cached
# in ~/.cache/mockgateway; and Debian's chromium for the console's browser test. A missing tool
# fails the test run.
deps:
	@command -v node >/dev/null || { echo "node is required for the client-compatibility tests (apt-get install nodejs npm)"; exit 1; }
	cd $(NODE_COMPAT) && npm ci --no-audit --no-fund --loglevel=error
	cd internal/clientcompat/anthropic && npm ci --no-audit --no-fund --loglevel=error # Claude Code and the Anthropic clients
	bash deploy/test/deps.sh
	@# Debian's chromium, which the console's browser test drives (cmd/mockgateway/console_test.go).
	@command -v chromium >/dev/null 2>&1 || { \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y chromium; }
	@command -v chromium >/dev/null 2>&1 || { echo "chromium is still missing after apt-get install chromium"; exit 1; }

run:
	$(GO) run ./cmd/mockgateway

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/mockgateway ./cmd/mockgateway

# bench: Go benchmarks, wrk load runs of the built binary with full telemetry next to a bare
# net/http baseline (cmd/baseline), and RSS with 10,000 open streams; one Markdown table.
BENCH_FLAGS ?=
bench:
	@command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }
	$(GO) run ./cmd/loadtest bench $(BENCH_FLAGS)

# hostile: the hostile requests of the limits issue against the built binary, each on a fresh
# server; prints CPU, peak RSS and the answer per case. A benchmark: it reports, it does not time out.
hostile:
	$(GO) run ./cmd/loadtest hostile

# soak: mixed traffic for a set duration, sampled every 10s; not part of make test.
SOAK_DURATION ?= 10m
SOAK_RATE ?= 50
soak:
	$(GO) run ./cmd/loadtest soak --duration $(SOAK_DURATION) --rate $(SOAK_RATE)
