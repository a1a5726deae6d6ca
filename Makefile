# make test installs what the tests need, then runs every test with the race detector (see test:
# below). go test ./... alone needs only Go: it leaves out the end-to-end tests.
GO ?= go
# The folders of Node packages the end-to-end tests run, each installed from its lock file: the
# OpenAI clients' suites, the Codex CLI, Claude Code with the Anthropic clients, opencode,
# Gemini CLI with the Google Gen AI SDK, and Portkey's AI gateway.
NODE_DIRS := internal/clientcompat/node internal/clientcompat/codex internal/clientcompat/anthropic internal/clientcompat/opencode internal/clientcompat/google \
	internal/clientcompat/portkey

# Fuzz targets (package:function). make test runs each briefly, by a fixed count of inputs
# rather than a duration, so a slow machine does the same work instead of timing out.
FUZZ_TARGETS := ./internal/protocol:FuzzDecodeChatRequest ./internal/protocol:FuzzSplitMatchesEncodingJSON ./internal/protocol:FuzzAppendMatchesEncodingJSON ./internal/simulation:FuzzParseFault \
	./internal/simulation:FuzzParseLatency ./internal/dialect/chat:FuzzChatStream ./internal/generate:FuzzSchemaInstance ./observability:FuzzDecodeSpanRecord \
	./internal/jsonenc:FuzzAppendStringMatchesEncodingJSON ./internal/jsonenc:FuzzAppendSlogStringMatchesSlog ./internal/jsonenc:FuzzAppendSlogFloatMatchesSlog \
	./internal/protocol:FuzzDecodeResponsesRequest ./internal/protocol:FuzzEchoAsBefore ./internal/jsonscan:FuzzAppendCompactMatchesEncodingJSON \
	./internal/jsonscan:FuzzValidMatchesEncodingJSON ./internal/jsonscan:FuzzUnquoteMatchesEncodingJSON \
	./internal/protocol:FuzzDecodeMessagesRequest ./internal/protocol:FuzzAnthropicAppendMatchesEncodingJSON ./internal/journal:FuzzAppendJSONMatchesEncodingJSON
FUZZ_COUNT ?= 20000x

.PHONY: test test-root test-deploy check deps node-packages chromium redis compose prometheus fuzz run build bench soak hostile

# make test is everything a change must pass: what the tests need beyond Go, check, every test
# with the race detector — end-to-end ones included — and the fuzz targets. Each phase says what
# it does as it starts, with the rough cost of the one-time work of a fresh machine. The longest
# of those, building Prometheus for deploy/test, runs beside the root module's tests (niced, so
# the tests keep the CPU) and is waited for before deploy/test; if it fails, make test fails.
# The end-to-end tests (Node clients, Chromium, Prometheus, the Go clients' module) run only with
# MOCKGATEWAY_E2E=1, and under it a missing tool fails them (internal/testutil.EndToEnd).
test: export MOCKGATEWAY_E2E = 1
test: node-packages chromium redis compose check
	@echo "==> test: the root module's tests start; beside them, niced, Prometheus for deploy/test is built unless it is cached"
	@$(MAKE) --no-print-directory -j2 test-root prometheus
	@$(MAKE) --no-print-directory test-deploy
	@$(MAKE) --no-print-directory fuzz
	@echo "==> make test: passed"

test-root:
	@echo "==> test: the root module's tests with -race, end-to-end ones included (a fresh machine first builds every dependency with the race detector: several minutes)"
	$(GO) test -race -count=1 -timeout 12m ./...
	@echo "==> test: stack sizes and allocation counts, without -race"
	@# They hold only for what production runs: the race detector doubles stacks and changes
	@# what escapes (the !race files).
	$(GO) test -count=1 -run '^(TestParkedStreamStack|TestBlockedStreamStack)$$' ./internal/server
	$(GO) test -count=1 -run '^TestResponsesDecodeStack$$' ./internal/protocol
	$(GO) test -count=1 -run '^(TestShortAnswerAllocations|TestRequestAllocations)$$' ./internal/generate ./observability

test-deploy:
	@echo "==> test: deploy/test with -race (the compose file, Prometheus rules and dashboards against the built service)"
	cd deploy/test && $(GO) test -race -count=1 -timeout 10m ./...
	@echo "==> test: deploy/helm/test with -race (a fresh machine first downloads and builds the Helm SDK and the Kubernetes libraries: several minutes)"
	cd deploy/helm/test && $(GO) test -race -count=1 -timeout 10m ./...

