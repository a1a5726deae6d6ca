//go:build !race

package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"mockgateway/internal/config"
)

// Not built with -race: the race detector's instrumentation changes what escapes to the heap.

// TestFrontGuardAllocatesNothing: the checks every request meets cost no allocation, whatever
// the Host — a failed parse of a name as an address would allocate its error.
func TestFrontGuardAllocatesNothing(t *testing.T) {
	g := newFrontGuard(config.Config{AllowedHosts: []string{"mockgateway", ".corp.test"}}, &dispatch{})
	g.next = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	r := httptest.NewRequest("POST", chatPath, nil)
	w := httptest.NewRecorder()
	for _, host := range []string{"127.0.0.1:8080", "10.1.2.3:8080", "localhost:8080", "[::1]:8080", "[fd00::1]:8080", "mockgateway:8080", "a.corp.test", "cafe.corp.test", "rebind.evil.example", "1.evil.example", "mockgateway.:8080", "127.0.0.1.", "[fe80::1%25eth0]:8080"} {
		r.Host = host
		r.Header.Set("Origin", "http://"+host)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		if n := testing.AllocsPerRun(100, func() { g.hostAllowed(r.Host); sameOrigin(r.Header["Origin"][0], r) }); n != 0 {
			t.Errorf("Host %s: %v allocations", host, n)
		}
		if !g.hostAllowed(host) {
			continue
		}
		if n := testing.AllocsPerRun(100, func() { g.ServeHTTP(w, r) }); n != 0 {
			t.Errorf("Host %s, the whole guard: %v allocations", host, n)
		}
	}
}
