package testutil

import (
	"os"
	"testing"
)

// EndToEndEnv is the one switch for the end-to-end tests: the ones that need more than Go —
// Node packages, a coding agent's CLI, Chromium, Prometheus, Redis, or another module's race
// run. `make test` and `.ci/run` always set it; `go test ./...` on a fresh clone leaves it unset.
const EndToEndEnv = "MOCKGATEWAY_E2E"

// EndToEnd marks t as an end-to-end test. Without the switch it skips, saying how to run it;
// with the switch it returns, and from then on a missing tool must fail the test (t.Fatal),
// never skip it.
func EndToEnd(tb testing.TB) {
	tb.Helper()
	if os.Getenv(EndToEndEnv) != "1" {
		tb.Skipf("end-to-end test: set %s=1 to run it (make test does, after installing what it needs)", EndToEndEnv)
	}
}
