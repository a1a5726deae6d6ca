//go:build !race

package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"mockgateway/internal/quota"
)

// Not built with -race: the race detector's instrumentation changes what escapes to the heap.

// limitedRequestAllocations bounds what a chat JSON request to a model with limits allocates
// beyond the same request to one without (BenchmarkChatJSONLimited's limits=catalog against
// limits=none, telemetry on, the buckets in memory): its draw (quotaDraw), the bucket key's ID
// (bucketKey), the headers' values and their slices (quota.HeaderValues), the settling's
// context, and the header map's growth for six more entries (three, and two more in the
// recorder's copy of it, which a connection does not make); a reset's text when the two
// buckets' differ.
const limitedRequestAllocations = 11

// headerQuotaParseAllocations is what parsing an x-mock-quota header adds: its parts' slice and
// the names seen.
const headerQuotaParseAllocations = 2

// TestLimitedRequestAllocations holds a limited request to limitedRequestAllocations more than
// an unlimited one, and one whose limits an x-mock-quota header gives to that and its parse.
func TestLimitedRequestAllocations(t *testing.T) {
	h := quotaBenchHandler(t)
	allocs := func(model string, header map[string]string) float64 {
		body := chatBody(model, "")
		send := func() {
			req := httptest.NewRequest("POST", chatPath, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range header {
				req.Header.Set(k, v)
			}
			rr := httptest.NewRecorder()
			h.handler.ServeHTTP(rr, req)
			if rr.Code != 200 {
				t.Fatalf("%s: %d %s", model, rr.Code, rr.Body)
			}
		}
		for range 4096 { // every ring slot of the span buffer has its bytes, every pool its items
			send()
		}
		return testing.AllocsPerRun(500, send)
	}
	none := allocs("mock-chat", nil)
	limited := allocs("mock-limited", nil)
	header := allocs("mock-chat", map[string]string{quota.Header: "rpm=" + benchQuotaLimit + ";tpm=" + benchQuotaLimit + ";rpd=" + benchQuotaLimit})
	t.Logf("allocations: no limits %v, limits %v, limits in the header %v", none, limited, header)
	if limited-none > limitedRequestAllocations {
		t.Errorf("a limited request allocates %v more than one without, want at most %d", limited-none, limitedRequestAllocations)
	}
	if header-none > limitedRequestAllocations+headerQuotaParseAllocations {
		t.Errorf("a request limited by its header allocates %v more than one without, want at most %d", header-none, limitedRequestAllocations+headerQuotaParseAllocations)
	}
}
