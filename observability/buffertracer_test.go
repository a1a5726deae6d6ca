package observability

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// story is what the service does with its spans: a server span in the caller's trace, a chat
// span under it with attributes at start and later, repeated keys, lifecycle events with
// attributes, a name set late, statuses in every order, and an attribute no allowlist keeps.
func story(tr trace.Tracer, parent context.Context) {
	ctx, server := tr.Start(parent, "POST", trace.WithSpanKind(trace.SpanKindServer))
	server.SetAttributes(attribute.String("http.request.method", "POST"), attribute.Int("http.response.status_code", 200),
		attribute.String("mockgateway.request_id", "req-1"), attribute.String("http.route", "/v1/chat/completions"))
	server.SetName("POST /v1/chat/completions")
	_, chat := tr.Start(ctx, "chat mock-chat", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "mock-chat"),
		attribute.String("secret.prompt", "never kept")))
	chat.AddEvent("stream.started")
	chat.AddEvent("stream.first_chunk")
	chat.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop"}),
		attribute.Int("gen_ai.usage.output_tokens", 16), attribute.String("error.type", "first"))
	chat.SetAttributes(attribute.String("error.type", "simulated_stream_error")) // the later value wins
	chat.AddEvent("stream.aborted", trace.WithAttributes(attribute.Int("mockgateway.stream.chunks", 3),
		attribute.String("secret.text", "never kept")))
	chat.RecordError(errors.New("free text no signal carries"))
	chat.SetStatus(codes.Error, "simulated_stream_error")
	chat.SetStatus(codes.Unset, "") // cannot lower a status
	chat.End()
	server.SetStatus(codes.Error, "a free-text description is not kept")
	server.SetStatus(codes.Ok, "")
	server.End()
	server.SetAttributes(attribute.String("http.route", "after the end")) // ignored
}

// comparableRecords drops what differs between two runs by nature: ids and times.
func comparableRecords(rs []SpanRecord) []SpanRecord {
	out := make([]SpanRecord, len(rs))
	for i, r := range rs {
		r.TraceID, r.SpanID, r.StartTime, r.EndTime, r.DurationMS = "", "", time.Time{}, time.Time{}, 0
		if r.ParentSpanID != "" {
			r.ParentSpanID = "parent"
		}
		ev := make([]SpanEvent, len(r.Events))
		for j, e := range r.Events {
			e.Time = time.Time{}
			ev[j] = e
		}
		r.Events = ev
		out[i] = r
	}
	return out
}

// TestBufferTracerMatchesTheSDK: the buffer's own tracer keeps the records the SDK's span
// would have given the buffer — attributes, their de-duplication and allowlist, events,
// statuses, names, kinds, parents — with the same sampler's decisions.
func TestBufferTracerMatchesTheSDK(t *testing.T) {
	traceparent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	unsampled := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
	prop := propagation.TraceContext{}
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
		parent  string
	}{
		{"root, parent-based", sdktrace.ParentBased(sdktrace.AlwaysSample()), ""},
		{"sampled caller", sdktrace.ParentBased(sdktrace.AlwaysSample()), traceparent},
		{"unsampled caller", sdktrace.ParentBased(sdktrace.AlwaysSample()), unsampled},
		{"always on, unsampled caller", sdktrace.AlwaysSample(), unsampled},
		{"never", sdktrace.NeverSample(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := context.Background()
			if tc.parent != "" {
				parent = prop.Extract(parent, propagation.MapCarrier{"traceparent": tc.parent})
			}
			sdkBuf := NewSpanBuffer(16)
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(tc.sampler), sdktrace.WithSpanProcessor(sdkBuf))
			defer tp.Shutdown(context.Background())
			story(tp.Tracer("t"), parent)
			want := sdkBuf.Query(SpanFilter{Limit: 16})

			// As NewTracing makes it (its spans are their contexts), and with otel's own
			// contexts, as when the span key cannot be learnt.
			for name, tr := range map[string]*bufferTracer{
				"own contexts":  newBufferTracer(NewSpanBuffer(16), tc.sampler),
				"otel contexts": {buffer: NewSpanBuffer(16), sampler: tc.sampler},
			} {
				story(tr, parent)
				got := tr.buffer.Query(SpanFilter{Limit: 16})
				if !reflect.DeepEqual(comparableRecords(got), comparableRecords(want)) {
					t.Errorf("%s: records differ\n got %+v\nwant %+v", name, comparableRecords(got), comparableRecords(want))
				}
				for i := range got {
					if tc.parent != "" && got[i].TraceID != "0af7651916cd43dd8448eb211c80319c" {
						t.Errorf("%s: span %d is not in the caller's trace: %s", name, i, got[i].TraceID)
					}
					if got[i].Name == "chat mock-chat" && got[i].ParentSpanID == "" {
						t.Errorf("%s: the chat span has no parent", name)
					}
				}
			}
		})
	}
}

