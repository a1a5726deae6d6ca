package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"mockgateway/internal/testutil"
)

// quotaEntry is what these tests read of a journal entry.
type quotaEntry struct {
	RequestID string  `json:"request_id"`
	Model     string  `json:"model"`
	Status    int     `json:"status"`
	ErrorCode string  `json:"error_code"`
	Fault     string  `json:"fault"`
	LimitHit  string  `json:"limit_hit"`
	QueueMS   float64 `json:"queue_ms"`
}

// readQuotaJournal reads a scope's journal, held to the OpenAPI document, and checks that no
// client key reached it.
func readQuotaJournal(t *testing.T, h *harness, scope string, keys ...string) []quotaEntry {
	t.Helper()
	rr := h.do("GET", "/_mock/journal?scope="+scope, "")
	if rr.Code != 200 {
		t.Fatalf("journal: %d %s", rr.Code, rr.Body)
	}
	loadAPIDoc(t).conform("the journal of quota refusals and queued calls", "GET", "/_mock/journal", rr)
	for _, k := range keys {
		if strings.Contains(rr.Body.String(), k) {
			t.Errorf("the journal shows the client key %q: %s", k, rr.Body)
		}
	}
	var got struct{ Data []quotaEntry }
	if err := json.Unmarshal(rr.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, rr.Body)
	}
	return got.Data
}

// checkQuotaJournal runs the calls of TestJournalQuotaLimitHit on h and checks their entries:
// each refused call names the limit it hit (the label of mockgateway_quota_refusals_total),
// input and output tokens included,
// beside the fault word of the access line; an admitted call names none.
func checkQuotaJournal(t *testing.T, h *harness, scope string) {
	t.Helper()
	in := func(q, key string) []string {
		return []string{"X-Mock-Scope", scope, "X-Mock-Quota", q, "Authorization", "Bearer " + key}
	}
	calls := []struct {
		quota, key, body string
		status           int
		limit, fault     string
	}{
		{"rpm=1;window=1m", "sk-journal-requests", chatBody("mock-chat", ""), 200, "", ""},
		{"rpm=1;window=1m", "sk-journal-requests", chatBody("mock-chat", ""), 429, "requests", "quota_requests"},
		{"tpm=100", "sk-journal-tokens", chatBody("mock-chat", `"max_tokens":500`), 429, "tokens", "quota_tokens"},
		{"rpd=1", "sk-journal-daily", chatBody("mock-chat", ""), 200, "", ""},
		{"rpd=1", "sk-journal-daily", chatBody("mock-chat", ""), 429, "daily", "quota_daily"},
		{"itpm=2", "sk-journal-input", chatBody("mock-chat", ""), 429, "input_tokens", "quota_input_tokens"},
		{"otpm=100", "sk-journal-output", chatBody("mock-chat", `"max_tokens":500`), 429, "output_tokens", "quota_output_tokens"},
	}
	for i, c := range calls {
		if rr := h.do("POST", chatPath, c.body, in(c.quota, c.key)...); rr.Code != c.status {
			t.Fatalf("call %d: %d %s", i, rr.Code, rr.Body)
		}
	}
	got := readQuotaJournal(t, h, scope, "sk-journal-")
	if len(got) != len(calls) {
		t.Fatalf("%d entries, want %d", len(got), len(calls))
	}
	for i, c := range calls {
		e := got[len(calls)-1-i] // newest first
		if e.Status != c.status || e.LimitHit != c.limit || e.Fault != c.fault || e.Model != "mock-chat" {
			t.Errorf("call %d (%s): entry %+v, want limit_hit %q and fault %q", i, c.quota, e, c.limit, c.fault)
		}
		if c.status == 429 && e.ErrorCode != "rate_limit_exceeded" {
			t.Errorf("call %d: error code %q", i, e.ErrorCode)
		}
	}
}

// TestJournalQuotaLimitHit: a call a simulated quota refused names in its journal entry the
// limit it hit — requests, tokens or daily — and never the client key.
func TestJournalQuotaLimitHit(t *testing.T) {
	checkQuotaJournal(t, newHarness(t, journaled), "journal-quota")
}

// TestJournalQuotaLimitHitShared: the same in the shared journal (--state-store), whose
// entries a background writer encodes and a read decodes again.
func TestJournalQuotaLimitHitShared(t *testing.T) {
	checkQuotaJournal(t, sharedHarness(t, testutil.StartRedis(t).URL()), "journal-quota-shared")
}

// checkLoadJournal fills mock-busy (one place, one waiting) and checks the entries: the call
// that waited for a place has its wait, queue_ms, as its access line has it; the one the queue
// had no room for says overloaded.
func checkLoadJournal(t *testing.T, h *harness, scope string) {
	t.Helper()
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	ctx := context.Background()
	in := []string{"X-Mock-Scope", scope}
	first := post(ctx, srv, chatPath, chatBody("mock-busy", ""), append([]string{"X-Mock-Latency", "ttfc=300ms;between=0ms"}, in...)...)
	waitFor(t, h, "mockgateway_model_running", 1)
	second := post(ctx, srv, chatPath, chatBody("mock-busy", ""), in...)
	waitFor(t, h, "mockgateway_model_queued", 1)
	if rr := h.do("POST", chatPath, chatBody("mock-busy", ""), in...); rr.Code != 503 {
		t.Fatalf("past the queue: %d %s", rr.Code, rr.Body)
	}
	if s1, s2 := <-first, <-second; s1 != 200 || s2 != 200 {
		t.Fatalf("first %d, second %d", s1, s2)
	}
	waitFor(t, h, "mockgateway_model_running", 0)
	got := readQuotaJournal(t, h, scope)
	var queued, overloaded, straight int
	for _, e := range got {
		switch {
		case e.LimitHit == "overloaded":
			overloaded++
			if e.Status != 503 || e.ErrorCode != "server_is_overloaded" || e.Fault != "overloaded" || e.QueueMS != 0 {
				t.Errorf("the overloaded call's entry: %+v", e)
			}
		case e.QueueMS > 0:
			queued++
			if e.Status != 200 || e.QueueMS < 100 || e.LimitHit != "" {
				t.Errorf("the queued call's entry: %+v", e)
			}
		default:
			straight++
		}
	}
	if queued != 1 || overloaded != 1 || straight != 1 {
		t.Errorf("%d queued, %d overloaded, %d served at once; want one each: %+v", queued, overloaded, straight, got)
	}
}

// TestJournalQueueAndOverload: a call that waited for its model's capacity has its wait in
// its journal entry (queue_ms), one refused as overloaded says so (limit_hit).
func TestJournalQueueAndOverload(t *testing.T) {
	h := newHarness(t, journaled, func(d *Deps) { d.Catalog = loadCatalog(t) })
	checkLoadJournal(t, h, "journal-load")
}

// TestJournalQueueAndOverloadShared: the same in the shared journal.
func TestJournalQueueAndOverloadShared(t *testing.T) {
	h := sharedHarness(t, testutil.StartRedis(t).URL(), func(d *Deps) { d.Catalog = loadCatalog(t) })
	checkLoadJournal(t, h, "journal-load-shared")
}
