package observability

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var testEpoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// stubSpan builds an ended span of trace t with span number s, starting at testEpoch+start ms.
func stubSpan(t, s byte, parent byte, start int, attrs ...attribute.KeyValue) sdktrace.ReadOnlySpan {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{t},
		SpanID:     trace.SpanID{t, s},
		TraceFlags: trace.FlagsSampled,
	})
	stub := tracetest.SpanStub{
		Name:        fmt.Sprintf("span %d/%d", t, s),
		SpanContext: sc,
		SpanKind:    trace.SpanKindInternal,
		StartTime:   testEpoch.Add(time.Duration(start) * time.Millisecond),
		EndTime:     testEpoch.Add(time.Duration(start+10) * time.Millisecond),
		Attributes:  attrs,
	}
	if parent != 0 {
		stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{t},
			SpanID:  trace.SpanID{t, parent},
		})
	}
	return stub.Snapshot()
}

func export(t *testing.T, b *SpanBuffer, spans ...sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range spans {
		b.add(s)
	}
}

func names(recs []SpanRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Name
	}
	return out
}

func equalNames(got []SpanRecord, want ...string) bool {
	n := names(got)
	if len(n) != len(want) {
		return false
	}
	for i := range n {
		if n[i] != want[i] {
			return false
		}
	}
	return true
}

func TestSpanBufferWrapsAtCapacity(t *testing.T) {
	b := NewSpanBuffer(3)
	for i := 1; i <= 5; i++ {
		export(t, b, stubSpan(byte(i), 1, 0, i))
	}
	if b.Len() != 3 {
		t.Fatalf("Len = %d, want 3", b.Len())
	}
	// Newest trace first; the two oldest were overwritten.
	if got := b.Query(SpanFilter{}); !equalNames(got, "span 5/1", "span 4/1", "span 3/1") {
		t.Errorf("Query = %v", names(got))
	}
	if got := b.Query(SpanFilter{TraceID: trace.TraceID{1}.String()}); len(got) != 0 {
		t.Errorf("overwritten trace still returned: %v", names(got))
	}
}

func TestSpanBufferDefaultSize(t *testing.T) {
	if got := len(NewSpanBuffer(0).ring); got != defaultSpanBufferSize {
		t.Errorf("NewSpanBuffer(0) holds %d spans, want %d", got, defaultSpanBufferSize)
	}
}

func TestSpanBufferQueryByTraceID(t *testing.T) {
	b := NewSpanBuffer(16)
	// Children end before their parent, so they are exported first; interleave another trace.
	export(t, b,
		stubSpan(1, 2, 1, 5),
		stubSpan(2, 1, 0, 1),
		stubSpan(1, 3, 1, 2),
		stubSpan(1, 1, 0, 0),
	)
	got := b.Query(SpanFilter{TraceID: trace.TraceID{1}.String()})
	if !equalNames(got, "span 1/1", "span 1/3", "span 1/2") {
		t.Errorf("Query by trace = %v, want the trace's spans by start time", names(got))
	}
	if got[1].ParentSpanID != got[0].SpanID {
		t.Errorf("parent_span_id = %q, want %q", got[1].ParentSpanID, got[0].SpanID)
	}
	if got := b.Query(SpanFilter{TraceID: "0123456789abcdef0123456789abcdef"}); got == nil || len(got) != 0 {
		t.Errorf("unknown trace = %#v, want an empty, non-nil slice", got)
	}
}

func TestSpanBufferQueryByRequestIDReturnsWholeTrace(t *testing.T) {
	b := NewSpanBuffer(16)
	reqID := attribute.String("mockgateway.request_id", "req-1")
	export(t, b,
		stubSpan(1, 2, 1, 1),        // chat child: no request id
		stubSpan(1, 1, 0, 0, reqID), // server span
		stubSpan(2, 1, 0, 2, attribute.String("mockgateway.request_id", "req-2")),
	)
	got := b.Query(SpanFilter{RequestID: "req-1"})
	if !equalNames(got, "span 1/1", "span 1/2") {
		t.Errorf("Query by request id = %v, want the server span and its child", names(got))
	}
	if got := b.Query(SpanFilter{RequestID: "nope"}); len(got) != 0 {
		t.Errorf("unknown request id = %v", names(got))
	}
}

func TestSpanBufferQueryOrderAndLimit(t *testing.T) {
	b := NewSpanBuffer(16)
	export(t, b, stubSpan(1, 2, 1, 1), stubSpan(1, 1, 0, 0))
	export(t, b, stubSpan(2, 2, 1, 11), stubSpan(2, 1, 0, 10))
	export(t, b, stubSpan(3, 1, 0, 20))

	if got := b.Query(SpanFilter{}); !equalNames(got,
		"span 3/1", "span 2/1", "span 2/2", "span 1/1", "span 1/2") {
		t.Errorf("Query = %v, want newest trace first, start order within a trace", names(got))
	}
	if got := b.Query(SpanFilter{Limit: 2}); !equalNames(got, "span 3/1", "span 2/1") {
		t.Errorf("Query limit 2 = %v, want the two most recent spans", names(got))
	}
	if got := b.Query(SpanFilter{TraceID: trace.TraceID{2}.String(), Limit: 1}); !equalNames(got, "span 2/1") {
		t.Errorf("Query trace limit 1 = %v", names(got))
	}
}

