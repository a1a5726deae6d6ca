package server

import (
	"net/http"
	"net/netip"
	"strings"

	"golang.org/x/net/http/httpguts"

	"mockgateway/internal/apierr"
	"mockgateway/internal/config"
)

// frontGuard holds the checks every request meets before it is routed.
//
// Framing: a request with both Content-Length and Transfer-Encoding may be an attempt at
// request smuggling, and RFC 9112 §6.1 says to close the connection after answering it.
// net/http reads such a body as chunked and deletes both headers before any handler runs, so
// what is left to see is the chunked body (r.TransferEncoding): every request sent chunked is
// answered and its connection closed. That also closes the connection of a chunked body without
// Content-Length, which SDKs do not send (they send Content-Length), at the cost of a new
// connection; telling the two apart would take parsing the connection's bytes a second time,
// ahead of net/http — a second HTTP parser, the very surface smuggling lives on.
//
// Browsers: web pages are kept from steering or reading the mock (docs/console.md, "What a
// browser can and cannot do"). SDKs and CLIs send no Origin; a browser always sends one on a cross-origin
// request and on any same-origin request but a GET or HEAD. So:
//
//   - a Host that is a DNS name but neither a loopback name nor one of --allowed-hosts is 403
//     host_not_allowed, whatever address the mock listens on: a page whose name was rebound to
//     the mock's address is same-origin with itself, so only its Host gives it away (DNS
//     rebinding) — on a loopback listener, and as much on 0.0.0.0 in a container whose port is
//     published on the laptop's 127.0.0.1. IP literals pass: a page cannot be served from an
//     address that reaches the mock, and they are what probes, Prometheus and pod IPs send.
//     403 rather than 421 Misdirected Request: the request reached the right server, which
//     refuses it, and a 421 invites a client to retry it on another connection.
//   - a request whose Origin is neither the mock's own (scheme://Host of the request itself) nor
//     one of --cors-origins is 403 origin_not_allowed, reads included: a page on another origin
//     may neither add a fixture with a no-cors POST nor read anything through a CORS mistake.
//     An origin of --cors-origins gets CORS answers, its preflight included.
//   - Sec-Fetch-Site: cross-site without an origin of --cors-origins is 403 origin_not_allowed
//     too: a no-cors GET, an <img> or a <script src> from another site carries no Origin, and
//     must not load the journal or the traces where the page can reach them.
//
// Every answer carries X-Content-Type-Options: nosniff (the chain's statusWriter sets it), so
// that a browser takes no JSON body for a script or a style sheet. /health answers everyone: it
// tells nothing and probes must reach it. The guard runs inside the middleware chain, so a
// refusal is traced, counted, logged and carries x-request-id like any answer; the Origin, Host
// and Sec-Fetch-Site values themselves reach no output.
type frontGuard struct {
	origins map[string]bool // --cors-origins, as a browser serializes them (lower case)
	hosts   []string        // --allowed-hosts, lower case; ".example.com" takes it and its subdomains
	// claim gives r's Record the route that would serve it with method, and that route's dialect
	// (dispatch.claim).
	claim func(r *http.Request, method string)
	next  http.Handler
}

func newFrontGuard(cfg config.Config, d *dispatch) *frontGuard {
	g := &frontGuard{origins: map[string]bool{}, claim: d.claim, next: d}
	for _, o := range cfg.CORSOrigins {
		g.origins[strings.ToLower(o)] = true
	}
	for _, h := range cfg.AllowedHosts {
		if h = strings.ToLower(strings.Trim(h, "[]")); h != "" {
			g.hosts = append(g.hosts, h)
		}
	}
	return g
}

