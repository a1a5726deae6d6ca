package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// chainRoutes is a router as the service's handlers use the chain: the chat route starts a
// chat span under the server span and gives it attributes (from a borrowed scratch, with its
// span name made in advance, as the service's routes do); the others start one with options,
// fail, panic, and answer an untraced probe.
func chainRoutes(tr trace.Tracer) http.Handler {
	mux := http.NewServeMux()
	body := []byte("{}")
	chat := func(w http.ResponseWriter, r *http.Request, spanName string, opts ...trace.SpanStartOption) {
		rec := RecordFrom(r.Context())
		rec.SetRoute(r.URL.Path)
		rec.SpanName = spanName
		rec.Chat, rec.Model, rec.PromptTokens, rec.CompletionTokens, rec.FinishReason = true, "mock-chat", 9, 16, "stop"
		_, span := tr.Start(r.Context(), "chat mock-chat", opts...)
		scratch := BorrowAttributes()
		span.SetAttributes(append(scratch.KeyValues(), attribute.String("gen_ai.operation.name", "chat"),
			attribute.Int("gen_ai.usage.output_tokens", 16), attribute.String("secret.prompt", "never kept"))...)
		scratch.Release()
		span.End()
		_, _ = w.Write(body)
	}
	mux.HandleFunc("/v1/chat", func(w http.ResponseWriter, r *http.Request) { chat(w, r, "chat route (named in advance)") })
	mux.HandleFunc("/v1/chat/options", func(w http.ResponseWriter, r *http.Request) {
		chat(w, r, "", trace.WithAttributes(attribute.String("gen_ai.request.model", "mock-chat")), trace.WithSpanKind(trace.SpanKindClient))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		rec := RecordFrom(r.Context())
		rec.SetRoute("/fail")
		rec.SpanName = "GET /fail (named in advance)"
		rec.SetError("upstream_error")
		w.WriteHeader(http.StatusBadGateway)
	})
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("handler bug") })
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { RecordFrom(r.Context()).SetRoute("/health") })
	return mux
}

// chainRequests are the requests of TestChainMatchesTheSDK: each route, in a caller's trace,
// with a client's request id, a user agent that needs sanitizing, baggage, and from a client
// address.
func chainRequests() []*http.Request {
	var out []*http.Request
	for i, path := range []string{"/v1/chat", "/fail", "/panic", "/health", "/nowhere", "/v1/chat/options", "/v1/chat/options"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = "10.1.2.3:4567"
		r.Header.Set(RequestIDHeader, "req-"+string(rune('a'+i)))
		switch i {
		case 1:
			r.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			r.Header.Set("User-Agent", "client/1.0\n")
		case 6:
			r.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00") // unsampled
			r.Header.Add("baggage", "k=v")
			r.Header.Add("baggage", "k2=v2")
		}
		out = append(out, r)
	}
	return out
}