fuzz:
	@echo "==> fuzz: $(words $(FUZZ_TARGETS)) targets, $(FUZZ_COUNT) inputs each"
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$fn ($(FUZZ_COUNT))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZ_COUNT) -parallel 2 $$pkg || exit 1; \
	done

# check: formatting, vet and staticcheck (pinned; go run fetches and caches it), the mechanical
# part of review, over the root module and the three nested ones.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
check:
	@echo "==> check: gofmt, go vet and staticcheck over the four modules (a fresh machine first downloads and builds staticcheck and every module's dependencies)"
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

# deps: what the tests need beyond the Go toolchain, each installed or built once and then kept:
# the Node clients of the client-compatibility tests, the Codex CLI and Claude Code (from their
# lock files, again only when one changes); Debian's chromium for the console's browser test and redis-server for the shared-state tests; and for deploy/test, Debian's
# docker-compose and Prometheus v3 (server and promtool) built from its Go module and cached in
# ~/.cache/mockgateway (deploy/test/deps.sh). A missing tool fails the test run.
deps: node-packages chromium redis compose prometheus

node-packages: $(addsuffix /node_modules/.package-lock.json,$(NODE_DIRS))

# npm writes node_modules/.package-lock.json on every install: newer than the lock file, the
# packages are those the lock file names.
%/node_modules/.package-lock.json: %/package-lock.json
	@command -v node >/dev/null || { echo "node is required for the end-to-end tests (apt-get install nodejs npm)"; exit 1; }
	@echo "==> deps: the Node packages of $* (npm ci: under a minute; again only when its package-lock.json changes)"
	cd $* && npm ci --no-audit --no-fund --loglevel=error

# Portkey's gateway is installed with a patch of its own (its postinstall applies it): a changed
# patch installs it again.
internal/clientcompat/portkey/node_modules/.package-lock.json: $(wildcard internal/clientcompat/portkey/patches/*.patch)

# Debian's chromium, which the console's browser test drives (cmd/mockgateway/console_test.go).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "==> deps: installing Debian's chromium for the console's browser test (apt-get, once)"; \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y chromium; }
	@command -v chromium >/dev/null 2>&1 || { echo "chromium is still missing after apt-get install chromium"; exit 1; }

# Debian's redis-server, which the shared-state tests start (internal/state, cmd/mockgateway), at
# the version they were written against; should Debian's archive have moved past it (a security
# update), the archive's own 7.0 is installed instead, and said so.
REDIS_VERSION := 5:7.0.15-1~deb12u10
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "==> deps: installing Debian's redis-server $(REDIS_VERSION) for the shared-state tests (apt-get, once)"; \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; export DEBIAN_FRONTEND=noninteractive; \
		$$sudo apt-get update && { $$sudo apt-get install -y redis-server=$(REDIS_VERSION) || \
		{ echo "==> deps: redis-server $(REDIS_VERSION) is gone from the archive; installing its current version"; $$sudo apt-get install -y redis-server; }; }; }
	@command -v redis-server >/dev/null 2>&1 || { echo "redis-server is still missing after apt-get install redis-server"; exit 1; }

compose:
	@bash deploy/test/deps.sh compose

prometheus:
	@nice -n 19 bash deploy/test/deps.sh prometheus || { \
		echo "==> make: building Prometheus for deploy/test FAILED (its output is above); deploy/test cannot run without it" >&2; exit 1; }

run:
	$(GO) run ./cmd/mockgateway

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/mockgateway ./cmd/mockgateway

# bench: Go benchmarks, wrk load runs of the built binary with full telemetry next to a bare
# net/http baseline (cmd/baseline), with --state-store on a redis-server it starts, with a quota
# no load reaches (x-mock-quota) and with a capacity none fills, and RSS with 10,000 open
# streams; one Markdown table.
BENCH_FLAGS ?=
bench: redis
	@command -v wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }
	$(GO) run ./cmd/loadtest bench $(BENCH_FLAGS)

# hostile: the hostile requests of the limits issue against the built binary, each on a fresh
# server; prints CPU, peak RSS and the answer per case. A benchmark: it reports, it does not time out.
# HOSTILE_FLAGS='-run nested' runs only the cases whose name matches.
HOSTILE_FLAGS ?=
hostile:
	$(GO) run ./cmd/loadtest hostile $(HOSTILE_FLAGS)

# soak: mixed traffic for a set duration, sampled every 10s; not part of make test.
SOAK_DURATION ?= 10m
SOAK_RATE ?= 50
soak:
	$(GO) run ./cmd/loadtest soak --duration $(SOAK_DURATION) --rate $(SOAK_RATE)
