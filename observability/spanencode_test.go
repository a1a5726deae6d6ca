package observability

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestProcessorPathRedacts: spans the buffer takes as a span processor, before any exporter,
// keep only allowlisted attributes and bare-code status descriptions.
func TestProcessorPathRedacts(t *testing.T) {
	b := NewSpanBuffer(8)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())
	_, span := tp.Tracer("t").Start(context.Background(), "GET /x")
	span.SetAttributes(attribute.String("mockgateway.request_id", "r1"), attribute.String("http.request.header.authorization", "Bearer secret-value"))
	span.AddEvent("stream.started", sdktraceEventAttrs(attribute.String("gen_ai.input.messages", "secret-prompt"), attribute.Int("mockgateway.stream.chunks", 3)))
	span.SetStatus(codes.Error, "error with secret-text in it")
	span.End()

	recs := b.Query(SpanFilter{RequestID: "r1"})
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	raw, _ := json.Marshal(recs[0])
	if strings.Contains(string(raw), "secret") {
		t.Errorf("a non-allowlisted value reached the buffer: %s", raw)
	}
	if recs[0].Attributes["mockgateway.request_id"] != "r1" || recs[0].Events[0].Attributes["mockgateway.stream.chunks"] != int64(3) {
		t.Errorf("allowlisted values lost: %s", raw)
	}
}

func sdktraceEventAttrs(kv ...attribute.KeyValue) trace.EventOption {
	return trace.WithAttributes(kv...)
}

// TestSpanRecordRoundTrip: what the buffer keeps of a span is what /debug/traces shows of it —
// ids, times, kind, status, name, every allowlisted attribute type and the events — and nothing
// that is not allowlisted.
func TestSpanRecordRoundTrip(t *testing.T) {
	b := NewSpanBuffer(8)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(b))
	defer tp.Shutdown(context.Background())
	ctx, parent := tp.Tracer("t").Start(context.Background(), "POST /v1/chat/completions", trace.WithSpanKind(trace.SpanKindServer))
	_, span := tp.Tracer("t").Start(ctx, "chat mock-echo")
	span.SetAttributes(
		attribute.Bool("gen_ai.request.stream", true),
		attribute.Int("gen_ai.usage.output_tokens", 16),
		attribute.Float64("gen_ai.request.temperature", 0.25),
		attribute.Float64("mockgateway.simulation.nan", math.NaN()),
		attribute.String("gen_ai.response.id", "chatcmpl-1 \xff é"),
		attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop", "length"}),
		attribute.Int64Slice("mockgateway.simulation.ints", []int64{-1, 2}),
		attribute.Float64Slice("mockgateway.simulation.floats", []float64{1.5, math.Inf(1)}),
		attribute.BoolSlice("mockgateway.simulation.bools", []bool{true, false}),
		attribute.String("gen_ai.input.messages", "secret prompt"),
	)
	span.AddEvent("stream.first_chunk")
	span.AddEvent("stream.completed", trace.WithAttributes(attribute.Int("mockgateway.stream.chunks", 18), attribute.String("secret", "x")))
	span.SetStatus(codes.Error, "simulated_server_error")
	span.End()
	parent.SetAttributes(attribute.String("mockgateway.request_id", "req_1"))
	parent.End()

	recs := b.Query(SpanFilter{RequestID: "req_1"})
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	server, chat := recs[0], recs[1]
	psc, csc := parent.SpanContext(), span.SpanContext()
	if server.Kind != "server" || server.ParentSpanID != "" || server.SpanID != psc.SpanID().String() || server.TraceID != psc.TraceID().String() {
		t.Errorf("server span = %+v", server)
	}
	if chat.Kind != "internal" || chat.ParentSpanID != psc.SpanID().String() || chat.SpanID != csc.SpanID().String() || chat.Name != "chat mock-echo" {
		t.Errorf("chat span = %+v", chat)
	}
	if chat.Status != (SpanStatus{Code: "error", Description: "simulated_server_error"}) || server.Status.Code != "unset" {
		t.Errorf("statuses %+v %+v", chat.Status, server.Status)
	}
	if chat.StartTime.Location() != time.UTC || !chat.EndTime.After(chat.StartTime) || chat.DurationMS != float64(chat.EndTime.Sub(chat.StartTime))/1e6 {
		t.Errorf("times %v %v %v", chat.StartTime, chat.EndTime, chat.DurationMS)
	}
	want := map[string]any{
		"gen_ai.request.stream":          true,
		"gen_ai.usage.output_tokens":     int64(16),
		"gen_ai.request.temperature":     0.25,
		"mockgateway.simulation.nan":     nil,
		"gen_ai.response.id":             "chatcmpl-1 \ufffd é",
		"gen_ai.response.finish_reasons": []any{"stop", "length"},
		"mockgateway.simulation.ints":    []any{int64(-1), int64(2)},
		"mockgateway.simulation.floats":  []any{1.5, nil},
		"mockgateway.simulation.bools":   []any{true, false},
	}
	if !reflect.DeepEqual(chat.Attributes, want) {
		t.Errorf("attributes\n got %#v\nwant %#v", chat.Attributes, want)
	}
	if len(chat.Events) != 2 || chat.Events[0].Name != "stream.first_chunk" || chat.Events[0].Attributes != nil ||
		!reflect.DeepEqual(chat.Events[1].Attributes, map[string]any{"mockgateway.stream.chunks": int64(18)}) {
		t.Errorf("events %+v", chat.Events)
	}
	if raw, err := json.Marshal(recs); err != nil || strings.Contains(string(raw), "secret") {
		t.Errorf("served JSON: %v %s", err, raw)
	}
}

