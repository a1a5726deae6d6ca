package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// pwn is what a hostile page would add: an unscoped fixture that answers every call of the
// developer's own tests.
const pwn = `{"fixtures":[{"name":"pwn","priority":9223372036854775807,"match":{},"reply":{"content":"pwned"}}]}`

// browserServer is the service on a real loopback listener with the default configuration, as
// `go run ./cmd/mockgateway` starts it (testConfig's extra Host taken away).
func browserServer(t *testing.T, opts ...func(*Deps)) (*harness, *httptest.Server) {
	t.Helper()
	h := newHarness(t, append([]func(*Deps){journaled, func(d *Deps) { d.Config.AllowedHosts = nil }}, opts...)...)
	srv := httptest.NewServer(h.handler)
	t.Cleanup(srv.Close)
	return h, srv
}

// send makes one request; host, when set, is the Host header (a rebound name).
func send(t *testing.T, srv *httptest.Server, method, path, host, body string, header ...string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// refused checks a 403 with the code in the contract's envelope, x-request-id, and no CORS
// grant.
func refused(t *testing.T, what string, resp *http.Response, body, code string) {
	t.Helper()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("%s: %d %s, want 403 %s", what, resp.StatusCode, body, code)
		return
	}
	if e := decodeError(t, []byte(body)); e.Code != code || e.Type != "invalid_request_error" {
		t.Errorf("%s: %s", what, body)
	}
	if resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("%s: headers %v", what, resp.Header)
	}
}