var (
	errOriginNotAllowed = apierr.New(apierr.OriginNotAllowed, "", "This mock answers web pages only on its own origin and on the origins given with --cors-origins: "+
		"another page may neither read nor steer it. SDKs and command-line clients send no Origin header and are not affected (docs/console.md).")
	errCrossSite = apierr.New(apierr.OriginNotAllowed, "", "This mock answers no request a browser marks Sec-Fetch-Site: cross-site (a page on another site "+
		"loading it with a no-cors fetch, an image or a script), but those of the origins given with --cors-origins. "+
		"SDKs and command-line clients do not send the header and are not affected (docs/console.md).")
	errHostNotAllowed = apierr.New(apierr.HostNotAllowed, "", "This mock answers IP addresses and only the host names localhost and *.localhost "+
		"and those given with --allowed-hosts, whatever address it listens on: any other name may be a web page rebound to this machine "+
		"(DNS rebinding; docs/console.md).")
)

func (g *frontGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.TransferEncoding) > 0 {
		w.Header().Set("Connection", "close")
	}
	if r.URL.Path == "/health" {
		g.next.ServeHTTP(w, r)
		return
	}
	if !g.hostAllowed(r.Host) {
		g.refuse(w, r, errHostNotAllowed)
		return
	}
	cross := crossSite(r.Header)
	origin, ok := r.Header["Origin"] // Header.Get, for a canonical key
	if !ok {
		if cross {
			g.refuse(w, r, errCrossSite)
			return
		}
		g.next.ServeHTTP(w, r) // every SDK and CLI
		return
	}
	switch {
	case len(origin) == 1 && !cross && sameOrigin(origin[0], r):
	case len(origin) == 1 && g.origins[origin[0]]:
		corsHeaders(w.Header(), origin[0])
		if m := r.Header.Get("Access-Control-Request-Method"); r.Method == http.MethodOptions && m != "" {
			g.preflight(w, r, m)
			return
		}
	default:
		g.refuse(w, r, errOriginNotAllowed)
		return
	}
	g.next.ServeHTTP(w, r)
}

// refuse answers a request the guard turns away, under the route it asked for (when one
// matches), so that its metrics and span name the route like any other answer's, and in that
// route's dialect.
func (g *frontGuard) refuse(w http.ResponseWriter, r *http.Request, err *apierr.Error) {
	g.claim(r, r.Method)
	writeError(w, r, err)
}

// corsMethods are every method a route answers; corsExposed the response headers a page may
// read (a browser shows it only the CORS-safelisted ones otherwise).
const (
	corsMethods = "GET, HEAD, POST, DELETE"
	corsExposed = "x-request-id, request-id, openai-processing-ms, openai-version, retry-after, retry-after-ms, " +
		"x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, " +
		"x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens, " +
		"x-mock-gateway-attempts, x-mock-gateway-served-by, x-mock-gateway-fallback-from, x-should-retry, " +
		"anthropic-ratelimit-requests-limit, anthropic-ratelimit-requests-remaining, anthropic-ratelimit-requests-reset, " +
		"anthropic-ratelimit-tokens-limit, anthropic-ratelimit-tokens-remaining, anthropic-ratelimit-tokens-reset, " +
		"anthropic-ratelimit-input-tokens-limit, anthropic-ratelimit-input-tokens-remaining, anthropic-ratelimit-input-tokens-reset, " +
		"anthropic-ratelimit-output-tokens-limit, anthropic-ratelimit-output-tokens-remaining, anthropic-ratelimit-output-tokens-reset"
)

// corsHeaders are the headers every answer to an allowed origin carries. The origin is one of
// --cors-origins, so what is sent back is the operator's value, not the client's.
func corsHeaders(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", corsExposed)
}