func TestSpanBufferRecordShape(t *testing.T) {
	b := NewSpanBuffer(4)
	mem := tracetest.SpanStub{
		Name: "POST /v1/chat/completions",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{0xab}, SpanID: trace.SpanID{0xcd}, TraceFlags: trace.FlagsSampled,
		}),
		SpanKind:   trace.SpanKindServer,
		StartTime:  testEpoch,
		EndTime:    testEpoch.Add(1500 * time.Microsecond),
		Attributes: []attribute.KeyValue{attribute.Int("http.response.status_code", 500), attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"})},
		Events: []sdktrace.Event{
			{Name: "stream.started", Time: testEpoch},
			{Name: "stream.completed", Time: testEpoch, Attributes: []attribute.KeyValue{attribute.Int("mockgateway.stream.chunks", 4)}},
		},
		Status: sdktrace.Status{Code: codes.Error, Description: "internal_error"},
	}
	export(t, b, mem.Snapshot(), stubSpan(2, 1, 0, 0))

	recs := b.Query(SpanFilter{TraceID: trace.TraceID{0xab}.String()})
	if len(recs) != 1 {
		t.Fatalf("got %d records", len(recs))
	}
	r := recs[0]
	if r.Kind != "server" || r.DurationMS != 1.5 || r.Status != (SpanStatus{Code: "error", Description: "internal_error"}) {
		t.Errorf("record = %+v", r)
	}
	if r.Attributes["http.response.status_code"] != int64(500) {
		t.Errorf("status_code attribute = %#v", r.Attributes["http.response.status_code"])
	}
	if len(r.Events) != 2 || r.Events[1].Attributes["mockgateway.stream.chunks"] != int64(4) {
		t.Errorf("events = %+v", r.Events)
	}

	// Callers own what Query returns: changing it must not change the buffer.
	r.Attributes["http.response.status_code"] = "changed"
	r.Events[1].Attributes["mockgateway.stream.chunks"] = "changed"
	again := b.Query(SpanFilter{TraceID: trace.TraceID{0xab}.String()})[0]
	if again.Attributes["http.response.status_code"] != int64(500) || again.Events[1].Attributes["mockgateway.stream.chunks"] != int64(4) {
		t.Error("modifying a query result changed the buffer")
	}

	// A span without attributes or events serves "attributes":{} and no "events" key.
	plain := b.Query(SpanFilter{TraceID: trace.TraceID{2}.String()})
	raw, err := json.Marshal(plain[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if attrs, ok := m["attributes"].(map[string]any); !ok || len(attrs) != 0 {
		t.Errorf("attributes JSON = %v, want {}", m["attributes"])
	}
	for _, k := range []string{"events", "parent_span_id"} {
		if _, ok := m[k]; ok {
			t.Errorf("JSON has %q for a span without it: %s", k, raw)
		}
	}
	if m["status"].(map[string]any)["code"] != "unset" || m["kind"] != "internal" {
		t.Errorf("JSON = %s", raw)
	}
}

func TestSpanBufferConcurrentAddAndQuery(t *testing.T) {
	b := NewSpanBuffer(64)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				span := stubSpan(byte(w+1), byte(i%250+1), 0, i,
					attribute.String("mockgateway.request_id", fmt.Sprintf("r%d", w)))
				b.add(span)
			}
		})
		wg.Go(func() {
			for range 100 {
				for _, r := range b.Query(SpanFilter{RequestID: fmt.Sprintf("r%d", w), Limit: 10}) {
					r.Attributes["scribble"] = true // results are copies, so this is no race
				}
				_ = b.Len()
			}
		})
	}
	wg.Wait()
	if b.Len() != 64 {
		t.Errorf("Len = %d, want the capacity 64", b.Len())
	}
}

func TestSpanBufferAsProcessor(t *testing.T) {
	b := NewSpanBuffer(8)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	_, child := tp.Tracer("test").Start(ctx, "child")
	child.End()
	parent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := b.Query(SpanFilter{TraceID: parent.SpanContext().TraceID().String()})
	if !equalNames(got, "parent", "child") {
		t.Errorf("Query = %v", names(got))
	}
}

// BenchmarkSpanBufferSpan is one request's worth of spans as the service makes them — a SERVER
// span with its HTTP attributes and a chat span with GenAI attributes — started, ended and kept
// by the buffer as its processor.
func BenchmarkSpanBufferSpan(b *testing.B) {
	buf := NewSpanBuffer(4096)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(buf))
	tr := tp.Tracer("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sctx, server := tr.Start(ctx, "POST", trace.WithSpanKind(trace.SpanKindServer))
		_, chat := tr.Start(sctx, "chat mock-echo", trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", "mockgateway"),
			attribute.String("gen_ai.request.model", "mock-echo"), attribute.Bool("gen_ai.request.stream", false)))
		chat.SetAttributes(attribute.String("gen_ai.response.id", "chatcmpl-0123456789abcdef01234567"),
			attribute.String("gen_ai.response.model", "mock-echo"), attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"}),
			attribute.Int("gen_ai.usage.input_tokens", 18), attribute.Int("gen_ai.usage.output_tokens", 16))
		chat.End()
		server.SetName("POST /v1/chat/completions")
		server.SetAttributes(attribute.String("http.request.method", "POST"), attribute.Int("http.response.status_code", 200),
			attribute.String("mockgateway.request_id", "req_0123456789abcdef0123456789abcdef"), attribute.String("url.scheme", "http"),
			attribute.String("network.protocol.version", "1.1"), attribute.String("http.route", "/v1/chat/completions"),
			attribute.String("url.path", "/v1/chat/completions"), attribute.String("client.address", "127.0.0.1"),
			attribute.Int("client.port", 54321), attribute.String("user_agent.original", "OpenAI/Go 3.96.0"))
		server.End()
	}
}
