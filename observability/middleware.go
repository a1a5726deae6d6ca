package observability

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ChainConfig is what the middleware chain needs; run builds it and passes it in.
type ChainConfig struct {
	Logger     *slog.Logger
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
	Metrics    *Metrics // nil turns metrics off (benchmarks of the bare service): see Chain
	// WriteInternalError writes the contract's 500 internal_error response. It is the server's
	// one error writer, passed in so that panics are answered in the same shape as any error.
	WriteInternalError func(http.ResponseWriter, *http.Request)
	// WriteTimeout bounds the writing of every response from its first byte (0: no bound). A
	// stream extends it on each write itself. It starts at the first write rather than with the
	// request, so that simulated latency is not counted as writing. It must be the server's
	// WriteTimeout too: net/http starts it as it reads the request, and a response that begins
	// within a 32nd of it keeps that deadline.
	WriteTimeout time.Duration
	// Draining reports whether the service is shutting down (nil: never). Responses begun while
	// it is carry Connection: close, so that clients leave their keep-alive connections for the
	// drain to close, instead of sending on one just as it is closed.
	Draining func() bool
	// UntracedPaths are paths whose requests start no span (the health probe and the metrics
	// scrape, unless --trace-probes): they are still measured and logged.
	UntracedPaths []string
	// Handling, when not nil, counts the requests in the chain — from the start to the access
	// line written — hijacked ones included, which http.Server's Shutdown forgets: run waits for
	// it to reach zero before the log closes (server.Drain.Wait).
	Handling *atomic.Int64
}

// Chain wraps the whole router, so that every response — 404, 405, 413 and recovered panics
// included — is traced, counted and logged. What it does, in order (all of it in ServeHTTP):
//
//	recovery → request id → tracing → metrics → access log → handler recovery → router
//
// The outer recovery guards the chain itself (recoverChain). Handler panics are recovered
// innermost (serve), where they can still become a 500 that tracing, metrics and the access log
// see like any response. The response writer it hands on starts each response's write deadline,
// sets its Date header (httpdate.go) and, while the service drains, adds Connection: close
// (statusWriter). When the request ends,
// finish writes the access line (accesslog.go), observes the metrics (metricsobserve.go) and
// describes and ends the server span (serverspan.go), all at one clock reading.
//
// Everything a request needs of the chain — its Record, its context, its writer and, with the
// buffer's tracer, its server span — is one allocation (request.go).
//
// The layers are one handler rather than six nested ones. A stream parks its goroutine for as
// long as it lasts, with every frame below it on the stack: six closures, each wrapped in
// http.HandlerFunc and each holding its after-work's locals (an slog.Record, the span's
// attributes), kept a parked stream's stack above 8 KB, so every open stream cost a 16 KB stack.
// Here the after-work runs in its own calls, off the parked stack, and the request is copied
// once for its context instead of at each layer.
//
// A nil c.Metrics becomes NewNoopMetrics(), so that nothing below the chain checks for it.
func Chain(next http.Handler, c ChainConfig) http.Handler {
	if c.Metrics == nil {
		c.Metrics = NewNoopMetrics()
	}
	o := &observer{
		next: next, c: c, log: c.Logger.Handler(), spanKey: learnSpanKey(),
		serverSpanOptions: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)},
		nosniff:           []string{"nosniff"},
	}
	if bt, ok := c.Tracer.(*bufferTracer); ok && o.spanKey != nil {
		o.buffer = bt
	}
	return o
}

type observer struct {
	next http.Handler
	c    ChainConfig
	log  slog.Handler // the record goes straight to the handler (see writeAccessLog)
	// spanKey is otel's context key for the current span (learnSpanKey); buffer is c.Tracer
	// when it is the buffer's own (and spanKey is known): startSpan makes its server span in
	// the request's allocation. serverSpanOptions are any other tracer's, made once.
	spanKey           any
	buffer            *bufferTracer
	serverSpanOptions []trace.SpanStartOption
	dates             dateHeader // the responses' Date header (statusWriter.begin)
	nosniff           []string   // X-Content-Type-Options' value, built once: set as is, it costs no allocation
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// recovery
	defer o.recoverChain(w, r)
	// request id
	traced := o.traced(r.URL.Path)
	q := o.newRequest(r, traced)
	if id := r.Header[RequestIDHeader]; len(id) > 0 && ValidRequestID(id[0]) { // Header.Get, for a canonical key
		q.rec.RequestID = id[0]
	} else {
		q.rec.RequestID = newRequestID()
	}
	// Set before anything else can write the response. (What Header().Set does, with the
	// value's slice in the request's allocation: RequestIDHeader is canonical.)
	q.requestID[0] = q.rec.RequestID
	w.Header()[RequestIDHeader] = q.requestID[:]

	// tracing
	o.startSpan(q, r.Context(), traced, propagationCarrier(r.Header))
	// Deferred, so that even a panic in the chain itself leaves neither the gauge up nor the
	// span open; in the normal course finish has ended the span, and this does nothing.
	defer q.span.End()
	r = r.WithContext(q)
	// metrics
	q.rec.enter(o.c.Handling)
	defer q.rec.leave()
	// handler recovery → router; access log, metrics and the span's end in finish
	q.w = statusWriter{ResponseWriter: w, rec: &q.rec, o: o}
	abort := o.serve(&q.w, r)
	o.finish(r, q)
	if abort != nil {
		panic(abort) // net/http's own signal, passed on once the request is accounted for
	}
}

// serve runs the router, turning a handler panic into the contract's 500 internal_error while
// tracing, metrics and the access log can still see it. The panic value is not logged: it may
// hold request data; its type and location are enough to find the bug. http.ErrAbortHandler is
// net/http's signal to drop the connection quietly: it is returned, to be raised again.
func (o *observer) serve(w http.ResponseWriter, r *http.Request) (abort any) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			abort = p
			return
		}
		logPanic(r, o.c.Logger, p)
		rec := RecordFrom(r.Context())
		rec.SetError("internal_error")
		if rec.Status == 0 { // nothing sent yet: the 500 can still be answered
			o.c.WriteInternalError(w, r)
		}
	}()
	o.next.ServeHTTP(w, r)
	return nil
}

// recoverChain is the last line: a panic in the chain itself. It cannot rely on the Record, so
// it makes sure the response still carries a request id.
func (o *observer) recoverChain(w http.ResponseWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	logPanic(r, o.c.Logger, p)
	if w.Header().Get(RequestIDHeader) == "" {
		w.Header().Set(RequestIDHeader, newRequestID())
	}
	o.c.WriteInternalError(w, r)
}

// finish accounts for the ended request from its Record: the access log line, the metrics, then
// the server span's attributes and its end.
//
//go:noinline
func (o *observer) finish(r *http.Request, q *request) {
	// One clock reading for the line, the durations, the exemplar gates and the span's end.
	end := ClockAfter(q.rec.Start)
	writeAccessLog(q, o.log, &q.rec, end)
	o.c.Metrics.observeRequest(q, &q.rec, end)
	endServerSpan(q.span, r, &q.rec, end)
}