// preflight answers an allowed origin's CORS preflight: 204 with the methods every route takes
// and the headers it asked for — an origin the operator listed is trusted, and what the SDKs
// send (authorization, content-type, x-stainless-*, x-mock-*, traceparent, ...) varies by
// client and version. Only header names (tokens) are echoed, at most a bounded list.
func (g *frontGuard) preflight(w http.ResponseWriter, r *http.Request, method string) {
	g.claim(r, method)
	h := w.Header()
	h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", corsMethods)
	if names := requestedHeaders(r.Header.Values("Access-Control-Request-Headers")); names != "" {
		h.Set("Access-Control-Allow-Headers", names)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// maxPreflightHeaders bounds the header names a preflight is granted: browsers ask for what
// the page sets, SDKs set about a dozen.
const maxPreflightHeaders = 64

// requestedHeaders is the comma-separated list of the header names asked for, lower case,
// each a valid token; anything else is left out.
func requestedHeaders(values []string) string {
	var b strings.Builder
	n := 0
	for _, v := range values {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if !httpguts.ValidHeaderFieldName(name) || len(name) > 128 || n == maxPreflightHeaders {
				continue
			}
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString(name)
			n++
		}
	}
	return b.String()
}

// sameOrigin reports whether origin is the request's own: its scheme and Host, a default
// port written or not (browsers leave it out of both).
func sameOrigin(origin string, r *http.Request) bool {
	scheme, port := "http://", ":80"
	if r.TLS != nil {
		scheme, port = "https://", ":443"
	}
	rest, ok := strings.CutPrefix(origin, scheme)
	if !ok {
		return false
	}
	return strings.EqualFold(strings.TrimSuffix(rest, port), strings.TrimSuffix(r.Host, port))
}

// crossSite reports whether a browser marked the request as coming from a page on another
// site. Only browsers send Sec-Fetch-Site; same-origin, same-site and none (a URL typed in the
// address bar) are not cross-site.
func crossSite(h http.Header) bool {
	v := h["Sec-Fetch-Site"] // Header.Get, for a canonical key
	return len(v) > 0 && strings.EqualFold(v[0], "cross-site")
}

// hostAllowed reports whether a Host header is an IP literal, a loopback name or one of
// --allowed-hosts, with any port. No Host at all (HTTP/1.0) is no browser's: a browser always
// sends one. A name may end in the root's dot (mockgateway. is mockgateway); an address may
// not, as it is then a name a resolver could rebind.
func (g *frontGuard) hostAllowed(host string) bool {
	if host == "" {
		return true
	}
	name := hostName(host)
	if ipLiteral(name) {
		return true
	}
	name = strings.TrimSuffix(name, ".")
	if localhostName(name) {
		return true
	}
	for _, a := range g.hosts {
		if strings.EqualFold(name, a) {
			return true
		}
		if a[0] == '.' && (strings.EqualFold(name, a[1:]) || len(name) > len(a) && strings.EqualFold(name[len(name)-len(a):], a)) {
			return true
		}
	}
	return false
}

// hostName is the name of a Host header without its port and an IPv6 literal's brackets.
func hostName(host string) string {
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i > 0 {
			return host[1:i]
		}
		return host
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.IndexByte(host, ':') == i {
		return host[:i]
	}
	return host
}

// localhostName reports whether a host name (without the root's trailing dot) is localhost or
// one of its subdomains, which RFC 6761 keeps off DNS: they can only mean this machine.
func localhostName(name string) bool {
	return strings.EqualFold(name, "localhost") || len(name) > len(".localhost") && strings.EqualFold(name[len(name)-len(".localhost"):], ".localhost")
}

// ipLiteral reports whether a host name is an IPv4 or IPv6 address. A DNS name a page could
// rebind is never one.
func ipLiteral(name string) bool {
	// Only what can be an address is parsed: a failed parse allocates its error, and every
	// request under a DNS name (a service name, --allowed-hosts) would pay for it.
	v4 := name != "" && name[len(name)-1] != '.' && strings.Trim(name, "0123456789.") == ""
	v6 := strings.IndexByte(name, ':') >= 0 && strings.Trim(name, "0123456789abcdefABCDEF:.") == ""
	if !v4 && !v6 {
		return false
	}
	_, err := netip.ParseAddr(name)
	return err == nil
}
