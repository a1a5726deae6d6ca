package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestAuditUnreachablePrometheus(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--prometheus", "http://"+closedPort(t), "--wait", "2s")
	if code != ExitIncomplete || rep.Verdict != "incomplete" {
		t.Fatalf("exit %d verdict %s, want 2", code, rep.Verdict)
	}
	if s := rep.source("prometheus"); s == nil || s.Verdict != "error" {
		t.Fatalf("prometheus source: %+v", s)
	}
	if len(rep.Problems) == 0 {
		t.Error("no problem reported")
	}
}

func TestAuditUnreachableTarget(t *testing.T) {
	rep, code, _ := runAudit(t, "--target", "http://"+closedPort(t), "--wait", "1s")
	if code != ExitIncomplete || rep.Verdict != "incomplete" {
		t.Fatalf("exit %d verdict %s, want 2", code, rep.Verdict)
	}
	if len(rep.Problems) == 0 || !strings.Contains(strings.Join(rep.Problems, " "), "unreachable") {
		t.Errorf("problems = %v", rep.Problems)
	}
}

func TestAuditEmptySourcesAreNotAPass(t *testing.T) {
	f := newFakeTarget(t, leaks{emptyTraces: true, noLogs: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "1s")
	if code != ExitIncomplete {
		dump(t, rep)
		t.Fatalf("exit %d, want 2", code)
	}
	for _, name := range []string{"logs", "traces:embedded"} {
		if s := rep.source(name); s.Verdict != "empty" {
			t.Errorf("%s: verdict %s, want empty", name, s.Verdict)
		}
	}
}

func TestAuditStaleLogFileIsNotAPass(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	stale := filepath.Join(t.TempDir(), "other.log")
	if err := os.WriteFile(stale, []byte(`{"msg":"request","request_id":"req_1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", stale, "--wait", "1s")
	if code != ExitIncomplete || rep.source("logs").Verdict != "not_captured" {
		t.Fatalf("exit %d, logs %+v", code, rep.source("logs"))
	}
}

func TestAuditGarbageJaeger(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html>not jaeger</html>")
	}))
	defer html.Close()
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--traces", html.URL, "--wait", "1s")
	if code != ExitIncomplete || rep.source("traces:jaeger").Verdict != "error" {
		t.Fatalf("exit %d, jaeger %+v", code, rep.source("traces:jaeger"))
	}
}

func TestAuditLogsFromStdin(t *testing.T) {
	f := newFakeTarget(t, leaks{logPrompt: true})
	pr, pw := io.Pipe()
	// Feed the log file to stdin as it grows, like `tail -f`.
	stop := make(chan struct{})
	go func() {
		defer pw.Close()
		var off int64
		for {
			data, _ := os.ReadFile(f.logPath)
			if int64(len(data)) > off {
				_, _ = pw.Write(data[off:])
				off = int64(len(data))
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer close(stop)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--format", "json", "--target", f.srv.URL, "--logs", "-", "--traces", "none", "--wait", "3s"},
		func(string) string { return "" }, pr, &stdout, &stderr)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitLeak {
		t.Fatalf("err = %v, want a leak", err)
	}
	var rep Report
	_ = json.Unmarshal(stdout.Bytes(), &rep)
	if len(rep.leaksIn("logs", "user message")) == 0 {
		t.Fatal("the prompt in the piped log was not found")
	}
}
