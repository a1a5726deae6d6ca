package testutil

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// HoldStreams is the open-stream benchmarks' measurement (mockgateway's in internal/server,
// the bare handler's in cmd/baseline): k streams opened at addr, each over a raw connection that
// sends request and reads to its first frame's end ("}\n\n") a byte at a time, so that no
// buffered reader is left behind; then, with every stream in its pause, the heap and goroutine
// stacks in use per stream (heap-B/stream, stack-B/stream: runtime.MemStats after collections;
// the client side counts too). The request must make the stream pause after its first frame.
//
// Run with -memprofilerate 1 and -v, it also reports the heap the streams added by the
// allocations themselves (profiled-heap-B/stream: HeapInuse counts whole spans, and moves by a
// few KB from run to run) and logs it by allocating function (HeapBySite).
func HoldStreams(b *testing.B, addr string, request []byte, k int) {
	b.Helper()
	var heap, stack float64
	profile := testing.Verbose() && runtime.MemProfileRate == 1
	for i := 0; b.Loop(); i++ {
		before := MemStats()
		var sitesBefore map[string]int64
		if profile && i == 0 {
			sitesBefore = HeapBySite()
		}
		conns := make([]net.Conn, 0, k)
		for range k {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
			if _, err := c.Write(request); err != nil {
				b.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			var one [1]byte
			for tail := ""; !strings.HasSuffix(tail, "}\n\n"); tail = tail[max(0, len(tail)-3):] + string(one[:]) {
				if _, err := c.Read(one[:]); err != nil {
					b.Fatal(err)
				}
			}
		}
		time.Sleep(50 * time.Millisecond) // every stream in its pause
		after := MemStats()
		heap = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(k)
		stack = float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(k)
		if sitesBefore != nil {
			sites, total := HeapAdded(sitesBefore, HeapBySite(), k)
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

// MemStats reads the memory statistics after two collections (the first may leave
// finalizers' memory behind): what the memory tests compare before and after they open streams.
func MemStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
