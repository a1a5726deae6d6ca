package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

const logCanary = "canary-91bd"

var (
	testTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testSpanID  = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

func spanContext() context.Context {
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    testTraceID,
		SpanID:     testSpanID,
		TraceFlags: trace.FlagsSampled,
	}))
}

func newTestLogger(t *testing.T, level, format string) (*slog.Logger, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	l, err := NewLogger(&buf, level, format)
	if err != nil {
		t.Fatal(err)
	}
	return l, &buf
}

// lastJSON decodes the one line logged into buf.
func lastJSON(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one log line, got %d: %q", len(lines), buf.String())
	}
	if strings.Contains(lines[0], logCanary) {
		t.Errorf("log line leaks a non-allowlisted value: %s", lines[0])
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, lines[0])
	}
	buf.Reset()
	return m
}

func assertTraceIDs(t *testing.T, m map[string]any) {
	t.Helper()
	if m["trace_id"] != testTraceID.String() || m["span_id"] != testSpanID.String() {
		t.Errorf("trace_id/span_id = %v/%v, want top-level %s/%s", m["trace_id"], m["span_id"], testTraceID, testSpanID)
	}
}

func TestLoggerAddsTraceIDsAndFilters(t *testing.T) {
	l, buf := newTestLogger(t, "info", "json")
	ctx := spanContext()

	l.InfoContext(ctx, "request", "method", "GET", "status", 200, "prompt", logCanary,
		slog.Group("headers", "authorization", logCanary))
	m := lastJSON(t, buf)
	assertTraceIDs(t, m)
	if m["msg"] != "request" || m["method"] != "GET" || m["status"] != float64(200) || m["level"] != "INFO" {
		t.Errorf("record = %v", m)
	}

	// Without a span in the context there are no ids, not empty ones.
	l.Info("start", "version", "4.2.0")
	m = lastJSON(t, buf)
	if _, ok := m["trace_id"]; ok {
		t.Errorf("trace_id without a span: %v", m)
	}
	if m["version"] != "4.2.0" {
		t.Errorf("record = %v", m)
	}
}

func TestLoggerWithAttrs(t *testing.T) {
	l, buf := newTestLogger(t, "info", "json")
	l = l.With("request_id", "r-1", "cookie", logCanary)
	l.InfoContext(spanContext(), "request", "route", "/v1/models")
	m := lastJSON(t, buf)
	assertTraceIDs(t, m)
	if m["request_id"] != "r-1" || m["route"] != "/v1/models" {
		t.Errorf("record = %v", m)
	}
}

func TestLoggerWithAllowedGroup(t *testing.T) {
	l, buf := newTestLogger(t, "info", "json")
	cfg := l.With("version", "4.2.0").WithGroup("config").With("addr", ":8080")
	cfg.WithGroup("tls").InfoContext(spanContext(), "config", "enabled", false)
	m := lastJSON(t, buf)
	assertTraceIDs(t, m)
	if m["version"] != "4.2.0" {
		t.Errorf("top-level attribute before the group lost: %v", m)
	}
	want := map[string]any{"addr": ":8080", "tls": map[string]any{"enabled": false}}
	if got, _ := json.Marshal(m["config"]); string(got) != mustJSON(t, want) {
		t.Errorf("config = %s, want %s", got, mustJSON(t, want))
	}

	// Loggers derived from one parent must not see each other's attributes.
	a, b := cfg.With("models", 1), cfg.With("catalog", 2)
	a.Info("a")
	if got, _ := json.Marshal(lastJSON(t, buf)["config"]); string(got) != `{"addr":":8080","models":1}` {
		t.Errorf("sibling a config = %s", got)
	}
	b.Info("b")
	if got, _ := json.Marshal(lastJSON(t, buf)["config"]); string(got) != `{"addr":":8080","catalog":2}` {
		t.Errorf("sibling b config = %s", got)
	}
}

func TestLoggerDropsGroupsNotAllowlisted(t *testing.T) {
	l, buf := newTestLogger(t, "info", "json")
	l.WithGroup("request").With("body", logCanary).WithGroup("inner").
		InfoContext(spanContext(), "request", "prompt", logCanary)
	m := lastJSON(t, buf)
	assertTraceIDs(t, m)
	for k := range m {
		switch k {
		case "time", "level", "msg", "trace_id", "span_id":
		default:
			t.Errorf("unexpected key %q in %v", k, m)
		}
	}

	// An inline group (empty key) is judged member by member.
	l.Info("inline", slog.Group("", "model", "gpt-x", "user", logCanary))
	m = lastJSON(t, buf)
	if m["model"] != "gpt-x" {
		t.Errorf("record = %v", m)
	}
}

func TestLoggerDoesNotDuplicateTraceID(t *testing.T) {
	l, buf := newTestLogger(t, "info", "json")
	l.InfoContext(spanContext(), "request", "trace_id", testTraceID.String())
	if n := strings.Count(buf.String(), `"trace_id"`); n != 1 {
		t.Errorf("trace_id written %d times: %s", n, buf.String())
	}
	lastJSON(t, buf)
}

