package server

import (
	"testing"

	"mockgateway/internal/testutil"
)

// checkScopeDeleteResetsQuota: a spent quota in a scope is forgotten with the scope (DELETE
// /_mock/scopes/{scope}), and the unscoped one with DELETE /_mock/fixtures: the next call is
// admitted on full buckets; another scope's stay spent.
func checkScopeDeleteResetsQuota(t *testing.T, h *harness) {
	t.Helper()
	q := []string{"X-Mock-Quota", "rpm=2;window=1m", "Authorization", "Bearer sk-scoped"}
	call := func(scope string) (int, string) {
		rr := h.do("POST", chatPath, chatBody("mock-chat", ""), append([]string{"X-Mock-Scope", scope}, q...)...)
		return rr.Code, rr.Header().Get("X-Ratelimit-Remaining-Requests")
	}
	for _, scope := range []string{"s", "other", ""} {
		call(scope)
		call(scope)
		if code, _ := call(scope); code != 429 {
			t.Fatalf("scope %q: the quota is not spent: %d", scope, code)
		}
	}
	if rr := h.do("DELETE", "/_mock/scopes/s", ""); rr.Code != 200 {
		t.Fatalf("DELETE: %d %s", rr.Code, rr.Body)
	}
	if code, left := call("s"); code != 200 || left != "1" {
		t.Errorf("after its scope was deleted: %d, remaining %q, want 200 and 1", code, left)
	}
	if code, _ := call("other"); code != 429 {
		t.Errorf("another scope: %d, want its quota still spent", code)
	}
	if code, _ := call(""); code != 429 {
		t.Errorf("the unscoped calls: %d, want their quota still spent", code)
	}
	if rr := h.do("DELETE", "/_mock/fixtures", ""); rr.Code != 200 {
		t.Fatalf("DELETE fixtures: %d %s", rr.Code, rr.Body)
	}
	if code, left := call(""); code != 200 || left != "1" {
		t.Errorf("the unscoped calls after DELETE /_mock/fixtures: %d, remaining %q", code, left)
	}
}

// TestScopeDeleteResetsQuota: in memory.
func TestScopeDeleteResetsQuota(t *testing.T) {
	h, _ := newQuotaHarness(t)
	checkScopeDeleteResetsQuota(t, h)
}

// TestScopeDeleteResetsQuotaRedis: in the shared store.
func TestScopeDeleteResetsQuotaRedis(t *testing.T) {
	checkScopeDeleteResetsQuota(t, sharedStateHarness(t))
}

// sharedStateHarness is a harness on a shared store (--state-store) of a redis-server of its own.
func sharedStateHarness(t *testing.T) *harness {
	t.Helper()
	return sharedHarness(t, testutil.StartRedis(t).URL())
}
