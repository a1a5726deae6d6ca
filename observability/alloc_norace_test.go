//go:build !race

package observability

import (
	"net/http"
	"testing"
)

// Not built with -race: the race detector's instrumentation changes what escapes to the heap,
// and its sync.Pool drops what it is given, so there the counts below are not the program's.

// TestRequestAllocations: what the chain allocates for a request with a chat span, all
// telemetry on. The request (Record, context, writer, server span: request), the request's
// copy for its context (net/http's WithContext), the request id, the chat span with its
// context and attributes (spanWithAttributes): four. Nothing per attribute, per log line, per
// observation (exemplars aside: at most one family's labels every 100 ms).
func TestRequestAllocations(t *testing.T) {
	h, r := chainBench(t, true)
	w := &discardWriter{h: http.Header{}}
	for range 4096 { // every ring slot of the buffer has its bytes
		h.ServeHTTP(w, r)
	}
	if n := testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) }); n > 4 {
		t.Errorf("%v allocations per request, want at most 4", n)
	}
}

// TestDroppedAccessLineAllocations: a request whose access line --access-log leaves out
// allocates no more than one whose line is written: the decision is a comparison and, for a
// success, one atomic count.
func TestDroppedAccessLineAllocations(t *testing.T) {
	allocs := map[string]float64{}
	for _, access := range []string{"all", "errors", "sample"} {
		h, r := chainBenchLogged(t, true, access)
		w := &discardWriter{h: http.Header{}}
		for range 4096 {
			h.ServeHTTP(w, r)
		}
		allocs[access] = testing.AllocsPerRun(200, func() { h.ServeHTTP(w, r) })
	}
	if allocs["errors"] > allocs["all"] || allocs["sample"] > allocs["all"] || allocs["all"] > 4 {
		t.Errorf("allocations per request %v: a dropped line must cost no more than a written one (at most 4)", allocs)
	}
}
