package server

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// unavailableState is a harness whose shared state store (--state-store) does not answer: a
// port nothing listens on. No Redis is needed to see what the service does without one.
func unavailableState(t *testing.T) *harness {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // a port just freed: connections to it are refused
	return sharedHarness(t, "redis://app:pw-canary-123@"+addr+"/0")
}

// TestStateUnavailable: with the shared store down, a request that needs no shared state (no
// scope, no unscoped runtime fixtures) is served as before; one that does is 503
// state_unavailable in the envelope with x-request-id, as are the control routes; /health stays
// 200 and says the store is unavailable; the URL's password is in no answer and no log.
func TestStateUnavailable(t *testing.T) {
	h := unavailableState(t)
	if rr := h.do("POST", chatPath, chatBody("mock-chat", "")); rr.Code != http.StatusOK {
		t.Fatalf("unscoped generated request: %d %s", rr.Code, rr.Body)
	}
	scoped := []string{"X-Mock-Scope", "down-1"}
	for _, r := range []struct{ method, path, body string }{
		{"POST", chatPath, chatBody("mock-chat", "")},
		{"POST", "/v1/responses", `{"model":"mock-echo","input":"hi"}`},
		{"POST", "/_mock/fixtures", `{"fixtures":[{"name":"a","reply":{"content":"A."}}]}`},
		{"GET", "/_mock/fixtures", ""},
		{"DELETE", "/_mock/fixtures", ""},
		{"DELETE", "/_mock/scopes/down-1", ""},
		{"GET", "/_mock/journal", ""},
		{"GET", "/_mock/quotas", ""},
	} {
		rr := h.do(r.method, r.path, r.body, scoped...)
		if rr.Code != http.StatusServiceUnavailable || !strings.Contains(rr.Body.String(), `"code":"state_unavailable"`) ||
			!strings.Contains(rr.Body.String(), `"type":"server_error"`) || rr.Header().Get("X-Request-Id") == "" {
			t.Errorf("%s %s in a scope: %d %s", r.method, r.path, rr.Code, rr.Body)
		}
	}
	// A quota lives in the store too: with the store down, a limited request cannot be counted.
	if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Quota", "rpm=5"); rr.Code != http.StatusServiceUnavailable || !strings.Contains(rr.Body.String(), `"code":"state_unavailable"`) {
		t.Errorf("a request with a quota: %d %s", rr.Code, rr.Body)
	}
	// The Anthropic dialect answers in its own envelope, with the same status.
	rr := h.do("POST", "/v1/messages", `{"model":"mock-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`,
		"X-Mock-Scope", "down-1", "Anthropic-Version", "2023-06-01")
	if rr.Code != http.StatusServiceUnavailable || rr.Header().Get("X-Request-Id") == "" || !strings.Contains(rr.Body.String(), `"type":"error"`) {
		t.Errorf("POST /v1/messages in a scope: %d %s", rr.Code, rr.Body)
	}
	rr = h.do("GET", "/health", "")
	if rr.Code != http.StatusOK || !strings.Contains(rr.Body.String(), `"state":{"store":"redis","available":false}`) {
		t.Errorf("/health: %d %s", rr.Code, rr.Body)
	}
	if strings.Contains(h.logs.String(), "pw-canary-123") {
		t.Errorf("the store's password reached the log")
	}
	if !strings.Contains(h.logs.String(), `"error_code":"state_unavailable"`) {
		t.Errorf("the 503s were not logged with their code")
	}
}

// conformStateUnavailable holds the answers of an unavailable state store to the document.
func conformStateUnavailable(t *testing.T, d *apiDoc) {
	h := unavailableState(t)
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/health", ""},
		{"POST", chatPath, chatBody("mock-chat", "")},
		{"POST", "/_mock/fixtures", `{"fixtures":[{"name":"a","reply":{"content":"A."}}]}`},
		{"GET", "/_mock/fixtures", ""},
		{"DELETE", "/_mock/fixtures", ""},
		{"DELETE", "/_mock/scopes/down-1", ""},
		{"GET", "/_mock/journal", ""},
		{"GET", "/_mock/quotas", ""},
	} {
		rr := h.do(r.method, r.path, r.body, "X-Mock-Scope", "down-1")
		d.conform("state store down: "+r.method+" "+r.path, r.method, r.path, rr)
	}
}
