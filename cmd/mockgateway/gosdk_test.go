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

// TestGoClients runs the third-party Go clients of internal/clientcompat/gosdk (go-openai and
// langchaingo, a module of its own) unmodified against the real service. An end-to-end test:
// it is that module's whole `go test -race`, minutes of building on a small machine.
func TestGoClients(t *testing.T) {
	testutil.EndToEnd(t)
	dir, err := filepath.Abs("../../internal/clientcompat/gosdk")
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is not on PATH")
	}
	in := startService(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "test", "-race", "-count=1", "-v", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MOCKGATEWAY_BASE_URL="+in.URL+"/v1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go clients failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
