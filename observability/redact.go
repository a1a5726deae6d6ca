package observability

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Redaction is by construction: the allowlists below name every key that may leave the process.
// A new attribute or log field stays invisible until someone adds it here on purpose, so a
// careless SetAttributes or slog call can at worst lose data, never leak prompt text, headers or
// credentials. They are switch statements rather than maps so there is no package-level state
// anyone could mutate.

// SpanAttributeAllowed reports whether a span or event attribute key may be exported.
func SpanAttributeAllowed(key string) bool {
	switch key {
	case "http.request.method",
		"http.route",
		"http.response.status_code",
		"url.path",
		"url.scheme",
		"server.address",
		"server.port",
		"client.address",
		"client.port",
		"network.protocol.version",
		"network.peer.address",
		"user_agent.original",
		"error.type",
		"mockgateway.request_id",
		"gen_ai.operation.name",
		"gen_ai.provider.name",
		"gen_ai.request.model",
		"gen_ai.response.model",
		"gen_ai.response.id",
		"gen_ai.response.finish_reasons",
		"gen_ai.usage.input_tokens",
		"gen_ai.usage.output_tokens",
		"gen_ai.usage.reasoning.output_tokens",
		"gen_ai.request.max_tokens",
		"gen_ai.request.temperature",
		"gen_ai.request.choice.count",
		"gen_ai.request.stream",
		"mockgateway.stream.outcome",
		"mockgateway.stream.chunks",
		"mockgateway.fixture",
		"mockgateway.scope",
		"simulated":
		return true
	}
	// The simulation and gateway namespaces are ours: every key under them is written by this
	// service from bounded values (fault names, attempt counts, catalog ids).
	return strings.HasPrefix(key, "mockgateway.simulation.") ||
		strings.HasPrefix(key, "mockgateway.gateway.")
}

// LogFieldAllowed reports whether a top-level log attribute key may be written. There is no
// "error" and no "user_agent": free text has no key to be logged under.
func LogFieldAllowed(key string) bool {
	switch key {
	case "time", "level", "msg",
		"request_id", "trace_id", "span_id",
		"method", "route", "status", "error_code", "duration_ms",
		"model", "stream", "stream_outcome", "chunks", "prompt_tokens", "completion_tokens",
		"reasoning_tokens", "addr",
		"version", "release", "go_version", "exporter", "sampler", "config",
		"signal", "in_flight", "open_streams", "drain_timeout",
		"panic_type", "panic_location",
		"catalog", "models", "fault", "queue_ms", "attempts", "served_by", "fallback_from", "scope", "fixture",
		"fixtures", "loaded", "problem":
		return true
	}
	return false
}

// statusDescriptionAllowed keeps a span status description only when it is a bare code such as
// "internal_error". Descriptions are free text and the usual idiom, SetStatus(codes.Error,
// err.Error()), would export whatever the error wrapped — a decode error quoting the request
// body, for instance — so anything that is not a short token is dropped and the code remains.
func statusDescriptionAllowed(d string) bool {
	if len(d) == 0 || len(d) > 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// NewRedactingExporter wraps an exporter so that every exported span carries only allowlisted
// attributes (span attributes and event attributes); everything else is dropped before the
// wrapped exporter sees it. Links are dropped too, and so is a status description that is not a
// bare code.
func NewRedactingExporter(next sdktrace.SpanExporter) sdktrace.SpanExporter {
	return &redactingExporter{next: next}
}

type redactingExporter struct {
	next sdktrace.SpanExporter
}

func (e *redactingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return e.next.ExportSpans(ctx, spans)
	}
	// The SDK owns the slice it passes in, so build our own rather than overwrite its elements.
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = redactSpan(s)
	}
	return e.next.ExportSpans(ctx, out)
}

func (e *redactingExporter) Shutdown(ctx context.Context) error {
	return e.next.Shutdown(ctx)
}

// redactedSpan embeds the original span, which also satisfies ReadOnlySpan's unexported method,
// and overrides every accessor that could carry client-controlled text. The filtered values are
// computed once, because exporters may call the accessors more than once.
type redactedSpan struct {
	sdktrace.ReadOnlySpan
	attrs        []attribute.KeyValue
	events       []sdktrace.Event
	droppedAttrs int
	droppedLinks int
	status       sdktrace.Status
}

func redactSpan(s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	attrs, removed := filterAttributes(s.Attributes())
	r := &redactedSpan{
		ReadOnlySpan: s,
		attrs:        attrs,
		// Report removed attributes as dropped so a backend shows that something was withheld
		// rather than pretending the span was complete.
		droppedAttrs: s.DroppedAttributes() + removed,
		droppedLinks: s.DroppedLinks() + len(s.Links()),
		status:       s.Status(),
	}
	// Only the Error code carries a description (the SDK ignores it otherwise).
	if r.status.Code != codes.Error || !statusDescriptionAllowed(r.status.Description) {
		r.status.Description = ""
	}
	if events := s.Events(); len(events) > 0 {
		r.events = make([]sdktrace.Event, len(events))
		for i, ev := range events {
			kept, removed := filterAttributes(ev.Attributes)
			r.events[i] = sdktrace.Event{
				Name:                  ev.Name,
				Attributes:            kept,
				DroppedAttributeCount: ev.DroppedAttributeCount + removed,
				Time:                  ev.Time,
			}
		}
	}
	return r
}

// filterAttributes returns the allowlisted attributes and how many were removed. When nothing
// needs removing it returns the input unchanged, which is the common case and costs nothing.
func filterAttributes(in []attribute.KeyValue) ([]attribute.KeyValue, int) {
	allowed := 0
	for _, kv := range in {
		if SpanAttributeAllowed(string(kv.Key)) {
			allowed++
		}
	}
	if allowed == len(in) {
		return in, 0
	}
	out := make([]attribute.KeyValue, 0, allowed)
	for _, kv := range in {
		if SpanAttributeAllowed(string(kv.Key)) {
			out = append(out, kv)
		}
	}
	return out, len(in) - allowed
}

func (s *redactedSpan) Attributes() []attribute.KeyValue { return s.attrs }
func (s *redactedSpan) Events() []sdktrace.Event         { return s.events }
func (s *redactedSpan) Links() []sdktrace.Link           { return nil }
func (s *redactedSpan) DroppedAttributes() int           { return s.droppedAttrs }
func (s *redactedSpan) DroppedLinks() int                { return s.droppedLinks }
func (s *redactedSpan) Status() sdktrace.Status          { return s.status }
