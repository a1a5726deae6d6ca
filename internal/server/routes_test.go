package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDispatchServesAsTheRouter: dispatch answers every kind of request — each route, path
// variables, HEAD, 404, 405, the unsupported surfaces, an unclean path — as the router's own
// ServeHTTP does: the same status, headers and (where the answer is not made afresh per call)
// body.
func TestDispatchServesAsTheRouter(t *testing.T) {
	d, metricsOn := newHarness(t).deps.withDefaults()
	r := newRouter(d, metricsOn)
	fresh := map[string]bool{"/health": true, "/metrics": true, "/debug/traces": true, chatPath: true, "/v1/responses": true}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/health", ""}, {"HEAD", "/health", ""}, {"GET", "/v1/models", ""}, {"HEAD", "/v1/models", ""},
		{"GET", "/v1/models/mock-chat", ""}, {"GET", "/v1/models/no-such-model", ""}, {"POST", "/v1/models", "{}"},
		{"POST", chatPath, chatBody("mock-chat", "")}, {"GET", chatPath, ""}, {"POST", chatPath, "{"},
		{"POST", "/v1/responses", responsesBody("mock-chat", "")}, {"GET", "/v1/responses/resp_1", ""},
		{"GET", "/_mock/journal", ""}, {"GET", "/_mock/fixtures", ""}, {"DELETE", "/_mock/scopes/s1", ""},
		{"GET", "/openapi.json", ""}, {"GET", "/", ""}, {"GET", "/console/", ""}, {"GET", "/metrics", ""},
		{"GET", "/debug/traces", ""}, {"POST", "/v1/embeddings", "{}"}, {"GET", "/v1/files/file_1", ""},
		{"GET", "/nowhere", ""}, {"GET", "//v1/models", ""}, {"GET", "/v1/models/", ""}, {"PUT", "/health", ""},
	} {
		serve := func(h http.Handler) *httptest.ResponseRecorder {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rr := httptest.NewRecorder()
			h.ServeHTTP(rr, req)
			return rr
		}
		want, got := serve(r), serve(dispatch{r})
		name := c.method + " " + c.path
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("%s: dispatch %d %q, router %d %q", name, got.Code, got.Header().Get("Content-Type"), want.Code, want.Header().Get("Content-Type"))
			continue
		}
		if fresh[c.path] && got.Code == http.StatusOK {
			continue // ids, times and counters differ between any two calls
		}
		if len(got.Header()) != len(want.Header()) || got.Header().Get("Allow") != want.Header().Get("Allow") || got.Body.String() != want.Body.String() {
			t.Errorf("%s: dispatch answered\n%v %s\nthe router\n%v %s", name, got.Header(), got.Body, want.Header(), want.Body)
		}
	}
}
