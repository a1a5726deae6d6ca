package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestCrossSiteRequestsAreRefused: what a page on another site sends without an Origin — a
// no-cors fetch, an <img>, a <script src> — carries Sec-Fetch-Site: cross-site; it is 403
// origin_not_allowed on every route but /health, reads included. Same-origin (the console),
// same-site (an app on another localhost port), none (a URL typed in the address bar) and no
// header at all (every SDK) are served; so is an origin of --cors-origins, which is cross-site
// by nature.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	const app = "http://localhost:5173"
	_, srv := browserServer(t, func(d *Deps) { d.Config.CORSOrigins = []string{app} })
	for _, site := range []string{"cross-site", "Cross-Site"} {
		for _, path := range []string{"/_mock/journal", "/_mock/fixtures", "/debug/traces", "/v1/models", "/metrics", "/openapi.json", "/", "/console/app.js", "/nope"} {
			resp, body := send(t, srv, "GET", path, "", "", "Sec-Fetch-Site", site)
			refused(t, "GET "+path+" "+site, resp, body, "origin_not_allowed")
		}
		resp, body := send(t, srv, "POST", "/_mock/fixtures", "", pwn, "Sec-Fetch-Site", site, "Content-Type", "application/json")
		refused(t, "POST fixture "+site, resp, body, "origin_not_allowed")
		resp, body = send(t, srv, "POST", chatPath, "", chatBody("mock-echo", ""), "Sec-Fetch-Site", site, "Content-Type", "application/json")
		refused(t, "chat "+site, resp, body, "origin_not_allowed")
		// A foreign origin's own request, cross-site as it is, stays refused.
		resp, body = send(t, srv, "GET", "/v1/models", "", "", "Sec-Fetch-Site", site, "Origin", "https://evil.example")
		refused(t, "foreign origin "+site, resp, body, "origin_not_allowed")
	}
	if !echoed(t, srv) {
		t.Error("a cross-site fixture answers the developer's calls")
	}
	if resp, _ := send(t, srv, "GET", "/health", "", "", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != 200 {
		t.Errorf("/health cross-site: %d", resp.StatusCode)
	}
	for _, site := range []string{"same-origin", "same-site", "none", ""} {
		for _, path := range []string{"/_mock/journal", "/", "/console/app.js", "/v1/models"} {
			if resp, body := send(t, srv, "GET", path, "", "", "Sec-Fetch-Site", site); resp.StatusCode != 200 {
				t.Errorf("GET %s with Sec-Fetch-Site %q: %d %s", path, site, resp.StatusCode, body)
			}
		}
	}
	if resp, body := send(t, srv, "POST", "/_mock/fixtures", "", `{"fixtures":[{"name":"mine","match":{"last_user":{"contains":"mine"}},"reply":{"content":"ok"}}]}`,
		"Sec-Fetch-Site", "same-origin", "Origin", srv.URL, "Content-Type", "application/json", HeaderScope, "console"); resp.StatusCode != 200 {
		t.Errorf("the console's own write: %d %s", resp.StatusCode, body)
	}
	// The app of --cors-origins: its preflight and its call are cross-site, and granted.
	resp, body := send(t, srv, "OPTIONS", chatPath, "", "", "Sec-Fetch-Site", "cross-site", "Origin", app, "Access-Control-Request-Method", "POST")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("--cors-origins preflight, cross-site: %d %s", resp.StatusCode, body)
	}
	resp, body = send(t, srv, "POST", chatPath, "", chatBody("mock-echo", ""), "Sec-Fetch-Site", "cross-site", "Origin", app, "Content-Type", "application/json")
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("--cors-origins call, cross-site: %d %s", resp.StatusCode, body)
	}
}

// TestEveryAnswerIsNosniff: no answer may be read by a browser as something else than its
// Content-Type says (a JSON body as a script or a style sheet): every one carries
// X-Content-Type-Options: nosniff — successes, errors, refusals, streams, 404s, preflights,
// the console and its assets, /metrics, /health.
func TestEveryAnswerIsNosniff(t *testing.T) {
	const app = "http://localhost:5173"
	_, srv := browserServer(t, func(d *Deps) {
		d.Config.CORSOrigins = []string{app}
		d.Config.APIKey = "sk-local"
	})
	auth := []string{"Authorization", "Bearer sk-local", "Content-Type", "application/json"}
	for _, c := range []struct {
		name, method, path, host, body string
		header                         []string
	}{
		{name: "chat", method: "POST", path: chatPath, body: chatBody("mock-echo", ""), header: auth},
		{name: "stream", method: "POST", path: chatPath, body: chatBody("mock-echo", `"stream":true`), header: auth},
		{name: "messages stream", method: "POST", path: messagesPath, body: `{"model":"mock-echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			header: append([]string{"Anthropic-Version", "2023-06-01"}, auth...)},
		{name: "no key", method: "POST", path: chatPath, body: chatBody("mock-echo", "")},
		{name: "bad request", method: "POST", path: chatPath, body: "{", header: auth},
		{name: "unknown path", method: "GET", path: "/nope"},
		{name: "unknown model", method: "GET", path: "/v1/models/nope", header: auth},
		{name: "wrong method", method: "DELETE", path: "/health"},
		{name: "health", method: "GET", path: "/health"},
		{name: "metrics", method: "GET", path: "/metrics"},
		{name: "console", method: "GET", path: "/"},
		{name: "console asset", method: "GET", path: "/console/app.js"},
		{name: "unknown asset", method: "GET", path: "/console/nope.js"},
		{name: "journal", method: "GET", path: "/_mock/journal"},
		{name: "traces", method: "GET", path: "/debug/traces"},
		{name: "openapi", method: "GET", path: "/openapi.json"},
		{name: "rebound host", method: "GET", path: "/_mock/journal", host: "attacker.example"},
		{name: "foreign origin", method: "GET", path: "/_mock/journal", header: []string{"Origin", "https://evil.example"}},
		{name: "cross-site", method: "GET", path: "/_mock/journal", header: []string{"Sec-Fetch-Site", "cross-site"}},
		{name: "preflight", method: "OPTIONS", path: chatPath, header: []string{"Origin", app, "Access-Control-Request-Method", "POST"}},
	} {
		resp, body := send(t, srv, c.method, c.path, c.host, c.body, c.header...)
		if (c.name == "stream" || c.name == "messages stream") && (resp.StatusCode != 200 || !strings.Contains(body, "data: ")) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
		if got := resp.Header.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
			t.Errorf("%s (%d): X-Content-Type-Options %q, want nosniff once", c.name, resp.StatusCode, got)
		}
	}
}
