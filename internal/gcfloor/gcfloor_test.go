package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{0, 32 << 20, maxPercent},
		{1 << 10, 32 << 20, maxPercent},
		{4 << 20, 32 << 20, 800},   // target 36 MiB = live + floor
		{16 << 20, 32 << 20, 200},  // target 48 MiB
		{32 << 20, 32 << 20, 100},  // the default from here on
		{300 << 20, 32 << 20, 100}, // thousands of open streams: the floor adds nothing
	} {
		if got := percentFor(c.live, c.floor); got != c.want {
			t.Errorf("percentFor(%d, %d) = %d, want %d", c.live, c.floor, got, c.want)
		}
	}
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitGOGC collects until GOGC is want (the tuner runs after each collection).
func waitGOGC(t *testing.T, want func(uint64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !want(gogc()) {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d, want %s", gogc(), what)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

var sink []byte

// TestStartFollowsCollections: GOGC follows the live heap collection after collection — raised
// while it is below the floor, the default once it is above — and is given back when stopped.
func TestStartFollowsCollections(t *testing.T) {
	before := gogc()
	stop := Start(4 << 20)
	defer stop()
	waitGOGC(t, func(p uint64) bool { return p > 100 }, "above 100 with a small live heap")
	sink = make([]byte, 64<<20) // live heap well above the floor
	for i := range sink {
		sink[i] = byte(i)
	}
	waitGOGC(t, func(p uint64) bool { return p == 100 }, "100 with the live heap above the floor")
	sink = nil
	waitGOGC(t, func(p uint64) bool { return p > 100 }, "above 100 again once the heap is freed")

	stop()
	if got := gogc(); got != before {
		t.Fatalf("after stop GOGC = %d, want %d", got, before)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := gogc(); got != before {
		t.Fatalf("a collection after stop changed GOGC to %d", got)
	}
	if Start(0)(); gogc() != before {
		t.Fatal("a zero floor changed GOGC")
	}
}
