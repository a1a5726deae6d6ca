package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runAudit runs the audit with a JSON report and returns the report and the exit code.
func runAudit(t *testing.T, args ...string) (*Report, int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"--format", "json"}, args...)
	err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	code := 0
	if err != nil {
		var ee *ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("Run returned %T %v, want *ExitError", err, err)
		}
		code = ee.ExitCode()
	}
	var rep Report
	if stdout.Len() > 0 {
		if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
			t.Fatalf("report is not JSON: %v\n%s", jerr, stdout.String())
		}
		if rep.ExitCode != code {
			t.Errorf("report exit_code %d, Run's %d", rep.ExitCode, code)
		}
	}
	return &rep, code, stderr.String()
}

func (rep *Report) source(name string) *SourceReport {
	for i := range rep.Sources {
		if rep.Sources[i].Name == name {
			return &rep.Sources[i]
		}
	}
	return nil
}

// leaksIn returns the leaks found in source whose place contains place.
func (rep *Report) leaksIn(source, place string) []Finding {
	var out []Finding
	for _, f := range rep.Leaks {
		if f.Source == source && strings.Contains(f.Place, place) {
			out = append(out, f)
		}
	}
	return out
}

func dump(t *testing.T, rep *Report) {
	t.Helper()
	var b strings.Builder
	_ = rep.writeText(&b)
	t.Log("\n" + b.String())
}

func TestAuditCleanFake(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	j := fakeJaeger(t, f)
	p := fakePrometheus(t, f.srv.URL)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--traces", "embedded,"+j.URL, "--prometheus", p.URL, "--wait", "3s")
	if code != 0 || rep.Verdict != "clean" {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, want a clean audit of a clean target", code, rep.Verdict)
	}
	for _, s := range rep.Sources {
		if s.Verdict != "clean" || s.Searched[primaryCount[s.Kind]] == 0 {
			t.Errorf("%s: %s, searched %v", s.Name, s.Verdict, s.Searched)
		}
	}
	// Jaeger's trace-state fields hold the caller's tracestate: allowed, and reported.
	allowed := 0
	for _, a := range rep.Allowed {
		if a.Source == "traces:jaeger" && strings.Contains(strings.ToLower(a.Field), "tracestate") {
			allowed++
		}
	}
	if allowed == 0 {
		t.Error("the tracestate in Jaeger's traceState / w3c.tracestate was not reported as allowed")
	}
	if rep.Canaries.Count < 1000 || rep.Traffic.Requests < 80 {
		t.Errorf("only %d canaries in %d requests", rep.Canaries.Count, rep.Traffic.Requests)
	}
}