// TestBufferSpanConcurrent: a span is safe to use from several goroutines, as the SDK's is.
func TestBufferSpanConcurrent(t *testing.T) {
	buf := NewSpanBuffer(8)
	_, span := newBufferTracer(buf, sdktrace.AlwaysSample()).Start(context.Background(), "s")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			span.SetAttributes(attribute.Int("http.response.status_code", i))
			span.AddEvent("stream.first_chunk")
			_ = span.IsRecording()
		}()
	}
	wg.Wait()
	span.End()
	span.End() // a second End does nothing
	if n := buf.Len(); n != 1 {
		t.Fatalf("%d records", n)
	}
}

// BenchmarkSpans: a server span and a chat span as the service makes them, through the SDK
// into the buffer and through the buffer's own tracer.
func BenchmarkSpans(b *testing.B) {
	run := func(b *testing.B, tr trace.Tracer) {
		b.ReportAllocs()
		for b.Loop() {
			story(tr, context.Background())
		}
	}
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(NewSpanBuffer(4096)))
		defer tp.Shutdown(context.Background())
		run(b, tp.Tracer("b"))
	})
	b.Run("buffer", func(b *testing.B) {
		run(b, newBufferTracer(NewSpanBuffer(4096), sdktrace.AlwaysSample()))
	})
}

// TestBufferSpanIsItsContext: the context Start returns is the span itself, and to the otel
// API and the context package it is what trace.ContextWithSpan would have made: the span is
// found in it and in what is derived from it, a span started under it is its child, every
// other value, the deadline and the cancellation are its parent's — and a span given more
// attributes than its room keeps them all, as the SDK's does.
func TestBufferSpanIsItsContext(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	tr := newBufferTracer(NewSpanBuffer(8), sdktrace.AlwaysSample())
	if tr.spanKey == nil {
		t.Fatal("the span key was not learnt")
	}
	ctx, span := tr.Start(parent, "chat")
	if ctx != context.Context(span.(*bufferSpan)) {
		t.Error("the context is not the span")
	}
	derived, stop := context.WithCancel(ctx)
	defer stop()
	if trace.SpanFromContext(ctx) != span || trace.SpanFromContext(derived) != span {
		t.Error("the span is not found in its context")
	}
	if ctx.Value(key{}) != "v" {
		t.Error("the parent's values are lost")
	}
	if d, ok := ctx.Deadline(); !ok || d.Before(time.Now().Add(59*time.Minute)) {
		t.Error("the parent's deadline is lost")
	}
	_, child := tr.Start(derived, "step")
	for i := range spanAttributeRoom + 4 {
		child.SetAttributes(attribute.Int(fmt.Sprintf("mockgateway.gateway.k%02d", i), i))
	}
	child.End()
	span.End()
	cancel()
	select {
	case <-derived.Done():
	case <-time.After(time.Second):
		t.Fatal("the parent's cancellation did not reach a context derived from the span")
	}
	if ctx.Err() != context.Canceled {
		t.Errorf("Err = %v", ctx.Err())
	}
	recs := tr.buffer.Query(SpanFilter{Limit: 8})
	if len(recs) != 2 || recs[0].Name != "chat" || recs[1].ParentSpanID != recs[0].SpanID {
		t.Fatalf("the step is not the chat span's child: %+v", recs)
	}
	if n := len(recs[1].Attributes); n != spanAttributeRoom+4 {
		t.Errorf("%d attributes kept, want %d", n, spanAttributeRoom+4)
	}
}

// TestSpanKeyLearnt: otel's key for the current span is learnt, so that the chain's request
// and the buffer tracer's spans carry their spans without trace.ContextWithSpan. If this
// fails after an otel upgrade, everything still works, one allocation per span dearer.
func TestSpanKeyLearnt(t *testing.T) {
	key := learnSpanKey()
	if key == nil {
		t.Fatal("no span key")
	}
	span := trace.Span(&bufferSpan{})
	if got := trace.ContextWithSpan(context.Background(), span).Value(key); got != span {
		t.Errorf("trace.ContextWithSpan's context answers the key with %v", got)
	}
}