func TestLoggerTextFormat(t *testing.T) {
	l, buf := newTestLogger(t, "DEBUG", "Text")
	l.DebugContext(spanContext(), "request", "method", "GET", "prompt", logCanary)
	line := buf.String()
	for _, want := range []string{"level=DEBUG", "msg=request", "method=GET", "trace_id=" + testTraceID.String(), "span_id=" + testSpanID.String()} {
		if !strings.Contains(line, want) {
			t.Errorf("text line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, logCanary) {
		t.Errorf("text line leaks: %q", line)
	}
}

func TestLoggerLevel(t *testing.T) {
	l, buf := newTestLogger(t, "warn", "json")
	l.Info("hidden")
	if buf.Len() != 0 {
		t.Errorf("info logged at warn level: %s", buf.String())
	}
	if l.Enabled(context.Background(), slog.LevelInfo) || !l.Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled does not follow the level")
	}
	l.Warn("shown")
	if lastJSON(t, buf)["msg"] != "shown" {
		t.Error("warn not logged")
	}
}

func TestNewLoggerRejectsUnknownValues(t *testing.T) {
	for _, tc := range []struct{ level, format, want string }{
		{"verbose", "json", "--log-level"},
		{"info", "yaml", "--log-format"},
	} {
		_, err := NewLogger(io.Discard, tc.level, tc.format)
		if err == nil {
			t.Errorf("NewLogger(%q, %q) succeeded", tc.level, tc.format)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q does not name %s", err, tc.want)
		}
	}
	_, err := NewLogger(io.Discard, "verbose", "json")
	if !strings.Contains(err.Error(), "debug, info, warn or error") {
		t.Errorf("error %q does not list the accepted levels", err)
	}
	_, err = NewLogger(io.Discard, "info", "yaml")
	if !strings.Contains(err.Error(), "json or text") {
		t.Errorf("error %q does not list the accepted formats", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func BenchmarkLoggerAccessRecord(b *testing.B) {
	l, err := NewLogger(io.Discard, "info", "json")
	if err != nil {
		b.Fatal(err)
	}
	ctx := spanContext()
	b.ReportAllocs()
	for b.Loop() {
		l.LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("request_id", "r-1"),
			slog.String("method", "POST"),
			slog.String("route", "/v1/chat/completions"),
			slog.Int("status", 200),
			slog.String("error_code", "none"),
			slog.Float64("duration_ms", 1.25),
		)
	}
}

// TestAccessLineMatchesSlog: the access log's own JSON encoder writes exactly the line slog's
// JSON handler (behind logHandler) writes for the same record, in every shape a request leaves:
// plain, chat, stream, fault, gateway, a 5xx at error level, with and without a span, and with
// values that need escaping.
func TestAccessLineMatchesSlog(t *testing.T) {
	start := time.Date(2026, 11, 22, 19, 20, 0, 123456789, time.UTC)
	now := start.Add(1234567 * time.Nanosecond)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3, 0xfe}, SpanID: trace.SpanID{9, 8, 0xab}, TraceFlags: trace.FlagsSampled})
	withSpan := trace.ContextWithSpanContext(context.Background(), sc)
	recs := []*Record{
		{Start: start, RequestID: "req_1", Method: "GET", Route: "/health", Status: 200},
		{Start: start, RequestID: `odd"\` + "\x01\u2028é\xff", Method: "_OTHER", Route: RouteUnmatched, Status: 404, ErrorCode: "not_found"},
		{Start: start, RequestID: "r", Method: "POST", Route: "/v1/chat/completions", Status: 200, Chat: true, Model: "mock-echo", PromptTokens: 18, CompletionTokens: 16},
		{Start: start, RequestID: "r", Method: "POST", Route: "/v1/chat/completions", Status: 200, Chat: true, Model: "mock-chat", Stream: true, StreamOutcome: OutcomeCompleted, Chunks: 18},
		{Start: start, RequestID: "r", Method: "POST", Route: "/v1/chat/completions", Status: 500, ErrorCode: "simulated_server_error", Chat: true, Model: "mock-flaky", Fault: "server_error", GatewayAttempts: 3, ServedBy: "mock-chat", FallbackFrom: "mock-gateway"},
		{Start: start, RequestID: "r", Method: "POST", Route: "/v1/chat/completions", Status: 200, Chat: true, Stream: true, Model: "mock-tools", Scope: "test-42", Fixture: "weather-call", StreamOutcome: "completed", Chunks: 5},
		{Start: now.Add(-5 * time.Microsecond), RequestID: "tiny", Method: "GET", Route: "/metrics", Status: 200},
		{Start: now.Add(-100 * time.Hour), RequestID: "long", Method: "GET", Route: "/metrics", Status: 200},
	}
	for i, rec := range recs {
		for _, ctx := range []context.Context{context.Background(), withSpan} {
			var viaSlog bytes.Buffer
			logger, err := NewLogger(&viaSlog, "debug", "json")
			if err != nil {
				t.Fatal(err)
			}
			level := slog.LevelInfo
			if rec.Status >= 500 {
				level = slog.LevelError
			}
			if err := logger.Handler().Handle(ctx, accessRecord(now, level, rec)); err != nil {
				t.Fatal(err)
			}
			got := new(accessOut).line(nil, ctx, now, level, rec)
			if string(got) != viaSlog.String() {
				t.Errorf("record %d:\n got %s\nwant %s", i, got, viaSlog.String())
			}
		}
	}
}
