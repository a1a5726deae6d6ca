package server

import (
	"encoding/json"
	"testing"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/quota"
)

// newRealtimeQuotaHarness is a harness on catalog cat whose quota buckets run on the wall clock.
func newRealtimeQuotaHarness(t *testing.T, cat string, opts ...func(*Deps)) *harness {
	t.Helper()
	return newHarness(t, append([]func(*Deps){func(d *Deps) {
		if cat != "" {
			c, err := catalog.Parse([]byte(cat))
			if err != nil {
				t.Fatal(err)
			}
			d.Catalog = c
		}
		m := memoryState(d.Config, false)
		m.Quotas = quota.NewBuckets(100, time.Now)
		d.State = m
	}}, opts...)...)
}

// TestQuotaGatewayChargesAheadBounded: retries charged ahead, further than the window, owe at
// most one bucket between them — a burst on rpm 1 per second is not served whole.
func TestQuotaGatewayChargesAheadBounded(t *testing.T) {
	h := newRealtimeQuotaHarness(t, `models:
  - {id: mock-ahead, kind: mock, behavior: chat, limits: {rpm: 1, window: 1s}, gateway: {retries: 1, backoff: 3s}}
`)
	served := 0
	for range 20 {
		if rr := h.do("POST", chatPath, chatBody("mock-ahead", "")); rr.Code == 200 {
			served++
		}
	}
	if served != 2 { // the first, and one retry on the bucket's one request of debt
		t.Errorf("rpm 1 per second, retries charged 3s ahead: %d of 20 served at once, want 2", served)
	}
}

// TestQuotaGatewaySleepIsBounded: a sleeping policy waits at most --stream-timeout in all; a
// retry that would wait beyond it is not made, and with no fallback the refusal stands.
func TestQuotaGatewaySleepIsBounded(t *testing.T) {
	h := newRealtimeQuotaHarness(t, `models:
  - {id: mock-sleepy, kind: mock, behavior: chat, limits: {rpm: 1, window: 60s}, gateway: {retries: 4, backoff: 10ms, sleep_backoff: true}}
`, func(d *Deps) { d.Config.StreamTimeout = 200 * time.Millisecond })
	h.do("POST", chatPath, chatBody("mock-sleepy", ""))
	rr := h.do("POST", chatPath, chatBody("mock-sleepy", ""))
	if rr.Code != 429 || rr.Header().Get("X-Mock-Gateway-Attempts") != "1" || rr.Header().Get("Retry-After") != "60" {
		t.Errorf("a retry-after of 60s beyond a 200ms stream timeout: %d, attempts %q, retry-after %q", rr.Code, rr.Header().Get("X-Mock-Gateway-Attempts"), rr.Header().Get("Retry-After"))
	}
}

// TestQuotaGatewayJoinsTheFaultsPlan: a quota retry that gets in on a model whose own fault
// the same policy handles uses one of its retries — attempts stay within retries+1 — and each
// retry is counted under what it retried.
func TestQuotaGatewayJoinsTheFaultsPlan(t *testing.T) {
	h := newRealtimeQuotaHarness(t, "")
	q := []string{"X-Mock-Quota", "rpm=1;window=1s"}
	h.do("POST", chatPath, chatBody("mock-gateway", ""), q...) // retries: 2; its server_error falls back to mock-chat
	rr := h.do("POST", chatPath, chatBody("mock-gateway", ""), q...)
	if rr.Code != 200 || rr.Header().Get("X-Mock-Gateway-Attempts") != "3" || rr.Header().Get("X-Mock-Gateway-Served-By") != "mock-chat" {
		t.Fatalf("%d, attempts %q, served by %q", rr.Code, rr.Header().Get("X-Mock-Gateway-Attempts"), rr.Header().Get("X-Mock-Gateway-Served-By"))
	}
	for fault, want := range map[string]float64{"rate_limit": 1, "server_error": 3} { // the first call's two and this one's
		if v := metricValue(t, h.metrics, "mockgateway_simulated_retries_total", map[string]string{"model": "mock-gateway", "fault": fault}); v != want {
			t.Errorf("retries of %s: %v, want %v", fault, v, want)
		}
	}
}

// TestQuotaSettleKeepsThePrompt: a call that produced nothing (a fault before output) gives
// back its output budget, and every bucket keeps its prompt alike — tpm as itpm.
func TestQuotaSettleKeepsThePrompt(t *testing.T) {
	h := newRealtimeQuotaHarness(t, "")
	if rr := h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":50`), "X-Mock-Quota", "tpm=100000;itpm=100000;window=24h", "X-Mock-Fault", "server_error"); rr.Code != 500 {
		t.Fatalf("the fault: %d", rr.Code)
	}
	var list struct {
		Data []struct {
			Tokens      struct{ Remaining int } `json:"tokens"`
			InputTokens struct{ Remaining int } `json:"input_tokens"`
		} `json:"data"`
	}
	rr := h.do("GET", "/_mock/quotas", "")
	if err := json.Unmarshal(rr.Body.Bytes(), &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("%d %s %v", rr.Code, rr.Body, err)
	}
	b := list.Data[0]
	if b.Tokens.Remaining != b.InputTokens.Remaining || b.Tokens.Remaining >= 100000 || b.Tokens.Remaining < 100000-40 {
		t.Errorf("after the fault: tokens %d, input tokens %d remaining; want both the limit less the prompt", b.Tokens.Remaining, b.InputTokens.Remaining)
	}
}

