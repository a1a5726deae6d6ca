// Package observability owns the service's three signals and the middleware chain that produces
// them: the tracer provider and its embedded span buffer, the Prometheus registry and metric set,
// the slog handler, the per-request Record that handlers fill in, and the stream lifecycle.
//
// Everything here is a constructor: nothing is registered globally, no default registry or
// global tracer provider is touched, and the caller (cmd/mockgateway's run) builds each piece
// and passes it down. Redaction is by construction: span attributes and log fields pass through
// fixed allowlists (redact.go), and label values come from closed sets.
//
// Without metrics (benchmarks of the bare service) the chain and the streams run on
// NewNoopMetrics, whose instruments discard: no code below the chain checks for a nil Metrics.
//
// Files by concern: middleware.go is the chain, in request order, and the files it calls are
// request.go (a request's one allocation, its context and its server span's start),
// requestid.go, carrier.go, statuswriter.go, serverspan.go, accesslog.go (with logclock.go) and
// panic.go; metrics.go is the metric set, metricsobserve.go what is observed into it,
// exemplar.go the exemplar sampling; streamtelemetry.go follows an SSE stream's lifecycle for
// all three signals; tracing.go and otlp.go build the tracer provider and its exporter,
// buffertracer.go is the tracer of the embedded buffer (spanbuffer.go, spanrecord.go), and
// spankey.go lets the chain's and the tracer's contexts carry spans themselves; clock.go reads
// the clock once where time.Now reads it twice; logging.go and logwriter.go are the logger,
// logfile.go its rotated file, and logsetup.go puts them together with the --access-log filter.
package observability
