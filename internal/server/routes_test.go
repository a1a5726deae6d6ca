package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"mockgateway/internal/catalog"
)

// TestDispatchServesAsTheRouter: dispatch answers every kind of request — each route, path
// variables, HEAD, 404, 405, the unsupported surfaces, an unclean path — as the router's own
// ServeHTTP does: the same status, headers and (where the answer is not made afresh per call)
// body.
func TestDispatchServesAsTheRouter(t *testing.T) {
	d, metricsOn := newHarness(t).deps.withDefaults()
	r := newRouter(d, newDialects(d.Sealer), metricsOn)
	fresh := map[string]bool{"/health": true, "/metrics": true, "/debug/traces": true, chatPath: true, "/v1/responses": true}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/health", ""}, {"HEAD", "/health", ""}, {"GET", "/v1/models", ""}, {"HEAD", "/v1/models", ""},
		{"GET", "/v1/models/mock-chat", ""}, {"GET", "/v1/models/no-such-model", ""}, {"POST", "/v1/models", "{}"},
		{"POST", chatPath, chatBody("mock-chat", "")}, {"GET", chatPath, ""}, {"POST", chatPath, "{"},
		{"POST", "/v1/responses", responsesBody("mock-chat", "")}, {"GET", "/v1/responses/resp_1", ""},
		{"GET", "/_mock/journal", ""}, {"GET", "/_mock/fixtures", ""}, {"DELETE", "/_mock/scopes/s1", ""}, {"DELETE", "/_mock/fixtures", ""},
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
		want, got := serve(r), serve(newDispatch(r, nil))
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

// TestDispatchExact: the busy routes are found by path and method; a route with variables, a
// prefix's paths, a route without a method matcher and a route an earlier one shadows are
// left to the router.
func TestDispatchExact(t *testing.T) {
	d, metricsOn := newHarness(t).deps.withDefaults()
	exact := newDispatch(newRouter(d, newDialects(d.Sealer), metricsOn), nil).exact
	has := func(method, path string) bool {
		for _, e := range exact[path] {
			if e.method == method {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"POST", chatPath, true}, {"POST", "/v1/responses", true}, {"GET", "/v1/models", true},
		{"HEAD", "/v1/models", true}, {"GET", "/health", true}, {"GET", "/metrics", true},
		{"GET", chatPath, false}, {"GET", "/v1/models/{model}", false}, {"GET", "/v1/models/mock-chat", false},
		{"GET", "/v1/responses/resp_1", false}, {"POST", "/v1/embeddings", false}, {"GET", "/console/app.js", false},
	} {
		if got := has(c.method, c.path); got != c.want {
			t.Errorf("%s %s in the exact table: %v, want %v", c.method, c.path, got, c.want)
		}
	}

	r := mux.NewRouter()
	r.PathPrefix("/a/").Handler(http.NotFoundHandler()).Methods(http.MethodGet)
	r.Handle("/a/b", http.NotFoundHandler()).Methods(http.MethodGet, http.MethodPost)
	shadowed := newDispatch(r, nil).exact["/a/b"]
	if len(shadowed) != 1 || shadowed[0].method != http.MethodPost {
		t.Errorf("/a/b, shadowed for GET by the prefix before it: %v, want POST alone", shadowed)
	}
}

// BenchmarkDispatch: finding the chat route, by the exact table and by the router's Match.
func BenchmarkDispatch(b *testing.B) {
	d, metricsOn := withState(Deps{Config: testConfig(), Catalog: catalog.Builtin()}).withDefaults()
	router := newRouter(d, newDialects(d.Sealer), metricsOn)
	req := httptest.NewRequest(http.MethodPost, chatPath, nil)
	req.Header.Set("Content-Type", "application/json")
	b.Run("exact", func(b *testing.B) {
		exact := newDispatch(router, nil).exact
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range exact[req.URL.Path] {
				if e.method == req.Method {
					break
				}
			}
		}
	})
	b.Run("router", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var match mux.RouteMatch
			router.Match(req, &match)
		}
	})
}