// FuzzDecodeSpanRecord: a damaged record is an error, never a panic or a huge allocation.
func FuzzDecodeSpanRecord(f *testing.F) {
	b := NewSpanBuffer(1)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(b))
	_, span := tp.Tracer("t").Start(context.Background(), "x", trace.WithAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"})))
	span.AddEvent("stream.completed", trace.WithAttributes(attribute.Int("mockgateway.stream.chunks", 3)))
	span.End()
	f.Add(b.ring[0].record)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _ = decodeSpanRecord(raw)
	})
}

// TestSpanRecordAttributeCounts: a span's attribute count is written after its attributes
// while it fits one byte (appendRecordAttributes), and before them past that: either way
// every allowlisted attribute, and only those, comes back — below, at and above 128 given, and
// 127, 128 and more kept.
func TestSpanRecordAttributeCounts(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 129, 300} {
		for _, withRejected := range []bool{false, true} {
			var kvs []attribute.KeyValue
			for i := range n {
				if withRejected && i%3 == 0 {
					kvs = append(kvs, attribute.String(fmt.Sprintf("secret.%d", i), "x"))
				}
				kvs = append(kvs, attribute.Int(fmt.Sprintf("mockgateway.simulation.k%d", i), i))
			}
			raw := appendSpanRecord(nil, spanView{name: "s", attrs: kvs})
			rec, err := decodeSpanRecord(raw)
			if err != nil {
				t.Fatalf("%d attributes (rejected too: %v): %v", n, withRejected, err)
			}
			if len(rec.Attributes) != n || (n > 0 && rec.Attributes[fmt.Sprintf("mockgateway.simulation.k%d", n-1)] != int64(n-1)) {
				t.Errorf("%d attributes (rejected too: %v): %d back", n, withRejected, len(rec.Attributes))
			}
		}
	}
}

// BenchmarkSpanRecord is the record of a chain's server span and a chat span's answer
// attributes, as the buffer writes it when a span ends.
func BenchmarkSpanRecord(b *testing.B) {
	v := spanView{
		traceID: trace.TraceID{1}, spanID: trace.SpanID{2}, start: time.Now(), end: time.Now(), name: "POST /v1/chat/completions",
		attrs: []attribute.KeyValue{
			attribute.String("http.request.method", "POST"), attribute.Int("http.response.status_code", 200),
			attribute.String("mockgateway.request_id", "req_0123456789abcdef0123456789abcdef"), attribute.String("url.scheme", "http"),
			attribute.String("network.protocol.version", "1.1"), attribute.String("http.route", "/v1/chat/completions"),
			attribute.String("url.path", "/v1/chat/completions"), attribute.String("client.address", "127.0.0.1"),
			attribute.Int("client.port", 54321), attribute.String("user_agent.original", "OpenAI/Go 3.96.0"),
			attribute.String("gen_ai.response.id", "chatcmpl-0123456789abcdef01234567"), attribute.String("gen_ai.response.model", "mock-echo"),
			attribute.Int("gen_ai.usage.input_tokens", 18), attribute.Int("gen_ai.usage.output_tokens", 16),
		},
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendSpanRecord(buf[:0], v)
	}
}
