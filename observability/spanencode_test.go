package observability

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestAppendJSONString: whatever the string holds, the output is JSON that decodes to the string
// (invalid UTF-8 byte by byte replaced with U+FFFD, as encoding/json does).
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te\back`, "line\nfeed\r\ttab", "\x00\x01\x1f", "<>&", "\u2028\u2029", "é✓😀", "\xff\xfe", "a\xc3", strings.Repeat("x", 300)} {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var want strings.Builder
		for _, r := range s {
			want.WriteRune(r)
		}
		if got != want.String() {
			t.Errorf("%q round-trips to %q", s, got)
		}
	}
}

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
