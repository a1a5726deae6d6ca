package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mockgateway/internal/audit"
)

// auditReport is the part of the audit's JSON report these tests read.
type auditReport struct {
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exit_code"`
	Canaries struct {
		Count int `json:"count"`
	} `json:"canaries"`
	Traffic struct {
		Requests int `json:"requests"`
		Reached  int `json:"reached"`
	} `json:"traffic"`
	Wait struct {
		LimitMS  int64    `json:"limit_ms"`
		WaitedMS int64    `json:"waited_ms"`
		TimedOut []string `json:"timed_out"`
	} `json:"wait"`
	Sources []struct {
		Name           string           `json:"name"`
		Verdict        string           `json:"verdict"`
		Reason         string           `json:"reason"`
		Searched       map[string]int64 `json:"searched"`
		ProbesSeen     int              `json:"probes_seen"`
		ProbesExpected int              `json:"probes_expected"`
	} `json:"sources"`
	Leaks    []map[string]any `json:"leaks"`
	Problems []string         `json:"problems"`
	Notes    []string         `json:"notes"`
}

// runAudit runs `mockgateway audit` through run, exactly as main does, and returns its JSON
// report and exit code.
func runAudit(t *testing.T, args ...string) (auditReport, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"audit", "--format", "json"}, args...), func(string) string { return "" }, &stdout, &stderr)
	code := 0
	if err != nil {
		var coded interface{ ExitCode() int }
		if !errors.As(err, &coded) {
			t.Fatalf("audit returned %v, want an error with an exit code", err)
		}
		code = coded.ExitCode()
	}
	var rep auditReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if rep.ExitCode != code {
		t.Errorf("report exit_code %d, exit %d", rep.ExitCode, code)
	}
	return rep, code
}

// requireClean fails unless the audit was clean and every source searched something that
// includes the audit's own traffic.
func requireClean(t *testing.T, rep auditReport, code int, want ...string) {
	t.Helper()
	if code != audit.ExitClean || rep.Verdict != "clean" {
		t.Fatalf("audit of the real service: exit %d, verdict %s\nleaks: %v\nproblems: %v", code, rep.Verdict, rep.Leaks, rep.Problems)
	}
	// The service runs with its defaults, probes untraced: every source had all the audit could
	// expect of it before --wait ran out.
	if len(rep.Wait.TimedOut) != 0 {
		t.Errorf("still waiting at --wait (%dms of %dms): %v", rep.Wait.WaitedMS, rep.Wait.LimitMS, rep.Wait.TimedOut)
	}
	if rep.Canaries.Count < 1000 || rep.Traffic.Reached < 80 {
		t.Errorf("only %d canaries, %d requests reached the service", rep.Canaries.Count, rep.Traffic.Reached)
	}
	primary := map[string]string{"responses": "responses", "logs": "lines", "metrics": "series", "traces:embedded": "spans", "traces:otlp": "spans"}
	got := map[string]bool{}
	for _, s := range rep.Sources {
		got[s.Name] = true
		if s.Searched[primary[s.Name]] == 0 {
			t.Errorf("%s searched nothing: %v", s.Name, s.Searched)
		}
		if s.ProbesExpected > 0 && s.ProbesSeen*10 < s.ProbesExpected*9 {
			t.Errorf("%s shows only %d of the %d requests", s.Name, s.ProbesSeen, s.ProbesExpected)
		}
		t.Logf("%s: %s, searched %v", s.Name, s.Verdict, s.Searched)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no %s source in the report", w)
		}
	}
	// Every probe with an expectation (the browser's Origin, a body without Content-Type, ...)
	// was answered as the contract says.
	for _, n := range rep.Notes {
		if strings.Contains(n, "not as the contract says") {
			t.Error(n)
		}
	}
}

func TestAuditRealServiceClean(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "mockgateway.log")
	in := startService(t, nil, "--log-file", logFile)
	rep, code := runAudit(t, "--target", in.URL, "--logs", logFile, "--wait", "10s")
	requireClean(t, rep, code, "responses", "logs", "metrics", "traces:embedded")
}

// The service exports to a receiver the audit runs, over OTLP/HTTP (the default protocol) and
// OTLP/gRPC.
func TestAuditRealServiceOTLP(t *testing.T) {
	for _, c := range []struct{ protocol, scheme string }{{"http/protobuf", "otlp"}, {"grpc", "otlp+grpc"}} {
		t.Run(c.protocol, func(t *testing.T) {
			// A free port for the audit's receiver; the service exports to it from its first span.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			logFile := filepath.Join(t.TempDir(), "mockgateway.log")
			in := startService(t, map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr,
				"OTEL_EXPORTER_OTLP_PROTOCOL": c.protocol,
				"OTEL_BSP_SCHEDULE_DELAY":     "200",
			}, "--log-file", logFile)
			rep, code := runAudit(t, "--target", in.URL, "--logs", logFile, "--traces", "embedded,"+c.scheme+"://"+addr, "--wait", "15s")
			requireClean(t, rep, code, "traces:otlp", "traces:embedded")
		})
	}
}

func TestAuditRealServiceWithAPIKey(t *testing.T) {
	in := startService(t, nil, "--api-key", "sk-local-audit-key-0123")
	rep, code := runAudit(t, "--target", in.URL, "--api-key", "sk-local-audit-key-0123", "--wait", "10s")
	requireClean(t, rep, code, "metrics", "traces:embedded")

	// Without the key every chat path answers 401: the audit says it could not run them.
	rep, code = runAudit(t, "--target", in.URL, "--wait", "2s")
	if code != audit.ExitIncomplete || !strings.Contains(strings.Join(rep.Problems, " "), "API key") {
		t.Errorf("without --api-key: exit %d, problems %v", code, rep.Problems)
	}
}

func TestAuditUnreachableSourceExits2(t *testing.T) {
	in := startService(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	rep, code := runAudit(t, "--target", in.URL, "--prometheus", "http://"+closed, "--wait", "2s")
	if code != audit.ExitIncomplete || rep.Verdict != "incomplete" {
		t.Fatalf("unreachable Prometheus: exit %d verdict %s, want 2", code, rep.Verdict)
	}
	rep, code = runAudit(t, "--target", "http://"+closed, "--wait", "1s")
	if code != audit.ExitIncomplete {
		t.Fatalf("unreachable target: exit %d, want 2", code)
	}
	missingLog := filepath.Join(t.TempDir(), "never-written.log")
	rep, code = runAudit(t, "--target", in.URL, "--logs", missingLog, "--wait", "1s")
	if code != audit.ExitIncomplete {
		t.Fatalf("missing log file: exit %d, want 2", code)
	}
	if _, err := os.Stat(missingLog); err == nil {
		t.Error("the audit created the log file it was asked to read")
	}
}