// TestQuotaGatewayNamesTheRefusalShown: a sleeping policy whose last draw is refused by another
// bucket than its first shows the client the last refusal (daily), and the journal names it.
func TestQuotaGatewayNamesTheRefusalShown(t *testing.T) {
	h := newRealtimeQuotaHarness(t, `models:
  - {id: mock-sleepy, kind: mock, behavior: chat, limits: {rpm: 1, rpd: 1, window: 1s}, gateway: {retries: 1, backoff: 10ms, sleep_backoff: true}}
`, journaled)
	in := []string{"X-Mock-Scope", "gw"}
	if rr := h.do("POST", chatPath, chatBody("mock-sleepy", ""), in...); rr.Code != 200 {
		t.Fatalf("first: %d", rr.Code)
	}
	rr := h.do("POST", chatPath, chatBody("mock-sleepy", ""), in...)
	e := readQuotaJournal(t, h, "gw")[0]
	if rr.Code != 429 || rr.Header().Get("Retry-After") != "86399" {
		t.Fatalf("want the daily refusal shown: %d %q %s", rr.Code, rr.Header().Get("Retry-After"), rr.Body)
	}
	if e.LimitHit != "daily" || e.Fault != "quota_daily" {
		t.Errorf("client shown the daily refusal (%s); journal limit_hit %q fault %q", rr.Body, e.LimitHit, e.Fault)
	}
}

// TestQuotaGatewaySleepsWithinTheStreamTimeout: the quota's sleeps and the same policy's sleeps
// for the model's fault, joined, wait at most --stream-timeout in all.
func TestQuotaGatewaySleepsWithinTheStreamTimeout(t *testing.T) {
	h := newRealtimeQuotaHarness(t, `models:
  - {id: mock-sleepy2, kind: mock, behavior: chat, fault: "server_error;attempts=1", limits: {rpm: 1, window: 1s}, gateway: {retries: 3, backoff: 900ms, sleep_backoff: true}}
`, func(d *Deps) { d.Config.StreamTimeout = 1500 * time.Millisecond })
	h.do("POST", chatPath, chatBody("mock-sleepy2", ""))
	h.spans.Reset()
	start := time.Now()
	rr := h.do("POST", chatPath, chatBody("mock-sleepy2", ""))
	var total int64
	for _, b := range retryBackoffs(h) {
		total += b
	}
	if total > 1500 {
		t.Errorf("%d, attempts %q: the policy slept %dms (backoffs %v; took %v), --stream-timeout 1.5s", rr.Code, rr.Header().Get("X-Mock-Gateway-Attempts"), total, retryBackoffs(h), time.Since(start).Round(time.Millisecond))
	}
}

// TestQuotaGatewayNumbersItsRetriesOnce: the joined plan's retries are numbered, and their
// backoffs grown, as one policy's.
func TestQuotaGatewayNumbersItsRetriesOnce(t *testing.T) {
	h := newRealtimeQuotaHarness(t, `models:
  - {id: mock-join, kind: mock, behavior: chat, fault: "server_error;attempts=1", limits: {rpm: 1, window: 1s}, gateway: {retries: 4, backoff: 1s, backoff_multiplier: 2}}
`)
	h.do("POST", chatPath, chatBody("mock-join", ""))
	h.spans.Reset()
	rr := h.do("POST", chatPath, chatBody("mock-join", ""))
	var att []int64
	for _, s := range h.spans.GetSpans() {
		for _, e := range s.Events {
			if e.Name == "gateway.retry" {
				att = append(att, attributeKeys(e.Attributes)["mockgateway.gateway.attempt"].AsInt64())
			}
		}
	}
	b := retryBackoffs(h)
	if len(att) != 2 || att[0] != 1 || att[1] != 2 || b[1] != 2000 {
		t.Errorf("%d attempts %q; gateway.retry attempts %v backoffs %v, want [1 2] [1000 2000]", rr.Code, rr.Header().Get("X-Mock-Gateway-Attempts"), att, b)
	}
}

// TestSleepingFaultPlanAloneIsAsBefore: a sleeping policy on a model without a quota plans its
// fault's retries as it always did — the stream timeout bounds only what follows a quota's
// sleeps.
func TestSleepingFaultPlanAloneIsAsBefore(t *testing.T) {
	h := newRealtimeQuotaHarness(t, `models:
  - {id: mock-pure, kind: mock, behavior: chat, fault: "server_error;attempts=2", gateway: {retries: 2, backoff: 300ms, sleep_backoff: true}}
`, func(d *Deps) { d.Config.StreamTimeout = 500 * time.Millisecond })
	rr := h.do("POST", chatPath, chatBody("mock-pure", ""))
	if rr.Code != 200 || rr.Header().Get("X-Mock-Gateway-Attempts") != "3" {
		t.Errorf("%d, attempts %q, backoffs %v; want 200 after two retries", rr.Code, rr.Header().Get("X-Mock-Gateway-Attempts"), retryBackoffs(h))
	}
}
