package observability

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// learnSpanKey returns the context key under which trace.ContextWithSpan stores a span and
// trace.SpanFromContext looks it up. otel does not export it, so it is learnt by asking
// SpanFromContext once, with a context that notes the key it is asked for.
//
// Knowing it, a context of this package can carry a span itself, without the context.WithValue
// that trace.ContextWithSpan allocates: the chain's request context answers it with the server
// span (request), and a span of the buffer tracer is the context that carries it
// (bufferSpan.Value). To code using the otel API nothing changes: SpanFromContext finds the
// span, and a span set further down still shadows it.
//
// The key is checked before it is used: if otel ever looks spans up some other way, the result
// is nil and the callers fall back to trace.ContextWithSpan (TestSpanKeyLearnt fails then, so
// the lost allocation does not go unnoticed).
func learnSpanKey() any {
	probe := &keyProbe{Context: context.Background()}
	trace.SpanFromContext(probe)
	if probe.asked != 1 {
		return nil
	}
	want := &bufferSpan{} // any span: only its identity is compared
	if trace.SpanFromContext(keyAnswer{Context: context.Background(), key: probe.key, span: want}) != trace.Span(want) {
		return nil
	}
	return probe.key
}

// keyProbe is a context that notes the keys it is asked for.
type keyProbe struct {
	context.Context
	key   any
	asked int
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	p.asked++
	return p.Context.Value(key)
}

// keyAnswer is a context that answers key with span.
type keyAnswer struct {
	context.Context
	key  any
	span trace.Span
}

func (c keyAnswer) Value(key any) any {
	if key == c.key {
		return c.span
	}
	return c.Context.Value(key)
}
