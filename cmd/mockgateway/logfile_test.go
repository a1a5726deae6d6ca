package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogFileSymlinkStopsStartUp: a symbolic link at --log-file stops the service before it
// listens, with an error naming the flag, and the file it points to gets nothing.
func TestLogFileSymlinkStopsStartUp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mockgateway.log")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal("no symbolic link could be made:", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	listened := false
	err := serve(ctx, []string{"--addr", "127.0.0.1:0", "--log-file", path, "--drain-quiet", "0s"}, func(string) string { return "" }, io.Discard, io.Discard, func(net.Addr) {
		listened = true
		cancel() // it should never have got this far: stop it
	})
	if err == nil || !strings.Contains(err.Error(), "log-file") || listened {
		t.Errorf("serve with a symbolic link at --log-file: %v (listened: %v), want an error naming log-file before listening", err, listened)
	}
	if data, _ := os.ReadFile(target); len(data) != 0 {
		t.Errorf("the link's target got %d bytes", len(data))
	}
}
