package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"mockgateway/internal/catalog"
	"mockgateway/internal/gcfloor"
	"mockgateway/observability"
)

// benchHandler builds the full handler chain with telemetry as the service runs it (every span
// sampled into the redacted in-memory buffer, metrics, JSON access log, the call journal) or
// with no-op providers,
// and with the garbage collector tuned as run tunes it (the --gc-floor-mb default).
func benchHandler(b *testing.B, telemetry bool, opts ...func(*Deps)) *harness {
	b.Helper()
	cat, err := catalog.Parse([]byte("models:\n  - {id: mock-chat, kind: mock, behavior: chat, default_tokens: 64, capabilities: {streaming: true, tools: false}}\n"))
	if err != nil {
		b.Fatal(err)
	}
	return benchChain(b, cat, telemetry, opts...)
}

// benchChain is benchHandler's chain serving cat's models.
func benchChain(b testing.TB, cat *catalog.Catalog, telemetry bool, opts ...func(*Deps)) *harness {
	b.Helper()
	cfg := testConfig()
	// The collector as the service runs it (run starts the same floor, unless GOGC is set), for
	// both variants.
	if os.Getenv("GOGC") == "" {
		b.Cleanup(gcfloor.Start(uint64(cfg.GCFloorMB) << 20))
	}
	d := Deps{Config: cfg, Catalog: cat, Drain: NewDrain(), Version: "4.2.0", Release: "Gateway Foundation", Started: time.Now(), Propagator: observability.Propagator()}
	if telemetry {
		// Built as run builds them: the provider from the environment (sampled at 100% into the
		// embedded buffer), the JSON log through the LogWriter.
		env := map[string]string{"OTEL_TRACES_SAMPLER": "always_on"}
		tracing, err := observability.NewTracing(context.Background(), func(k string) string { return env[k] }, observability.TracingConfig{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = tracing.Shutdown(context.Background()) })
		lw := observability.NewLogWriter(io.Discard)
		b.Cleanup(func() { _ = lw.Close() })
		logger, _ := observability.NewLogger(lw, "info", "json")
		d.Tracer, d.Logger, d.Spans = tracing.Tracer, logger, tracing.Buffer
		d.Metrics = observability.NewMetrics(prometheus.NewRegistry(), cat.IDs(), cat.ExecutableIDs(), observability.BuildInfo{Version: "4.2.0"})
		d.State = memoryState(cfg, true) // the journal: on by default in the service, so part of what a request costs
	} else {
		d.Tracer = noop.NewTracerProvider().Tracer("")
		d.Logger = slog.New(slog.DiscardHandler)
	}
	for _, o := range opts {
		o(&d)
	}
	return &harness{handler: New(withState(d))}
}

// cpuTime is the process's user+system CPU time. On a shared machine wall time per op moves
// with whatever else runs; CPU time per op is what this process itself spent.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchRequest(b *testing.B, h *harness, body string) {
	benchStatus(b, h, "POST", chatPath, body, 200)
}

// BenchmarkChatJSON and BenchmarkChatStream64 compare the full chain with telemetry on and
// off; the difference per op is what telemetry costs a request.
func BenchmarkChatJSON(b *testing.B) {
	body := chatBody("mock-chat", "")
	b.Run("telemetry=on", func(b *testing.B) { benchRequest(b, benchHandler(b, true), body) })
	b.Run("telemetry=off", func(b *testing.B) { benchRequest(b, benchHandler(b, false), body) })
}

func BenchmarkChatStream64(b *testing.B) {
	body := chatBody("mock-chat", `"stream":true`)
	b.Run("telemetry=on", func(b *testing.B) { benchRequest(b, benchHandler(b, true), body) })
	b.Run("telemetry=off", func(b *testing.B) { benchRequest(b, benchHandler(b, false), body) })
}

// BenchmarkResponsesJSON and BenchmarkResponsesStream64 are the same answer as ChatJSON and
// ChatStream64 (mock-chat, the same user text, 64 tokens) through POST /v1/responses: the
// difference per op against the chat benchmarks is what the Responses dialect costs a request.
func BenchmarkResponsesJSON(b *testing.B) {
	body := responsesBody("mock-chat", "")
	b.Run("telemetry=on", func(b *testing.B) { benchStatus(b, benchHandler(b, true), "POST", "/v1/responses", body, 200) })
	b.Run("telemetry=off", func(b *testing.B) { benchStatus(b, benchHandler(b, false), "POST", "/v1/responses", body, 200) })
}

func BenchmarkResponsesStream64(b *testing.B) {
	body := responsesBody("mock-chat", `"stream":true`)
	b.Run("telemetry=on", func(b *testing.B) { benchStatus(b, benchHandler(b, true), "POST", "/v1/responses", body, 200) })
	b.Run("telemetry=off", func(b *testing.B) { benchStatus(b, benchHandler(b, false), "POST", "/v1/responses", body, 200) })
}

