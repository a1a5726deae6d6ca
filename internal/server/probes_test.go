package server

import (
	"strings"
	"testing"
)

// TestProbesAreNotTraced: /health and /metrics start no span unless --trace-probes, and are
// measured and logged either way; every other route is traced.
func TestProbesAreNotTraced(t *testing.T) {
	for _, traceProbes := range []bool{false, true} {
		h := newHarness(t, func(d *Deps) { d.Config.TraceProbes = traceProbes })
		for _, path := range []string{"/health", "/metrics", "/v1/models"} {
			if rr := h.do("GET", path, ""); rr.Code != 200 {
				t.Fatalf("%s: %d", path, rr.Code)
			}
		}
		traced := map[string]bool{}
		for _, s := range h.spans.GetSpans() {
			traced[s.Name] = true
		}
		for path, want := range map[string]bool{"/health": traceProbes, "/metrics": traceProbes, "/v1/models": true} {
			if traced["GET "+path] != want {
				t.Errorf("trace-probes=%v: span for %s: %v, want %v (spans: %v)", traceProbes, path, traced["GET "+path], want, traced)
			}
			if !strings.Contains(h.logs.String(), `"route":"`+path+`"`) {
				t.Errorf("trace-probes=%v: %s not in the access log", traceProbes, path)
			}
		}
		rr := h.do("GET", "/metrics", "")
		for _, path := range []string{"/health", "/metrics"} {
			if !strings.Contains(rr.Body.String(), `route="`+path+`"`) {
				t.Errorf("trace-probes=%v: %s not counted in the metrics", traceProbes, path)
			}
		}
	}
}

// TestLocalKeyGuardsInspection: with a local key, /debug/traces and /_mock/* take it like /v1;
// the probe and the scrape stay open.
func TestLocalKeyGuardsInspection(t *testing.T) {
	h := newHarness(t, journaled, func(d *Deps) { d.Config.APIKey = "local-key" })
	for _, path := range []string{"/debug/traces", "/_mock/journal", "/_mock/fixtures", "/v1/models"} {
		if rr := h.do("GET", path, ""); rr.Code != 401 {
			t.Errorf("%s without the key: %d", path, rr.Code)
		}
		if rr := h.do("GET", path, "", "Authorization", "Bearer local-key"); rr.Code != 200 {
			t.Errorf("%s with the key: %d", path, rr.Code)
		}
	}
	for _, path := range []string{"/health", "/metrics"} {
		if rr := h.do("GET", path, ""); rr.Code != 200 {
			t.Errorf("%s without the key: %d", path, rr.Code)
		}
	}
}
