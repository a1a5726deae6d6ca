package server

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"mockgateway/internal/catalog"
	"mockgateway/internal/testutil"
)

// BenchmarkHeldStreams is what an open stream holds in mockgateway, measured as
// cmd/baseline's BenchmarkHeldStreams measures a bare net/http handler (testutil.HoldStreams):
// 500 streams of the load test's request (mock-echo, X-Mock-Latency: ttfc=0s;between=10m, the
// longest pause the header takes) held by the full chain with every signal on. The difference
// from the baseline's figures is what mockgateway adds to net/http's own (docs/performance.md,
// "Where issue 16 stands"). With -memprofilerate 1 -v it logs the held heap by allocating
// function: go test -run '^$' -bench HeldStreams -memprofilerate 1 -v ./internal/server
func BenchmarkHeldStreams(b *testing.B) {
	h := benchChain(b, catalog.Builtin(), true)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	body := `{"model":"mock-echo","stream":true,"messages":[{"role":"user","content":"` + loadTestMessage + `"}]}`
	req := "POST " + chatPath + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Mock-Latency: ttfc=0s;between=10m\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	testutil.HoldStreams(b, srv.Listener.Addr().String(), []byte(req), 500)
}
