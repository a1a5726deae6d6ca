# make test installs what the tests need, then runs every test with the race detector.
GO ?= go
NODE_COMPAT := internal/clientcompat/node

.PHONY: test check deps run build bench

test: deps check
	$(GO) test -race -count=1 -timeout 12m ./...

# check: formatting and vet, the mechanical part of review.
check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# deps: what the tests need beyond the Go toolchain — the Node SDK and Vercel AI SDK used by the
# client-compatibility test, installed from the lock file. A missing tool fails the test run.
deps:
	@command -v node >/dev/null || { echo "node is required for the client-compatibility tests (apt-get install nodejs npm)"; exit 1; }
	cd $(NODE_COMPAT) && npm ci --no-audit --no-fund --loglevel=error

run:
	$(GO) run ./cmd/mockgateway

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/mockgateway ./cmd/mockgateway

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
