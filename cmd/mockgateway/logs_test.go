package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mockgateway/internal/testutil"
)

// serveLogged serves with args until do has made its requests, then stops the service, and
// returns what it wrote to stderr and to its --log-file: once run has returned, both are whole.
func serveLogged(t *testing.T, do func(url string), args ...string) (stderr, file []map[string]any) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "mockgateway.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errOut testutil.SyncBuffer
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	args = append([]string{"--addr", "127.0.0.1:0", "--log-file", logFile, "--drain-quiet", "0s"}, args...)
	go func() {
		done <- serve(ctx, args, func(string) string { return "" }, io.Discard, &errOut, func(a net.Addr) { addr <- a })
	}()
	select {
	case a := <-addr:
		do("http://" + a.String())
	case err := <-done:
		t.Fatalf("run returned before listening: %v\n%s", err, errOut.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	return decodeLines(t, errOut.String()), decodeLines(t, string(data))
}

func decodeLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func accessLines(recs []map[string]any) (lines []map[string]any) {
	for _, r := range recs {
		if r["msg"] == "request" {
			lines = append(lines, r)
		}
	}
	return lines
}

func hasMsg(recs []map[string]any, msg string) bool {
	for _, r := range recs {
		if r["msg"] == msg {
			return true
		}
	}
	return false
}

func postChat(t *testing.T, url, body string, header ...string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+chatRoute, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // a cut stream ends in an error here: that is the point
	resp.Body.Close()
}

const logChatBody = `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`

// TestLogFileIsTheAccessLogsOneSink: with --log-file the access lines go to the file alone;
// stderr keeps what a person starting the service needs — the listening address, shutdown —
// unless --log-stderr=true asks for the access lines there too.
func TestLogFileIsTheAccessLogsOneSink(t *testing.T) {
	for _, c := range []struct {
		args       []string
		stderrToo  bool
		accessWant int
	}{{nil, false, 3}, {[]string{"--log-stderr=true"}, true, 3}} {
		stderr, file := serveLogged(t, func(url string) {
			for range 3 {
				postChat(t, url, logChatBody)
			}
		}, c.args...)
		if n := len(accessLines(file)); n != c.accessWant {
			t.Errorf("%v: %d access lines in the file, want %d", c.args, n, c.accessWant)
		}
		if n := len(accessLines(stderr)); (n == c.accessWant) != c.stderrToo || (!c.stderrToo && n != 0) {
			t.Errorf("%v: %d access lines on stderr, want them there: %v", c.args, n, c.stderrToo)
		}
		for _, msg := range []string{"listening", "shutting down", "stopped"} {
			if !hasMsg(stderr, msg) || !hasMsg(file, msg) {
				t.Errorf("%v: %q is not on stderr and in the file", c.args, msg)
			}
		}
	}
}

// TestAccessLogErrorsKeepsOnlyErrors: --access-log=errors writes no line for a success, and one
// for each 4xx and for a stream cut short — whose status is 200 and whose failure is only in
// its outcome. Lifecycle lines are kept.
func TestAccessLogErrorsKeepsOnlyErrors(t *testing.T) {
	_, file := serveLogged(t, func(url string) {
		postChat(t, url, logChatBody)
		postChat(t, url, `{"model":"mock-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		postChat(t, url, `{"model":"no-such-model","messages":[{"role":"user","content":"hi"}]}`)
		postChat(t, url, `{"model":"mock-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"x-mock-fault", "stream_cut;after=2")
		postChat(t, url, logChatBody)
	}, "--access-log", "errors")
	lines := accessLines(file)
	if len(lines) != 2 {
		t.Fatalf("%d access lines, want the 404 and the cut stream: %v", len(lines), lines)
	}
	if lines[0]["status"] != float64(http.StatusNotFound) || lines[1]["stream_outcome"] != "aborted" {
		t.Errorf("kept %v", lines)
	}
	if !hasMsg(file, "listening") || !hasMsg(file, "stopped") {
		t.Error("lifecycle lines were dropped")
	}
}
