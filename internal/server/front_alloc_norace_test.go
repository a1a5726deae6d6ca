//go:build !race

package server

import (
	"net/http/httptest"
	"testing"
)

// Not built with -race: the race detector's instrumentation changes what escapes to the heap.

// TestFrontGuardAllocatesNothing: the checks every request meets cost no allocation, whatever
// the Host — a failed parse of a name as an address would allocate its error.
func TestFrontGuardAllocatesNothing(t *testing.T) {
	g := &frontGuard{restrict: true, hosts: []string{"mockgateway", ".corp.test"}}
	r := httptest.NewRequest("POST", chatPath, nil)
	for _, host := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "mockgateway:8080", "a.corp.test", "rebind.evil.example"} {
		r.Host = host
		r.Header.Set("Origin", "http://"+host)
		if n := testing.AllocsPerRun(100, func() { g.hostAllowed(r.Host); sameOrigin(r.Header["Origin"][0], r) }); n != 0 {
			t.Errorf("Host %s: %v allocations", host, n)
		}
	}
}