// rawStatus is the status of GET /v1/models with host as written: Go's client drops an IPv6
// zone from the Host it sends, so the request is written by hand.
func rawStatus(t *testing.T, srv *httptest.Server, host string) int {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET /v1/models HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// echoed reports whether a chat call answers as the mock's own generator does, not as a
// page's fixture.
func echoed(t *testing.T, srv *httptest.Server) bool {
	t.Helper()
	resp, body := send(t, srv, "POST", chatPath, "", chatBody("mock-echo", ""), "Content-Type", "application/json")
	return resp.StatusCode == 200 && strings.Contains(body, `"content":"echo: `) && !strings.Contains(body, "pwned")
}

// TestForeignOriginCannotSteerOrRead: a page on another origin sends what a browser sends
// without a preflight — a no-cors POST of a fixture, with or without a JSON type — and reads
// every route through a CORS mistake: each is 403 origin_not_allowed, the fixture is not
// added, and the developer's own calls still get the generator's answer. Origin null (a
// sandboxed frame, a file: page) is foreign too. /health answers everyone.
func TestForeignOriginCannotSteerOrRead(t *testing.T) {
	h, srv := browserServer(t)
	for _, origin := range []string{"https://evil.example", "null", "http://127.0.0.1", "http://localhost" + strings.TrimPrefix(srv.URL, "http://127.0.0.1")} {
		for _, ct := range []string{"", "text/plain", "application/json"} {
			resp, body := send(t, srv, "POST", "/_mock/fixtures", "", pwn, "Origin", origin, "Content-Type", ct)
			refused(t, "POST fixture from "+origin+" as "+ct, resp, body, "origin_not_allowed")
		}
		resp, body := send(t, srv, "DELETE", "/_mock/scopes/s", "", "", "Origin", origin)
		refused(t, "DELETE scope from "+origin, resp, body, "origin_not_allowed")
		for _, path := range []string{"/v1/models", "/_mock/journal", "/_mock/fixtures", "/debug/traces", "/metrics", "/openapi.json", "/", "/console/app.js", "/nope"} {
			resp, body := send(t, srv, "GET", path, "", "", "Origin", origin)
			refused(t, "GET "+path+" from "+origin, resp, body, "origin_not_allowed")
		}
		resp, body = send(t, srv, "POST", chatPath, "", chatBody("mock-echo", ""), "Origin", origin, "Content-Type", "application/json")
		refused(t, "chat from "+origin, resp, body, "origin_not_allowed")
		resp, body = send(t, srv, "OPTIONS", chatPath, "", "", "Origin", origin, "Access-Control-Request-Method", "POST")
		refused(t, "preflight from "+origin, resp, body, "origin_not_allowed")
	}
	if !echoed(t, srv) {
		t.Error("a page's fixture answers the developer's calls")
	}
	if resp, _ := send(t, srv, "GET", "/health", "", "", "Origin", "https://evil.example"); resp.StatusCode != 200 {
		t.Errorf("/health from a page: %d", resp.StatusCode)
	}
	// Refusals are traced, measured and logged like any answer, under their route.
	if n := metricValue(t, h.metrics, "mockgateway_http_requests_total", map[string]string{"route": "/_mock/fixtures", "status_code": "403", "error_code": "origin_not_allowed"}); n == 0 {
		t.Errorf("no refused POST /_mock/fixtures in the metrics:\n%s", openMetricsText(t, h.metrics))
	}
	var logged bool
	for _, m := range h.logs.records(t) {
		logged = logged || m["error_code"] == "origin_not_allowed" && m["route"] == "/v1/models"
	}
	if !logged {
		t.Error("no access line for a refused read")
	}
}

// TestOwnOriginIsServed: the console's own same-origin writes carry Origin; they work, and so
// do calls with no Origin at all (every SDK).
func TestOwnOriginIsServed(t *testing.T) {
	_, srv := browserServer(t)
	own := srv.URL
	resp, body := send(t, srv, "POST", "/_mock/fixtures", "", `{"fixtures":[{"name":"mine","match":{"last_user":{"contains":"mine"}},"reply":{"content":"ok"}}]}`,
		"Origin", own, "Content-Type", "application/json", HeaderScope, "console")
	if resp.StatusCode != 200 {
		t.Fatalf("own origin POST: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("a same-origin answer needs no CORS grant")
	}
	for _, r := range []struct{ method, path string }{{"DELETE", "/_mock/scopes/console"}, {"GET", "/_mock/journal"}, {"GET", "/v1/models"}, {"GET", "/"}} {
		if resp, body := send(t, srv, r.method, r.path, "", "", "Origin", own); resp.StatusCode != 200 {
			t.Errorf("own origin %s %s: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
	// localhost is a loopback name: the console opened at http://localhost:PORT is its own origin.
	local := "localhost" + strings.TrimPrefix(own, "http://127.0.0.1")
	if resp, body := send(t, srv, "DELETE", "/_mock/scopes/console", local, "", "Origin", "http://"+local); resp.StatusCode != 200 {
		t.Errorf("own origin on localhost: %d %s", resp.StatusCode, body)
	}
	if !echoed(t, srv) {
		t.Error("a call without Origin is not served")
	}
}

// TestRebindingHostIsRefused: a page whose name was rebound to 127.0.0.1 is same-origin with
// itself; its Host gives it away, and it reads nothing — the journal, the traces, the models —
// and adds no fixture. Loopback names and IP literals keep working, with any port.
func TestRebindingHostIsRefused(t *testing.T) {
	_, srv := browserServer(t)
	for _, host := range []string{"rebind.evil.example:8080", "rebind.evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "0x7f000001:8080", "127.0.0.1.nip.io", "127.0.0.1."} {
		for _, path := range []string{"/_mock/journal", "/debug/traces", "/v1/models", "/_mock/fixtures", "/"} {
			resp, body := send(t, srv, "GET", path, host, "")
			refused(t, "GET "+path+" as "+host, resp, body, "host_not_allowed")
		}
		resp, body := send(t, srv, "POST", "/_mock/fixtures", host, pwn, "Origin", "http://"+host, "Content-Type", "application/json")
		refused(t, "POST fixture as "+host, resp, body, "host_not_allowed")
	}
	if !echoed(t, srv) {
		t.Error("a rebinding page's fixture answers the developer's calls")
	}
	if resp, _ := send(t, srv, "GET", "/health", "rebind.evil.example", ""); resp.StatusCode != 200 {
		t.Errorf("/health as a rebound name: %d", resp.StatusCode)
	}
	for _, host := range []string{"localhost", "localhost:8080", "LocalHost:1", "app.localhost:3000", "localhost.", "127.0.0.1", "127.1.2.3:80", "[::1]", "[::1]:8080", "0.0.0.0:8080", "[::2]:8080"} {
		if resp, body := send(t, srv, "GET", "/v1/models", host, ""); resp.StatusCode != 200 {
			t.Errorf("loopback name or IP literal %s: %d %s", host, resp.StatusCode, body)
		}
	}
	// A zoned IPv6 literal names an interface of the machine it is written on, not an address
	// the mock answers at.
	for _, host := range []string{"[fe80::1%25eth0]", "[fe80::1%25eth0]:8080", "[fe80::1%eth0]"} {
		if code := rawStatus(t, srv, host); code != http.StatusForbidden {
			t.Errorf("zoned IPv6 literal %s: %d, want 403", host, code)
		}
	}
	// HTTP/1.0 without a Host is no browser's.
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET /v1/models HTTP/1.0\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("HTTP/1.0 without Host: %v %v", resp, err)
	}
	// --allowed-hosts adds names, and .domain its subdomains.
	_, allowed := browserServer(t, func(d *Deps) { d.Config.AllowedHosts = []string{"mock.test", ".corp.test", "[fd00::1]"} })
	for host, want := range map[string]int{"mock.test:8080": 200, "MOCK.test": 200, "a.corp.test": 200, "corp.test": 200, "xcorp.test": 403, "mock.test.evil": 403, "[fd00::1]:1": 200, "localhost": 200, "mock.test.": 200, "a.corp.test.:80": 200, "mock.test..": 403} {
		if resp, body := send(t, allowed, "GET", "/v1/models", host, ""); resp.StatusCode != want {
			t.Errorf("--allowed-hosts, Host %s: %d %s, want %d", host, resp.StatusCode, body, want)
		}
	}
}

// TestHostOnEveryListener: whatever address the mock listens on — every interface, as in a
// container or a pod, or one address — a page whose name was rebound to it is refused: it adds
// no fixture and reads nothing. IP literals (probes, Prometheus, pod IPs) pass, as do the
// loopback names and the names of --allowed-hosts (a compose service, a Kubernetes Service).
func TestHostOnEveryListener(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "10.1.2.3:8080", "127.0.0.1:8080"} {
		for _, allowed := range [][]string{nil, {"mockgateway"}} {
			what := "--addr " + addr + " --allowed-hosts " + strings.Join(allowed, ",")
			_, srv := browserServer(t, func(d *Deps) { d.Config.Addr = addr; d.Config.AllowedHosts = allowed })
			for _, host := range []string{"attacker.example:8080", "attacker.example", "mockgateway.attacker.example", "10.1.2.3.nip.io:8080", "1.evil.example", "127.0.0.1.nip.io", "127.0.0.1.", "10.1.2.3.:8080"} {
				resp, body := send(t, srv, "POST", "/_mock/fixtures", host, pwn, "Origin", "http://"+host, "Content-Type", "application/json")
				refused(t, what+": POST fixture as "+host, resp, body, "host_not_allowed")
				for _, path := range []string{"/_mock/journal", "/debug/traces", "/v1/models"} {
					resp, body := send(t, srv, "GET", path, host, "", "Origin", "http://"+host)
					refused(t, what+": GET "+path+" as "+host, resp, body, "host_not_allowed")
				}
			}
			if !echoed(t, srv) {
				t.Errorf("%s: a rebinding page's fixture answers the developer's calls", what)
			}
			for _, host := range []string{"10.1.2.3:8080", "10.1.2.3", "192.168.1.20:80", "0.0.0.0:8080", "[fd00::1]:8080", "[fd00::1]", "[::]:8080", "127.0.0.1:8080", "[::1]:8080", "localhost:8080", "app.localhost"} {
				if resp, body := send(t, srv, "GET", "/_mock/journal", host, ""); resp.StatusCode != 200 {
					t.Errorf("%s: Host %s: %d %s", what, host, resp.StatusCode, body)
				}
			}
			// The console opened at a pod's IP is its own origin there.
			if resp, body := send(t, srv, "DELETE", "/_mock/scopes/console", "10.1.2.3:8080", "", "Origin", "http://10.1.2.3:8080"); resp.StatusCode != 200 {
				t.Errorf("%s: own origin on an IP literal: %d %s", what, resp.StatusCode, body)
			}
			want := 403
			if allowed != nil {
				want = 200
			}
			// A name written with the root's trailing dot is the same name.
			for _, host := range []string{"mockgateway:8080", "MockGateway", "mockgateway.", "mockgateway.:8080"} {
				if resp, body := send(t, srv, "GET", "/v1/models", host, ""); resp.StatusCode != want {
					t.Errorf("%s: Host %s: %d %s, want %d", what, host, resp.StatusCode, body, want)
				}
			}
			// Origin is checked on any listener.
			resp, body := send(t, srv, "POST", "/_mock/fixtures", "10.1.2.3:8080", pwn, "Origin", "https://evil.example")
			refused(t, what+": foreign origin", resp, body, "origin_not_allowed")
		}
	}
}

// TestCORSOrigins: an origin given with --cors-origins — a browser app that calls the mock on
// purpose — gets its preflight granted, with every header the SDKs send, and CORS answers that
// let it read the body and the headers it needs; another origin is still refused.
func TestCORSOrigins(t *testing.T) {
	const app = "http://localhost:5173"
	_, srv := browserServer(t, func(d *Deps) { d.Config.CORSOrigins = []string{"https://other.test", app} })
	asked := "authorization, content-type, x-stainless-os, x-stainless-retry-count, x-mock-scope, x-mock-fault, traceparent"
	resp, body := send(t, srv, "OPTIONS", chatPath, "", "", "Origin", app, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", asked)
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != app || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
		h.Get("Access-Control-Allow-Headers") != asked || !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") || h.Get("X-Request-Id") == "" {
		t.Errorf("preflight: %d %s %v", resp.StatusCode, body, h)
	}
	resp, body = send(t, srv, "OPTIONS", "/_mock/scopes/s", "", "", "Origin", app, "Access-Control-Request-Method", "DELETE")
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "DELETE") {
		t.Errorf("DELETE preflight: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = send(t, srv, "POST", chatPath, "", chatBody("mock-echo", ""), "Origin", app, "Content-Type", "application/json", "Authorization", "Bearer dummy")
	h = resp.Header
	if resp.StatusCode != 200 || h.Get("Access-Control-Allow-Origin") != app || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "x-request-id") ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "request-id,") || h.Get("Vary") != "Origin" || !strings.Contains(body, "echo: ") {
		t.Errorf("actual request: %d %s %v", resp.StatusCode, body, h)
	}
	// An error answer carries the grant too, so that the page can read the envelope.
	resp, body = send(t, srv, "GET", "/v1/models/nope", "", "", "Origin", app)
	if resp.StatusCode != 404 || resp.Header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("error for an allowed origin: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	// OPTIONS that is no preflight is the router's 405, granted.
	if resp, _ := send(t, srv, "OPTIONS", chatPath, "", "", "Origin", app); resp.StatusCode != 405 || resp.Header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf("OPTIONS without Access-Control-Request-Method: %d %v", resp.StatusCode, resp.Header)
	}
	for _, o := range []string{"http://localhost:5174", "http://localhost:5173/", "https://localhost:5173", "http://evil.localhost:5173"} {
		resp, body := send(t, srv, "OPTIONS", chatPath, "", "", "Origin", o, "Access-Control-Request-Method", "POST")
		refused(t, "preflight from "+o, resp, body, "origin_not_allowed")
	}
	// Host is still checked for an allowed origin.
	resp, body = send(t, srv, "GET", "/v1/models", "rebind.evil.example", "", "Origin", app)
	refused(t, "allowed origin, rebound Host", resp, body, "host_not_allowed")
}

// TestRequestedHeaders: a preflight is granted header names only, lower case, bounded.
func TestRequestedHeaders(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization, Content-Type":       "authorization, content-type",
		" x-a ,, x-b":                       "x-a, x-b",
		"x-a, bad header, x\"q, x-b":        "x-a, x-b",
		strings.Repeat("x-h,", 100) + "x-z": strings.TrimSuffix(strings.Repeat("x-h, ", maxPreflightHeaders), ", "),
	} {
		if got := requestedHeaders([]string{in}); got != want {
			t.Errorf("requestedHeaders(%q) = %q, want %q", in, got, want)
		}
	}
}
