package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"mockgateway/internal/testutil"
)

// listedQuota is what these tests read of GET /_mock/quotas's entries.
type listedQuota struct {
	Model, Scope, Org string
	Limits            struct {
		RPM, TPM, RPD, ITPM, OTPM int
		WindowMS                  int64 `json:"window_ms"`
	}
	Requests, Tokens, Daily *listedBucket
	InputTokens             *listedBucket `json:"input_tokens"`
	OutputTokens            *listedBucket `json:"output_tokens"`
}

type listedBucket struct {
	Limit, Remaining int
	ResetMS          int64 `json:"reset_ms"`
}

var orgID = regexp.MustCompile(`^org-[0-9a-f]+$`)

// readQuotas reads GET /_mock/quotas with the query and headers given, held to the OpenAPI
// document, and checks that no client key is in it.
func readQuotas(t *testing.T, h *harness, d *apiDoc, query string, header ...string) []listedQuota {
	t.Helper()
	rr := h.do("GET", "/_mock/quotas"+query, "", header...)
	if rr.Code != http.StatusOK {
		t.Fatalf("GET /_mock/quotas%s: %d %s", query, rr.Code, rr.Body)
	}
	d.conform("the quota list", "GET", "/_mock/quotas", rr)
	if strings.Contains(rr.Body.String(), "sk-quota-") {
		t.Errorf("the quota list shows a client key: %s", rr.Body)
	}
	var got struct {
		Object, Scope string
		Data          []listedQuota
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &got); err != nil || got.Object != "list" {
		t.Fatalf("%v: %s", err, rr.Body)
	}
	return got.Data
}

// checkQuotaList has two client keys draw from mock-chat's quota in a scope and reads the
// scope's buckets: one entry per organization, each bucket with its limit, what remains and
// when it is full again; nothing in another scope; limit bounds the list; bad input is refused
// in the control surface's words.
func checkQuotaList(t *testing.T, h *harness, scope string) {
	t.Helper()
	d := loadAPIDoc(t)
	in := func(key string) []string {
		return []string{"X-Mock-Scope", scope, "X-Mock-Quota", "rpm=3;tpm=10000;window=10s", "Authorization", "Bearer " + key}
	}
	for _, key := range []string{"sk-quota-one", "sk-quota-one", "sk-quota-two"} {
		if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), in(key)...); rr.Code != 200 {
			t.Fatalf("%s: %d %s", key, rr.Code, rr.Body)
		}
	}
	got := readQuotas(t, h, d, "?scope="+scope)
	if len(got) != 2 {
		t.Fatalf("%d entries, want one per client key: %+v", len(got), got)
	}
	remaining := map[int]bool{}
	orgs := map[string]bool{}
	for _, q := range got {
		if q.Model != "mock-chat" || q.Scope != scope || !orgID.MatchString(q.Org) || q.Limits.RPM != 3 || q.Limits.TPM != 10000 ||
			q.Limits.RPD != 0 || q.Limits.WindowMS != 10000 || q.Requests == nil || q.Tokens == nil || q.Daily != nil {
			t.Fatalf("entry %+v", q)
		}
		if q.Requests.Limit != 3 || q.Requests.ResetMS <= 0 || q.Requests.ResetMS > 10000 || q.Tokens.Limit != 10000 || q.Tokens.Remaining >= 10000 {
			t.Errorf("buckets: requests %+v, tokens %+v", *q.Requests, *q.Tokens)
		}
		remaining[q.Requests.Remaining] = true
		orgs[q.Org] = true
	}
	if !remaining[1] || !remaining[2] || len(orgs) != 2 {
		t.Errorf("two organizations, one with 1 request left and one with 2: %+v", got)
	}
	if again := readQuotas(t, h, d, "", "X-Mock-Scope", scope); len(again) != 2 {
		t.Errorf("the scope from x-mock-scope: %d entries", len(again))
	}
	if other := readQuotas(t, h, d, "?scope="+scope+"-other"); len(other) != 0 {
		t.Errorf("another scope's buckets: %+v", other)
	}
	// Anthropic's input and output token limits have buckets of their own.
	if rr := h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":100`), "X-Mock-Scope", scope+"-io", "X-Mock-Quota", "itpm=1000;otpm=2000"); rr.Code != 200 {
		t.Fatalf("itpm and otpm: %d %s", rr.Code, rr.Body)
	}
	if io := readQuotas(t, h, d, "?scope="+scope+"-io"); len(io) != 1 || io[0].Limits.ITPM != 1000 || io[0].Limits.OTPM != 2000 || io[0].Requests != nil ||
		io[0].InputTokens == nil || io[0].InputTokens.Limit != 1000 || io[0].InputTokens.Remaining >= 1000 || io[0].OutputTokens == nil || io[0].OutputTokens.Limit != 2000 {
		t.Errorf("input and output tokens: %+v", io)
	}
	if one := readQuotas(t, h, d, "?limit=1&scope="+scope); len(one) != 1 {
		t.Errorf("limit 1: %d entries", len(one))
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?limit=many", "?limit=%2B5", "?limit=-0", "?scope=a%2Fb"} {
		rr := h.do("GET", "/_mock/quotas"+bad, "")
		d.conform("a refused quota list", "GET", "/_mock/quotas", rr)
		if e := decodeError(t, rr.Body.Bytes()); rr.Code != 400 || e.Code != "invalid_value" {
			t.Errorf("%s: %d %s", bad, rr.Code, rr.Body)
		}
	}
	checkError(t, h.do("GET", "/_mock/quotas", "", "X-Mock-Scope", "not a scope"), 400, "invalid_simulation_header", "X-Mock-Scope")
}

// TestQuotaList: GET /_mock/quotas lists a scope's simulated quota buckets, in memory.
func TestQuotaList(t *testing.T) {
	checkQuotaList(t, newHarness(t), "quota-list")
}

// TestQuotaListShared: the same buckets in the shared store (--state-store).
func TestQuotaListShared(t *testing.T) {
	checkQuotaList(t, sharedHarness(t, testutil.StartRedis(t).URL()), "quota-list-shared")
}

// TestQuotaListGuards: GET /_mock/quotas is guarded as the rest of the control surface: the
// local key when one is set, and a page on another origin is refused.
func TestQuotaListGuards(t *testing.T) {
	keyed := newHarness(t, func(d *Deps) { d.Config.APIKey = "local-key" })
	checkError(t, keyed.do("GET", "/_mock/quotas", ""), 401, "missing_api_key", "")
	if rr := keyed.do("GET", "/_mock/quotas", "", "Authorization", "Bearer local-key"); rr.Code != 200 || !strings.Contains(rr.Body.String(), `"data":[]`) {
		t.Errorf("with the key: %d %s", rr.Code, rr.Body)
	}
	h := newHarness(t)
	if rr := h.do("GET", "/_mock/quotas", "", "Origin", "https://evil.example"); rr.Code != 403 || !strings.Contains(rr.Body.String(), "origin_not_allowed") {
		t.Errorf("a foreign origin: %d %s", rr.Code, rr.Body)
	}
	if rr := h.do("GET", "/_mock/quotas", "", "Host", "rebind.evil.example:8080"); rr.Code != 403 || !strings.Contains(rr.Body.String(), "host_not_allowed") {
		t.Errorf("a rebinding host: %d %s", rr.Code, rr.Body)
	}
}
