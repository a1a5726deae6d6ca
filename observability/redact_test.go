package observability

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestSpanAttributeAllowed(t *testing.T) {
	for key, want := range map[string]bool{
		"http.route":                        true,
		"mockgateway.request_id":            true,
		"gen_ai.usage.input_tokens":         true,
		"mockgateway.stream.chunks":         true,
		"simulated":                         true,
		"mockgateway.simulation.fault":      true,
		"mockgateway.gateway.attempts":      true,
		"mockgateway.simulation":            false, // the prefix needs its dot
		"gen_ai.input.messages":             false,
		"gen_ai.output.messages":            false,
		"gen_ai.system_instructions":        false,
		"gen_ai.tool.call.arguments":        false,
		"http.request.header.authorization": false,
		"url.query":                         false,
		"url.full":                          false,
		"exception.message":                 false,
		"":                                  false,
	} {
		if got := SpanAttributeAllowed(key); got != want {
			t.Errorf("SpanAttributeAllowed(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestLogFieldAllowed(t *testing.T) {
	for key, want := range map[string]bool{
		"request_id":    true,
		"trace_id":      true,
		"duration_ms":   true,
		"config":        true,
		"fallback_from": true,
		"queue_ms":      true,
		"prompt":        false,
		"headers":       false,
		"authorization": false,
		"body":          false,
		"":              false,
	} {
		if got := LogFieldAllowed(key); got != want {
			t.Errorf("LogFieldAllowed(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestRedactingExporterDropsWhatIsNotAllowlisted(t *testing.T) {
	const canary = "canary-7f3a"
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(NewRedactingExporter(mem)))
	tracer := tp.Tracer("test")

	_, linked := tracer.Start(context.Background(), "linked")
	linked.End()
	_, span := tracer.Start(context.Background(), "chat m",
		trace.WithLinks(trace.Link{
			SpanContext: linked.SpanContext(),
			Attributes:  []attribute.KeyValue{attribute.String("link.note", canary)},
		}))
	span.SetAttributes(
		attribute.String("gen_ai.request.model", "m"),
		attribute.Int("gen_ai.usage.input_tokens", 12),
		attribute.String("gen_ai.input.messages", canary),
		attribute.String("http.request.header.authorization", canary),
	)
	span.AddEvent("stream.completed", trace.WithAttributes(
		attribute.Int("mockgateway.stream.chunks", 3),
		attribute.String("chunk.text", canary),
	))
	span.RecordError(errorString(canary)) // an "exception" event with exception.message
	span.SetStatus(codes.Error, "decode body: "+canary)
	span.End()

	spans := mem.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("exported %d spans, want 2", len(spans))
	}
	got := spans[1]

	attrs := map[string]attribute.Value{}
	for _, kv := range got.Attributes {
		attrs[string(kv.Key)] = kv.Value
	}
	if attrs["gen_ai.request.model"].AsString() != "m" || attrs["gen_ai.usage.input_tokens"].AsInt64() != 12 {
		t.Errorf("allowed attributes not kept: %v", got.Attributes)
	}
	if len(attrs) != 2 {
		t.Errorf("attributes = %v, want only the two allowed ones", got.Attributes)
	}
	if got.DroppedAttributes != 2 {
		t.Errorf("DroppedAttributes = %d, want 2 (the removed ones)", got.DroppedAttributes)
	}

	if len(got.Events) != 2 {
		t.Fatalf("events = %v, want 2", got.Events)
	}
	ev := got.Events[0]
	if ev.Name != "stream.completed" || len(ev.Attributes) != 1 || ev.Attributes[0].Key != "mockgateway.stream.chunks" {
		t.Errorf("event = %+v, want stream.completed with only mockgateway.stream.chunks", ev)
	}
	if ev.DroppedAttributeCount != 1 {
		t.Errorf("event DroppedAttributeCount = %d, want 1", ev.DroppedAttributeCount)
	}
	if ex := got.Events[1]; ex.Name != "exception" || len(ex.Attributes) != 0 {
		t.Errorf("exception event = %+v, want its attributes removed", ex)
	}

	if len(got.Links) != 0 || got.DroppedLinks != 1 {
		t.Errorf("links = %v (dropped %d), want none kept and 1 dropped", got.Links, got.DroppedLinks)
	}
	if got.Status.Code != codes.Error || got.Status.Description != "" {
		t.Errorf("status = %+v, want Error without the free-text description", got.Status)
	}
}

func TestRedactingExporterKeepsCodeLikeStatusDescription(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(NewRedactingExporter(mem)))
	_, span := tp.Tracer("test").Start(context.Background(), "GET /v1/models")
	span.SetAttributes(attribute.String("http.route", "/v1/models"))
	span.SetStatus(codes.Error, "internal_error")
	span.End()

	got := mem.GetSpans()[0]
	if got.Status.Description != "internal_error" {
		t.Errorf("status description = %q, want internal_error kept", got.Status.Description)
	}
	if len(got.Attributes) != 1 || got.DroppedAttributes != 0 {
		t.Errorf("attributes = %v dropped %d, want the one allowed attribute untouched", got.Attributes, got.DroppedAttributes)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
