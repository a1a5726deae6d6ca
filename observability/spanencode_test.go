package observability

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

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

// TestAppendUTCTime: the span buffer's time format is time.RFC3339Nano's, whatever the instant
// (zones, whole seconds, trailing zeros in the fraction, years at both ends).
func TestAppendUTCTime(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	times := []time.Time{
		time.Date(2026, 11, 22, 19, 20, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100000000, paris),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC),
		time.Unix(0, 0),
		time.Now(),
	}
	for i := 0; i < 2000; i++ {
		times = append(times, time.Unix(0, rand.Int64()).In(paris))
	}
	for _, tm := range times {
		if got, want := string(appendUTCTime(nil, tm)), tm.UTC().Format(time.RFC3339Nano); got != want {
			t.Fatalf("%v: got %s, want %s", tm, got, want)
		}
	}
}
