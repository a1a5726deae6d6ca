package server

import (
	"net"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/testutil"
)

// BenchmarkHeldStreams is what an open stream holds in mockgateway, measured as
// cmd/baseline's BenchmarkHeldStreams measures a bare net/http handler: 500 streams of the load
// test's request (mock-echo, X-Mock-Latency: ttfc=0s;between=10m, the longest pause the header
// takes) held by the full chain with every signal on, each reached over a raw connection that
// has read its first frame, then the heap and goroutine stacks in use per stream (the client
// side, a raw connection each, counts too). The difference from the baseline's figures is what mockgateway adds to net/http's own
// (docs/performance.md, "Where issue 16 stands").
//
// Run with -memprofilerate 1 and -v, it also reports the heap the streams added by the
// allocations themselves (profiled-heap-B/stream: HeapInuse counts whole spans, and moves by a
// few KB from run to run) and logs it by the function that allocated it:
// go test -run '^$' -bench HeldStreams -memprofilerate 1 -v ./internal/server
func BenchmarkHeldStreams(b *testing.B) {
	const k = 500
	h := benchChain(b, catalog.Builtin(), true)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	body := `{"model":"mock-echo","stream":true,"messages":[{"role":"user","content":"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"}]}`
	req := "POST " + chatPath + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Mock-Latency: ttfc=0s;between=10m\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	var heap, stack float64
	profile := testing.Verbose() && runtime.MemProfileRate == 1
	for i := 0; b.Loop(); i++ {
		before := memStats()
		var sitesBefore map[string]int64
		if profile && i == 0 {
			sitesBefore = testutil.HeapBySite()
		}
		conns := make([]net.Conn, 0, k)
		for range k {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
			if _, err := c.Write([]byte(req)); err != nil {
				b.Fatal(err)
			}
			// Read to the first frame's end a byte at a time: no buffered reader left behind.
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			var one [1]byte
			for tail := ""; !strings.HasSuffix(tail, "}\n\n"); tail = tail[max(0, len(tail)-3):] + string(one[:]) {
				if _, err := c.Read(one[:]); err != nil {
					b.Fatal(err)
				}
			}
		}
		time.Sleep(50 * time.Millisecond) // every stream in its pause
		after := memStats()
		heap = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / k
		stack = float64(int64(after.StackInuse)-int64(before.StackInuse)) / k
		if sitesBefore != nil {
			sites, total := testutil.HeapAdded(sitesBefore, testutil.HeapBySite(), k)
			for _, s := range sites {
				b.Logf("%6d B/stream  %s", s.Bytes, s.Site)
			}
			b.ReportMetric(float64(total), "profiled-heap-B/stream")
		}
		for _, c := range conns {
			_ = c.Close()
		}
	}
	b.ReportMetric(heap, "heap-B/stream")
	b.ReportMetric(stack, "stack-B/stream")
}
