package observability

import (
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

const maxUserAgent = 128

// describeServerSpan gives the SERVER span the chain started its name and attributes. The chain
// makes it rather than an instrumentation library because those record the raw path, query and
// host a client sent; this one records only the allowlisted, bounded attributes of
// docs/telemetry.md.
func describeServerSpan(span trace.Span, r *http.Request, rec *Record) {
	if !span.IsRecording() {
		return
	}
	scratch := BorrowAttributes()
	defer scratch.Release()
	attrs := append(scratch.KeyValues(),
		attribute.String("http.request.method", rec.Method),
		attribute.Int("http.response.status_code", rec.Status),
		attribute.String("mockgateway.request_id", rec.RequestID),
		attribute.String("url.scheme", scheme(r)),
		attribute.String("network.protocol.version", protocolVersion(r)),
	)
	if rec.Route != RouteUnmatched {
		name := rec.SpanName
		if name == "" {
			name = rec.Method + " " + rec.Route
		}
		span.SetName(name)
		attrs = append(attrs, attribute.String("http.route", rec.Route), attribute.String("url.path", rec.Route))
	}
	if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		attrs = append(attrs, attribute.String("client.address", host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("client.port", p))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, attribute.String("user_agent.original", Sanitize(ua, maxUserAgent)))
	}
	if rec.ErrorCode != "" {
		attrs = append(attrs, attribute.String("error.type", rec.ErrorCode))
	}
	span.SetAttributes(attrs...)
	if rec.Status >= 500 {
		// The description is the normalized code: a Go error string could carry anything.
		span.SetStatus(codes.Error, rec.ErrorLabel())
	}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func protocolVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 2:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	}
	return "1.1"
}
