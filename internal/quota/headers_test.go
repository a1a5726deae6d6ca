package quota

import (
	"net/http"
	"testing"
	"time"
)

// TestHeaderValues: every header collected is set on its own, as http.Header.Set would, and an
// Add to one does not reach the next.
func TestHeaderValues(t *testing.T) {
	h := http.Header{}
	h.Set("X-A", "old")
	var hv HeaderValues
	hv.Int("X-A", 1000000000000)
	hv.String("X-B", "6m0s")
	hv.Time("X-C", time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC), time.RFC3339)
	hv.Int("X-D", -3)
	hv.SetOn(h)
	want := http.Header{}
	want.Set("X-A", "1000000000000")
	want.Set("X-B", "6m0s")
	want.Set("X-C", "2026-12-06T05:00:00Z")
	want.Set("X-D", "-3")
	for name := range want {
		if got := h[name]; len(got) != 1 || got[0] != want.Get(name) {
			t.Errorf("%s: %q, want %q", name, got, want[name])
		}
	}
	if len(h) != len(want) {
		t.Errorf("%d headers, want %d", len(h), len(want))
	}
	h.Add("X-A", "more")
	if got := h["X-B"]; len(got) != 1 || got[0] != "6m0s" {
		t.Errorf("an Add to X-A changed X-B: %q", got)
	}
}

// TestHeaderValuesLong: values past the buffer on the stack are kept whole.
func TestHeaderValuesLong(t *testing.T) {
	h := http.Header{}
	var hv HeaderValues
	long := string(make([]byte, 300))
	hv.Int("X-A", 42)
	hv.String("X-B", long)
	hv.Int("X-C", 7)
	hv.SetOn(h)
	if h.Get("X-A") != "42" || h.Get("X-B") != long || h.Get("X-C") != "7" {
		t.Errorf("%q %d %q", h.Get("X-A"), len(h.Get("X-B")), h.Get("X-C"))
	}
}
