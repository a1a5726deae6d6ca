package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestNodeClients runs the official openai Node SDK and the Vercel AI SDK (chat mode), unmodified,
// against the real service: internal/clientcompat/node. `make test` installs them first (npm ci);
// a missing Node or missing packages fail this test rather than skip it.
func TestNodeClients(t *testing.T) {
	dir, err := filepath.Abs("../../internal/clientcompat/node")
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the client-compatibility tests need Node 20+ (make test installs the packages)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Fatalf("the Node SDKs are not installed in %s: run 'make deps' (make test does)", dir)
	}
	in := startService(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "compat.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MOCKGATEWAY_BASE_URL="+in.URL+"/v1", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node clients failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
