package observability

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// request is one request in the chain, made in one allocation: the Record the handlers fill
// in, the response writer they write to, and the context they see, which is the request
// itself; with the chain's server span too when it makes it (requestWithSpan). As separate
// pieces these were six allocations: the Record, the writer, a context.WithValue for each of
// the Record and the span, the span, and its attributes (TestRequestAllocations).
type request struct {
	parent context.Context // the request's own context, with the caller's trace extracted
	o      *observer
	// span is the server span, or on an untraced path the no-op span of parent.
	span trace.Span
	// server is where the chain makes the server span (requestWithSpan), or nil. When it
	// does, parent does not carry the span: the request answers otel's span key with it.
	server *bufferSpan

	rec Record
	w   statusWriter
	// requestID is the value slice of the X-Request-Id header, here rather than in an
	// allocation of its own (http.Header.Set makes one per call).
	requestID [1]string
}

// requestWithSpan is a request whose server span the chain makes itself: a traced path with
// the buffer's tracer (observer.buffer). Other requests — untraced paths, other tracers — go
// without the span's room.
type requestWithSpan struct {
	request
	serverSpan bufferSpan
}

// newRequest makes the request's one allocation, its Record started now, with the server
// span's room when the chain makes the span.
func (o *observer) newRequest(r *http.Request, traced bool) *request {
	var q *request
	if traced && o.buffer != nil {
		qs := new(requestWithSpan)
		q = &qs.request
		q.server = &qs.serverSpan
	} else {
		q = new(request)
	}
	q.o = o
	q.rec = Record{Start: time.Now(), Method: normalizeMethod(r.Method), Route: RouteUnmatched, metrics: o.c.Metrics}
	return q
}

// Deadline, Done, Err and Value make the request the context its handlers see: it answers
// RecordFrom's key with the Record and otel's span key (learnSpanKey) with the server span,
// and every other key from the request's own context.
func (q *request) Deadline() (time.Time, bool) { return q.parent.Deadline() }
func (q *request) Done() <-chan struct{}       { return q.parent.Done() }
func (q *request) Err() error                  { return q.parent.Err() }

func (q *request) Value(key any) any {
	if _, ok := key.(recordKey); ok {
		return &q.rec
	}
	if q.server != nil && key == q.o.spanKey {
		return q.span
	}
	return q.parent.Value(key)
}

// traced reports whether a request for path starts a span: all but the UntracedPaths.
func (o *observer) traced(path string) bool {
	for _, p := range o.c.UntracedPaths {
		if path == p {
			return false
		}
	}
	return true
}

// startSpan starts the request's SERVER span, in the trace its caller sent, or none for an
// untraced path: then span is parent's, a non-recording span that ends as a no-op.
//
// With the buffer's tracer the span is made in the request's own allocation and starts when
// the request does (one clock reading for both); with any other tracer, by its Start.
func (o *observer) startSpan(q *request, ctx context.Context, traced bool, header propagationCarrier) {
	q.parent = ctx
	if !traced {
		q.span = trace.SpanFromContext(ctx)
		return
	}
	ctx = o.c.Propagator.Extract(ctx, header)
	if q.server != nil {
		o.buffer.begin(q.server, ctx, q.rec.Method, trace.SpanKindServer, q.rec.Start)
		q.parent, q.span = ctx, q.server
		return
	}
	q.parent, q.span = o.c.Tracer.Start(ctx, q.rec.Method, o.serverSpanOptions...)
}