// responsesBody is chatBody's request in the Responses dialect: the same user text as input.
func responsesBody(model, extra string) string {
	b := `{"model":"` + model + `","input":"hello there"`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// TestResponsesBenchSameAnswer holds the Responses benchmarks to the chat ones': the same
// answer text (and so the same tokens), JSON and streamed.
func TestResponsesBenchSameAnswer(t *testing.T) {
	h := newHarness(t)
	var chat struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	cr := h.do("POST", chatPath, chatBody("mock-chat", ""))
	if cr.Code != 200 {
		t.Fatalf("chat: %d %s", cr.Code, cr.Body)
	}
	if err := json.Unmarshal(cr.Body.Bytes(), &chat); err != nil || len(chat.Choices) != 1 {
		t.Fatalf("chat: %v %s", err, cr.Body)
	}
	rr := h.do("POST", "/v1/responses", responsesBody("mock-chat", ""))
	if rr.Code != 200 {
		t.Fatalf("responses: %d %s", rr.Code, rr.Body)
	}
	var resp map[string]any
	if err := json.Unmarshal(rr.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if got := outputText(resp); got != chat.Choices[0].Message.Content || got == "" {
		t.Errorf("responses answer %q, chat %q", got, chat.Choices[0].Message.Content)
	}
	if u, _ := resp["usage"].(map[string]any); u == nil || u["output_tokens"] != float64(chat.Usage.Completion) {
		t.Errorf("responses usage %v, chat %d completion tokens", resp["usage"], chat.Usage.Completion)
	}
	sr := h.do("POST", "/v1/responses", responsesBody("mock-chat", `"stream":true`))
	_, text, deltas := checkEvents(t, "stream", readEvents(t, sr.Body.Bytes()))
	if text != chat.Choices[0].Message.Content || deltas != chat.Usage.Completion {
		t.Errorf("responses stream: %d deltas of %q; chat: %d tokens of %q", deltas, text, chat.Usage.Completion, chat.Choices[0].Message.Content)
	}
}

func benchStatus(b *testing.B, h *harness, method, path, body string, want int) {
	benchSend(b, h, method, path, body, nil, want)
}

// benchSend is benchStatus with headers beside Content-Type.
func benchSend(b *testing.B, h *harness, method, path, body string, header map[string]string, want int) {
	b.ReportAllocs()
	start := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
	b.ResetTimer()
	for b.Loop() {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rr := httptest.NewRecorder()
		h.handler.ServeHTTP(rr, req)
		if rr.Code != want {
			b.Fatalf("%d %s", rr.Code, rr.Body.String())
		}
	}
}

func BenchmarkModels(b *testing.B) {
	b.Run("telemetry=on", func(b *testing.B) { benchStatus(b, benchHandler(b, true), "GET", "/v1/models", "", 200) })
	b.Run("telemetry=off", func(b *testing.B) { benchStatus(b, benchHandler(b, false), "GET", "/v1/models", "", 200) })
}

// BenchmarkErrorPath: a request the strict decoder rejects (400 unknown_parameter).
func BenchmarkErrorPath(b *testing.B) {
	body := chatBody("mock-chat", `"tempreture":1`)
	b.Run("telemetry=on", func(b *testing.B) { benchStatus(b, benchHandler(b, true), "POST", chatPath, body, 400) })
	b.Run("telemetry=off", func(b *testing.B) { benchStatus(b, benchHandler(b, false), "POST", chatPath, body, 400) })
}

// loadTestMessage is the load test's user message (cmd/loadtest), 15 words.
const loadTestMessage = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"

// BenchmarkChainOnly is the service's own work for a JSON chat request, every signal on: the
// full chain on a request reused from op to op and a writer that keeps nothing, so neither
// net/http nor httptest's recorder (a request parsed, a body buffer grown, headers cloned per op)
// is counted. The load test's request: mock-echo, a 15-word message. With -cpuprofile it is
// the account of docs/performance.md's "Where issue 16 stands".
func BenchmarkChainOnly(b *testing.B) {
	h := benchChain(b, catalog.Builtin(), true)
	body := []byte(`{"model":"mock-echo","messages":[{"role":"user","content":"` + loadTestMessage + `"}]}`)
	req := httptest.NewRequest("POST", chatPath, nil)
	req.Header.Set("Content-Type", "application/json")
	rd := bytes.NewReader(body)
	w := &keepNothing{header: http.Header{}}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		rd.Reset(body)
		r := *req
		r.Body, r.ContentLength = io.NopCloser(rd), int64(len(body))
		clear(w.header)
		h.handler.ServeHTTP(w, &r)
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// keepNothing is a ResponseWriter that keeps only the status, and takes deadlines and flushes
// as a connection's writer does.
type keepNothing struct {
	header http.Header
	status int
}

func (w *keepNothing) Header() http.Header              { return w.header }
func (w *keepNothing) Write(p []byte) (int, error)      { return len(p), nil }
func (w *keepNothing) WriteHeader(status int)           { w.status = status }
func (w *keepNothing) FlushError() error                { return nil }
func (w *keepNothing) SetReadDeadline(time.Time) error  { return nil }
func (w *keepNothing) SetWriteDeadline(time.Time) error { return nil }
