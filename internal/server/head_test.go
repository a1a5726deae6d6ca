package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHeadOnGetRoutes: every GET route answers HEAD with the GET's status and headers and no
// body, and a route's 405 lists HEAD beside GET.
func TestHeadOnGetRoutes(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	for _, path := range []string{"/health", "/v1/models", "/v1/models/mock-chat", "/openapi.json", "/metrics", "/debug/traces"} {
		get, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, get.Body)
		get.Body.Close()
		head, err := http.Head(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(head.Body)
		head.Body.Close()
		if head.StatusCode != get.StatusCode || len(body) != 0 || head.Header.Get("X-Request-Id") == "" ||
			head.Header.Get("Content-Type") != get.Header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d, %d bytes, headers %v; GET gave %d", path, head.StatusCode, len(body), head.Header, get.StatusCode)
		}
	}
	if rr := h.do("POST", "/health", `{}`); rr.Code != 405 || rr.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /health: %d, Allow %q", rr.Code, rr.Header().Get("Allow"))
	}
}