func TestAuditFindsPromptInLogs(t *testing.T) {
	f := newFakeTarget(t, leaks{logPrompt: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("logs", "last user message")
	if len(found) == 0 {
		dump(t, rep)
		t.Fatal("the logged prompt was not attributed to the logs and the last user message")
	}
	if f := found[0]; f.Field != "prompt" || f.Probe == "" || !strings.Contains(f.Excerpt, "‹"+f.Canary+"›") {
		t.Errorf("finding = %+v", f)
	}
	if s := rep.source("logs"); s.Verdict != "leak" || s.Searched["lines"] == 0 {
		t.Errorf("logs source: %+v", s)
	}
	for _, l := range rep.Leaks {
		if l.Source != "logs" {
			t.Errorf("leak attributed to %s: %+v", l.Source, l)
		}
	}
	assertNoCanaryValues(t, rep)
}

// A Responses request's instructions in the access log: the audit's Responses probes carry
// canaries there, and finds them.
func TestAuditFindsResponsesInstructionsInLogs(t *testing.T) {
	f := newFakeTarget(t, leaks{logInstructions: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("logs", "responses instructions")
	if len(found) == 0 {
		t.Fatalf("the Responses instructions in the log were not reported: %+v", rep.Leaks)
	}
	for _, l := range found {
		if !strings.HasPrefix(l.ProbeName, "responses ") {
			t.Errorf("leak attributed to %s %q, not a Responses probe", l.Probe, l.ProbeName)
		}
	}
}

// A Messages request's metadata.user_id in the access log: the audit's Messages probes carry
// canaries there, and finds them.
func TestAuditFindsMessagesMetadataInLogs(t *testing.T) {
	f := newFakeTarget(t, leaks{logMetadata: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("logs", "messages metadata.user_id")
	if len(found) == 0 {
		t.Fatalf("the Messages metadata in the log was not reported: %+v", rep.Leaks)
	}
	for _, l := range found {
		if !strings.HasPrefix(l.ProbeName, "messages ") {
			t.Errorf("leak attributed to %s %q, not a Messages probe", l.Probe, l.ProbeName)
		}
	}
}

func TestAuditFindsAuthorizationInSpans(t *testing.T) {
	f := newFakeTarget(t, leaks{authInSpan: true})
	j := fakeJaeger(t, f)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--traces", "embedded,"+j.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	for _, src := range []string{"traces:embedded", "traces:jaeger"} {
		found := rep.leaksIn(src, "Authorization: Bearer token")
		if len(found) == 0 {
			dump(t, rep)
			t.Fatalf("%s: the Authorization header in a span attribute was not found", src)
		}
		if !strings.Contains(found[0].Field, "authorization") {
			t.Errorf("%s: field %q does not name the attribute", src, found[0].Field)
		}
	}
	assertNoCanaryValues(t, rep)
	if rep.source("traces:embedded").Leaks < 50 {
		t.Errorf("only %d leaks: every traced request carried a canary bearer token", rep.source("traces:embedded").Leaks)
	}
}

// The caller's tracestate may sit in a span's own trace-state field, and nowhere else: not even
// in an attribute named after it.
func TestAuditTraceStateOnlyInItsField(t *testing.T) {
	f := newFakeTarget(t, leaks{stateAttr: true})
	j := fakeJaeger(t, f)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--traces", "embedded,"+j.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	for _, src := range []string{"traces:embedded", "traces:jaeger"} {
		found := rep.leaksIn(src, "tracestate header value")
		if len(found) == 0 || !strings.Contains(found[0].Field, "http.request.header.tracestate") {
			t.Errorf("%s: %+v", src, found)
		}
	}
	allowed := 0
	for _, a := range rep.Allowed {
		if a.Source == "traces:jaeger" && (a.Field == "traceState" || a.Field == "tags[w3c.tracestate]") {
			allowed++
		}
	}
	if allowed == 0 {
		t.Error("the trace-state fields themselves were not allowed")
	}
}

func TestAuditFindsAPIKeyInSpans(t *testing.T) {
	f := newFakeTarget(t, leaks{authInSpan: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--api-key", "sk-local-audit-key-123", "--wait", "3s")
	if code != ExitLeak {
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("traces:embedded", "the local API key")
	if len(found) == 0 || found[0].Canary != "s1" || strings.Contains(found[0].Excerpt, "sk-local-audit-key-123") {
		dump(t, rep)
		t.Fatalf("the API key in a span: %+v", found)
	}
}

func TestAuditFindsMessageInErrorBody(t *testing.T) {
	f := newFakeTarget(t, leaks{echoInError: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	var found []Finding
	for _, f := range rep.leaksIn("responses", "system message") {
		if strings.Contains(f.ProbeName, "unknown model name") && f.Field == "error.message" {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		dump(t, rep)
		t.Fatal("the echoed message was not found in the error.message of the unknown-model responses")
	}
}

func TestAuditFindsModelNameAsMetricLabel(t *testing.T) {
	f := newFakeTarget(t, leaks{modelLabel: true})
	p := fakePrometheus(t, f.srv.URL)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--prometheus", p.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	for _, src := range []string{"metrics", "prometheus"} {
		found := rep.leaksIn(src, "model name (unknown model")
		if len(found) == 0 {
			dump(t, rep)
			t.Fatalf("%s: the model name used as a label was not found", src)
		}
		if found[0].Probe == "" || !strings.Contains(found[0].ProbeName, "unknown model") {
			t.Errorf("%s: finding = %+v", src, found[0])
		}
	}
	if s := rep.source("prometheus"); s.Searched["label_values"] == 0 || s.Searched["series"] == 0 {
		t.Errorf("prometheus searched %v", s.Searched)
	}
}

func TestAuditEnvironmentFallbacks(t *testing.T) {
	env := map[string]string{"MOCKGATEWAY_AUDIT_TARGET": "http://example.test:1", "MOCKGATEWAY_AUDIT_WAIT": "7s", "MOCKGATEWAY_AUDIT_TRACES": "none", "MOCKGATEWAY_AUDIT_METRICS_URL": "none"}
	cfg, err := parseConfig([]string{"--wait", "2s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.target != "http://example.test:1" || cfg.wait != 2*time.Second || len(cfg.traces) != 0 || cfg.metricsURL != "" {
		t.Errorf("cfg = %+v", cfg)
	}
	for _, bad := range [][]string{{"--format", "xml"}, {"--traces", "ftp://x"}, {"--target", "nope"}, {"--wait", "soon"}, {"extra"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	var stderr bytes.Buffer
	err = run(context.Background(), []string{"--format", "xml"}, func(string) string { return "" }, nil, io.Discard, &stderr)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitIncomplete {
		t.Errorf("a bad flag: %v, want exit 2", err)
	}
}

// assertNoCanaryValues checks that the report names canaries by id only. The run's canaries
// are not known here, but they are 20 characters of [a-z0-9] sharing a 12-character prefix:
// two such words with one prefix in the report would be canaries.
func assertNoCanaryValues(t *testing.T, rep *Report) {
	t.Helper()
	data, _ := json.Marshal(rep)
	var b strings.Builder
	_ = rep.writeText(&b)
	word := regexp.MustCompile(`[a-z0-9]+`)
	for _, text := range []string{string(data), b.String()} {
		if !regexp.MustCompile(`‹c\d{4}›`).MatchString(text) {
			t.Error("no masked canary in the report")
		}
		byPrefix := map[string]map[string]bool{}
		for _, w := range word.FindAllString(strings.ToLower(text), -1) {
			if len(w) < canaryLen {
				continue
			}
			for i := 0; i+canaryLen <= len(w); i++ {
				p := w[i : i+canaryPrefixLen]
				if byPrefix[p] == nil {
					byPrefix[p] = map[string]bool{}
				}
				byPrefix[p][w[i:i+canaryLen]] = true
			}
		}
		for p, words := range byPrefix {
			if len(words) > 1 {
				t.Fatalf("the report holds canary values (prefix %s…)", p[:4])
			}
		}
	}
}

// TestReportableCode: the report prints a target's error code only when it has a normalized
// code's shape; anything else (a canary, a key) is named by its shape alone.
func TestReportableCode(t *testing.T) {
	for in, want := range map[string]string{
		"simulated_timeout":          "simulated_timeout",
		"":                           "",
		"mgcanary-7f3a-leaked":       "(not a normalized code)",
		"sk-live-Key":                "(not a normalized code)",
		strings.Repeat("a", 65):      "(not a normalized code)",
		"invalid_api_key\nsecret=xy": "(not a normalized code)",
	} {
		if got := reportableCode(in); got != want {
			t.Errorf("reportableCode(%q) = %q, want %q", in, got, want)
		}
	}
}