// serveChain serves the requests through a chain with tracer, and returns its access lines.
func serveChain(t *testing.T, tr trace.Tracer, reqs []*http.Request) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	lw := NewLogWriter(&out)
	logger, err := NewLogger(lw, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	h := Chain(chainRoutes(tr), ChainConfig{
		Logger: logger, Tracer: tr, Propagator: Propagator(), UntracedPaths: []string{"/health"},
		Metrics:            NewMetrics(prometheus.NewRegistry(), []string{"mock-chat"}, []string{"mock-chat"}, BuildInfo{}),
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	})
	for _, r := range reqs {
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		if got := rr.Header().Get(RequestIDHeader); got != r.Header.Get(RequestIDHeader) {
			t.Errorf("%s: X-Request-Id %q", r.URL.Path, got)
		}
	}
	_ = lw.Close()
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if !strings.Contains(line, `"msg":"request"`) {
			continue // the panic's own line
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if len(lines) != len(reqs) {
		t.Fatalf("%d access lines for %d requests", len(lines), len(reqs))
	}
	return lines
}

// TestChainMatchesTheSDK: with the buffer's own tracer the chain makes its server span in the
// request (startSpan, endServerSpan), and the buffer keeps the records the SDK's spans would
// have left — names, kinds, attributes, statuses, parents, the untraced probe's absence — and
// the access lines are the same. The server span starts and ends with the access line's clock
// readings: its duration is the line's duration_ms, and the line names its ids.
func TestChainMatchesTheSDK(t *testing.T) {
	sampler := sdktrace.ParentBased(sdktrace.AlwaysSample())
	sdkBuf := NewSpanBuffer(64)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(sdkBuf))
	defer tp.Shutdown(context.Background())
	own := newBufferTracer(NewSpanBuffer(64), sampler)

	wantLines := serveChain(t, tp.Tracer("t"), chainRequests())
	gotLines := serveChain(t, own, chainRequests())
	want, got := sdkBuf.Query(SpanFilter{}), own.buffer.Query(SpanFilter{})
	if len(got) != 7 { // two chat requests, the error, the panic, the 404 (and an unsampled chat request)
		t.Errorf("%d spans kept", len(got))
	}
	if !reflect.DeepEqual(comparableRecords(got), comparableRecords(want)) {
		t.Errorf("records differ\n got %+v\nwant %+v", comparableRecords(got), comparableRecords(want))
	}

	for i := range gotLines {
		g, w := maps.Clone(gotLines[i]), maps.Clone(wantLines[i])
		for _, k := range []string{"time", "duration_ms", "trace_id", "span_id"} {
			delete(g, k)
			delete(w, k)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("line %d differs\n got %v\nwant %v", i, g, w)
		}
	}
	for _, line := range gotLines {
		recs := own.buffer.Query(SpanFilter{RequestID: line["request_id"].(string)})
		var server *SpanRecord
		for i := range recs {
			if recs[i].Kind == "server" {
				server = &recs[i]
			}
		}
		if server == nil {
			continue // untraced, or unsampled
		}
		if line["trace_id"] != server.TraceID || line["span_id"] != server.SpanID {
			t.Errorf("%s: the line names %v/%v, the span is %s/%s", line["request_id"], line["trace_id"], line["span_id"], server.TraceID, server.SpanID)
		}
		spanMicros := server.EndTime.Sub(server.StartTime).Microseconds()
		if lineMicros := int64(math.Round(line["duration_ms"].(float64) * 1000)); spanMicros != lineMicros {
			t.Errorf("%s: the span lasted %d µs, the line says %d", line["request_id"], spanMicros, lineMicros)
		}
	}
}

// discardWriter is a ResponseWriter that keeps only its header map.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// chainBench is the chain as the service runs it by default — the buffer's tracer (every span
// sampled), metrics, the JSON access log through a LogWriter — around the chat route; or, with
// telemetry off, with a no-op tracer, no metrics and a discarding logger.
func chainBench(tb testing.TB, telemetry bool) (http.Handler, *http.Request) {
	return chainBenchLogged(tb, telemetry, "all")
}

// chainBenchLogged is chainBench with the access log's --access-log setting (a sample keeps 1
// in 1000).
func chainBenchLogged(tb testing.TB, telemetry bool, access string) (http.Handler, *http.Request) {
	c := ChainConfig{
		Tracer: noop.NewTracerProvider().Tracer(""), Logger: slog.New(slog.DiscardHandler),
		Propagator: Propagator(), UntracedPaths: []string{"/health"},
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	}
	if telemetry {
		log, err := OpenLog(LogSettings{Level: "info", Format: "json", Access: access, AccessSample: 1000}, io.Discard)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = log.Close() })
		c.Logger = log.Logger
		c.Tracer = newBufferTracer(NewSpanBuffer(4096), sdktrace.ParentBased(sdktrace.AlwaysSample()))
		c.Metrics = NewMetrics(prometheus.NewRegistry(), []string{"mock-chat"}, []string{"mock-chat"}, BuildInfo{})
	}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat", nil)
	r.Header.Set("User-Agent", "OpenAI/Go 3.96.0")
	return Chain(chainRoutes(c.Tracer), c), r
}

// BenchmarkChain is the chain's own cost per request around a handler that does little but
// start and end its chat span: all telemetry on (chainBench) against none, as
// BenchmarkChatJSON compares them for the whole service.
func BenchmarkChain(b *testing.B) {
	for _, telemetry := range []bool{true, false} {
		b.Run(fmt.Sprintf("telemetry=%s", map[bool]string{true: "on", false: "off"}[telemetry]), func(b *testing.B) {
			h, r := chainBench(b, telemetry)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user+system CPU time: on a shared machine wall time per op moves with
// whatever else runs, CPU time per op is what this process spent (as in BenchmarkChatJSON).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
