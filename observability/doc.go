// Package observability owns the service's three signals and the middleware chain that produces
// them: the tracer provider and its embedded span buffer, the Prometheus registry and metric set,
// the slog handler, the per-request Record that handlers fill in, and the stream lifecycle.
//
// Everything here is a constructor: nothing is registered globally, no default registry or
// global tracer provider is touched, and the caller (cmd/mockgateway's run) builds each piece
// and passes it down. Redaction is by construction: span attributes and log fields pass through
// fixed allowlists (redact.go), and label values come from closed sets.
package observability
