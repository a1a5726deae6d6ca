package observability

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestServerSpanAttributes: in every shape of request — routed or not, from an address with or
// without a port, with a user agent, over TLS, HTTP/1.0 and 2, failed — the server span's
// attributes hold each key once (bufferSpan.endWith keeps them as they come) and every key is
// allowlisted.
func TestServerSpanAttributes(t *testing.T) {
	for i, c := range []struct {
		remote, ua string
		rec        Record
		major      int
		minor      int
		tls        bool
	}{
		{remote: "10.0.0.1:443", ua: "client/1.0", rec: Record{Method: "POST", Route: "/v1/chat/completions", Status: 500, ErrorCode: "internal_error", SpanName: "POST /v1/chat/completions"}, major: 1, minor: 1, tls: true},
		{remote: "[::1]:x", rec: Record{Method: "GET", Route: RouteUnmatched, Status: 404, ErrorCode: "not_found"}, major: 2},
		{remote: "pipe", ua: "\x00", rec: Record{Method: "_OTHER", Route: "/health", Status: 200}, major: 1},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr, r.ProtoMajor, r.ProtoMinor = c.remote, c.major, c.minor
		if c.ua != "" {
			r.Header.Set("User-Agent", c.ua)
		}
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		_, attrs := describeServerSpan(nil, r, &c.rec)
		seen := map[attribute.Key]bool{}
		for _, kv := range attrs {
			if seen[kv.Key] || !SpanAttributeAllowed(string(kv.Key)) {
				t.Errorf("request %d: %s repeated or not allowlisted", i, kv.Key)
			}
			seen[kv.Key] = true
		}
		if len(attrs) > serverSpanAttributes {
			t.Errorf("request %d: %d attributes, room for %d", i, len(attrs), serverSpanAttributes)
		}
	}
}
