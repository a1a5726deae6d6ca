package observability

import (
	"context"
	"log/slog"
	"net/http"
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
	// request, so that simulated latency is not counted as writing.
	WriteTimeout time.Duration
	// Draining reports whether the service is shutting down (nil: never). Responses begun while
	// it is carry Connection: close, so that clients leave their keep-alive connections for the
	// drain to close, instead of sending on one just as it is closed.
	Draining func() bool
	// UntracedPaths are paths whose requests start no span (the health probe and the metrics
	// scrape, unless --trace-probes): they are still measured and logged.
	UntracedPaths []string
}

// Chain wraps the whole router, so that every response — 404, 405, 413 and recovered panics
// included — is traced, counted and logged. What it does, in order (all of it in ServeHTTP):
//
//	recovery → request id → tracing → metrics → access log → handler recovery → router
//
// The outer recovery guards the chain itself (recoverChain). Handler panics are recovered
// innermost (serve), where they can still become a 500 that tracing, metrics and the access log
// see like any response. The response writer it hands on starts each response's write deadline
// and, while the service drains, adds Connection: close (statusWriter). When the request ends,
// finish writes the access line (accesslog.go), observes the metrics (metricsobserve.go) and
// describes the server span (serverspan.go).
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
	return &observer{next: next, c: c, log: c.Logger.Handler()}
}

type observer struct {
	next http.Handler
	c    ChainConfig
	log  slog.Handler // the record goes straight to the handler (see writeAccessLog)
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// recovery
	defer o.recoverChain(w, r)
	// request id
	rec := &Record{Start: time.Now(), Method: normalizeMethod(r.Method), Route: RouteUnmatched, metrics: o.c.Metrics}
	if id := r.Header.Get(RequestIDHeader); ValidRequestID(id) {
		rec.RequestID = id
	} else {
		rec.RequestID = newRequestID()
	}
	// Set before anything else can write the response.
	w.Header().Set(RequestIDHeader, rec.RequestID)

	// tracing
	ctx, span := o.startSpan(r, rec)
	// Deferred, so that even a panic in the chain itself leaves neither the gauge up nor the
	// span open; in the normal course it ends the span just after finish has described it.
	defer span.End()
	r = r.WithContext(withRecord(ctx, rec))
	// metrics
	rec.enterInFlight()
	defer rec.leaveInFlight()
	// handler recovery → router; access log, metrics and span attributes in finish
	abort := o.serve(&statusWriter{ResponseWriter: w, rec: rec, c: &o.c}, r)
	o.finish(r, rec, span)
	if abort != nil {
		panic(abort) // net/http's own signal, passed on once the request is accounted for
	}
}

// startSpan starts the request's SERVER span, in the trace its caller sent, or none for an
// untraced path: a non-recording span that ends as a no-op.
func (o *observer) startSpan(r *http.Request, rec *Record) (context.Context, trace.Span) {
	for _, p := range o.c.UntracedPaths {
		if r.URL.Path == p {
			return r.Context(), trace.SpanFromContext(r.Context())
		}
	}
	ctx := o.c.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return o.c.Tracer.Start(ctx, rec.Method, trace.WithSpanKind(trace.SpanKindServer))
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
func (o *observer) finish(r *http.Request, rec *Record, span trace.Span) {
	ctx := r.Context()
	end := time.Now() // one clock reading for the line, the durations and the exemplar gates
	writeAccessLog(ctx, o.log, rec, end)
	o.c.Metrics.observeRequest(ctx, rec, end)
	describeServerSpan(span, r, rec)
}
