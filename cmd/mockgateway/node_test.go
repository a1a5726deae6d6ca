package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// TestNodeClients runs the Node clients of internal/clientcompat/node, unmodified, against the
// real service: every *.test.mjs there — the official openai SDK, the Vercel AI SDK, LangChain JS
// (@langchain/openai) and the Agents SDK (@openai/agents), over Chat Completions and the
// Responses API. An end-to-end test: `make test` installs them first (npm ci) and sets the
// switch; under it a missing Node or missing packages fail this test, never skip it.
func TestNodeClients(t *testing.T) {
	testutil.EndToEnd(t)
	dir, err := filepath.Abs("../../internal/clientcompat/node")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the client-compatibility tests need Node 20+ (make test installs the packages)")
	}
	for _, pkg := range []string{"openai", "ai", "@langchain/openai", "@openai/agents"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
			t.Fatalf("%s is not installed in %s: run 'make deps' (make test does)", pkg, dir)
		}
	}
	suites, err := filepath.Glob(filepath.Join(dir, "*.test.mjs"))
	if err != nil || len(suites) < 3 {
		t.Fatalf("the Node suites are missing from %s: %v %v", dir, suites, err)
	}
	for i := range suites {
		suites[i] = filepath.Base(suites[i]) // Glob's order is sorted
	}
	in := startService(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, suites...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MOCKGATEWAY_BASE_URL="+in.URL+"/v1", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node clients failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
