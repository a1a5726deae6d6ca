package observability

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// propagationCarrier is propagation.HeaderCarrier for the chain's Extract, without an
// allocation per request: the propagators ask for their headers in lower case, and
// http.Header canonicalizes each key it is asked for, which for "baggage" (not one of net/http's
// common headers) makes a new string every time. The headers of the W3C propagators are looked
// up by their canonical names directly; any other key goes through http.Header as before
// (TestPropagationCarrier).
type propagationCarrier http.Header

// canonicalPropagationKey is key's canonical form for the W3C propagators' headers, or "".
func canonicalPropagationKey(key string) string {
	switch key {
	case "traceparent":
		return "Traceparent"
	case "tracestate":
		return "Tracestate"
	case "baggage":
		return "Baggage"
	}
	return ""
}

func (c propagationCarrier) Get(key string) string {
	if k := canonicalPropagationKey(key); k != "" {
		if v := c[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return http.Header(c).Get(key)
}

// Values is what the baggage propagator reads: every baggage header, not only the first.
func (c propagationCarrier) Values(key string) []string {
	if k := canonicalPropagationKey(key); k != "" {
		return c[k]
	}
	return http.Header(c).Values(key)
}

func (c propagationCarrier) Set(key, value string) { propagation.HeaderCarrier(c).Set(key, value) }
func (c propagationCarrier) Keys() []string        { return propagation.HeaderCarrier(c).Keys() }
