package server

import (
	"regexp"
	"testing"

	"mockgateway/internal/testutil"
)

// tryAgain is the refusal of the fourth request within the minute: about 20s to wait (a
// bucket of 3 per minute), less the milliseconds the requests took.
var tryAgain = regexp.MustCompile(`Limit 3, Used 3, Requested 1\. Please try again in (20|19\.\d+)s\.`)

// TestQuotaAcrossReplicas: three replicas on one shared store (--state-store) enforce one
// quota: a client that goes round them gets rpm requests in all, then the fourth is refused
// wherever it lands, and another client key still has its own.
func TestQuotaAcrossReplicas(t *testing.T) {
	rs := testutil.StartRedis(t)
	var replicas []*harness
	for range 3 {
		replicas = append(replicas, sharedHarness(t, rs.URL()))
	}
	q := []string{"X-Mock-Quota", "rpm=3;window=1m", "Authorization", "Bearer sk-shared"}
	for i, want := range []string{"2", "1", "0"} {
		rr := replicas[i].do("POST", chatPath, chatBody("mock-chat", ""), q...)
		if rr.Code != 200 || rr.Header().Get("X-Ratelimit-Remaining-Requests") != want {
			t.Fatalf("replica %d: %d, remaining %q, want %s", i, rr.Code, rr.Header().Get("X-Ratelimit-Remaining-Requests"), want)
		}
	}
	for i, h := range replicas {
		rr := h.do("POST", chatPath, chatBody("mock-chat", ""), q...)
		if rr.Code != 429 || rr.Header().Get("Retry-After") != "20" || !tryAgain.MatchString(rr.Body.String()) {
			t.Errorf("replica %d, past the quota: %d %v %s", i, rr.Code, rr.Header(), rr.Body)
		}
	}
	rr := replicas[0].anthropic(messagesPath, `{"model":"mock-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Quota", "rpm=3;window=1m", "X-Api-Key", "sk-other")
	if rr.Code != 200 || rr.Header().Get("Anthropic-Ratelimit-Requests-Remaining") != "2" {
		t.Errorf("another key: %d %v", rr.Code, rr.Header())
	}
}
