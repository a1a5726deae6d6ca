package observability

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

const maxUserAgent = 128

// serverSpanAttributes is the room endServerSpan gives the server span's attributes on its
// stack: all of them fit.
const serverSpanAttributes = 12

// endServerSpan gives the SERVER span the chain started its name, attributes and status, and
// ends it at end, the clock reading the access log and the metrics have. The chain makes it
// rather than an instrumentation library because those record the raw path, query and host a
// client sent; this one records only the allowlisted, bounded attributes of docs/telemetry.md.
//
// The buffer's span takes them all in one call, from this frame (bufferSpan.endWith); any
// other through the trace.Span methods, from a borrowed scratch.
func endServerSpan(span trace.Span, r *http.Request, rec *Record, end time.Time) {
	if !span.IsRecording() {
		span.End()
		return
	}
	code := codes.Unset
	if rec.Status >= 500 {
		code = codes.Error // the description is the normalized code: a Go error string could carry anything
	}
	if s, ok := span.(*bufferSpan); ok {
		var room [serverSpanAttributes]attribute.KeyValue
		name, attrs := describeServerSpan(room[:0], r, rec)
		s.endWith(name, attrs, code, rec.ErrorLabel(), end)
		return
	}
	scratch := BorrowAttributes()
	defer scratch.Release()
	name, attrs := describeServerSpan(scratch.KeyValues(), r, rec)
	if name != "" {
		span.SetName(name)
	}
	span.SetAttributes(attrs...)
	if code != codes.Unset {
		span.SetStatus(code, rec.ErrorLabel())
	}
	span.End(trace.WithTimestamp(end))
}

// describeServerSpan appends the server span's attributes to attrs, and names the span once
// its route is known ("": the name it started with, the method).
func describeServerSpan(attrs []attribute.KeyValue, r *http.Request, rec *Record) (string, []attribute.KeyValue) {
	attrs = append(attrs,
		attribute.String("http.request.method", rec.Method),
		attribute.Int("http.response.status_code", rec.Status),
		attribute.String("mockgateway.request_id", rec.RequestID),
		attribute.String("url.scheme", scheme(r)),
		attribute.String("network.protocol.version", protocolVersion(r)),
	)
	var name string
	if rec.Route != RouteUnmatched {
		name = rec.SpanName
		if name == "" {
			name = rec.Method + " " + rec.Route
		}
		attrs = append(attrs, attribute.String("http.route", rec.Route), attribute.String("url.path", rec.Route))
	}
	if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		attrs = append(attrs, attribute.String("client.address", host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("client.port", p))
		}
	}
	if ua := r.Header["User-Agent"]; len(ua) > 0 && ua[0] != "" { // r.UserAgent(), for a canonical key
		attrs = append(attrs, attribute.String("user_agent.original", Sanitize(ua[0], maxUserAgent)))
	}
	if rec.ErrorCode != "" {
		attrs = append(attrs, attribute.String("error.type", rec.ErrorCode))
	}
	return name, attrs
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
