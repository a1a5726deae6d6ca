package observability

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestPropagationCarrier: the chain's carrier reads what propagation.HeaderCarrier reads —
// the W3C headers in any case they were sent in, every baggage header, any other key — and
// extracting from a request without them allocates nothing.
func TestPropagationCarrier(t *testing.T) {
	h := http.Header{}
	h.Set("TraceParent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	h.Set("tracestate", "vendor=value")
	h.Add("Baggage", "k=v")
	h.Add("baggage", "k2=v2")
	h.Set("X-Other", "other")
	ours, theirs := propagationCarrier(h), propagation.HeaderCarrier(h)
	for _, key := range []string{"traceparent", "tracestate", "baggage", "x-other", "Traceparent", "missing"} {
		if ours.Get(key) != theirs.Get(key) || len(ours.Values(key)) != len(theirs.Values(key)) {
			t.Errorf("%s: %q %q, HeaderCarrier %q %q", key, ours.Get(key), ours.Values(key), theirs.Get(key), theirs.Values(key))
		}
	}
	ctx := Propagator().Extract(context.Background(), ours)
	if sc := trace.SpanContextFromContext(ctx); sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || sc.TraceState().Get("vendor") != "value" {
		t.Errorf("extracted %v", sc)
	}
	if b := baggage.FromContext(ctx); b.Member("k").Value() != "v" || b.Member("k2").Value() != "v2" {
		t.Errorf("baggage %v", b)
	}

	empty, bg, prop := propagationCarrier(http.Header{"User-Agent": {"x"}}), context.Background(), Propagator()
	if n := testing.AllocsPerRun(100, func() { prop.Extract(bg, empty) }); n != 0 {
		t.Errorf("extracting nothing allocates %v", n)
	}
}
