package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, roots, floor uint64
		want               int
	}{
		{0, 0, 32 * mib, 800},             // capped by the runtime's heap minimum: target 32 MiB
		{1 * mib, 1 * mib, 32 * mib, 825}, // target max(1+2×8.25, 4×8.25) = 33 MiB
		{4 * mib, 1 * mib, 32 * mib, 640}, // target 4 + 5×6.4 = 36 MiB
		{16 * mib, 0, 32 * mib, 200},      // target 48 MiB
		{32 * mib, 1 * mib, 32 * mib, 100},
		{300 * mib, 2 * mib, 32 * mib, 100}, // thousands of open streams: the floor adds nothing
	} {
		if got := percentFor(c.live, c.roots, c.floor); got != c.want {
			t.Errorf("percentFor(%d, %d, %d) = %d, want %d", c.live, c.roots, c.floor, got, c.want)
		}
	}
}

func read(names ...string) []uint64 {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	out := make([]uint64, len(s))
	for i := range s {
		out[i] = s[i].Value.Uint64()
	}
	return out
}

func gogc() uint64 { return read("/gc/gogc:percent")[0] }

// waitFor collects until ok holds (the tuner runs after each collection).
func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			v := read("/gc/gogc:percent", "/gc/heap/live:bytes", "/gc/heap/goal:bytes")
			t.Fatalf("want %s; GOGC %d, live heap %d, heap goal %d", what, v[0], v[1], v[2])
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

var sink []byte

// TestStartFollowsCollections: the heap goal follows the live heap collection after collection —
// about live + floor while the live heap is small (never hundreds of MB, whatever the runtime's
// own minimum does with a large GOGC), twice the live heap once it is above the floor — and
// GOGC is given back by the last stop only.
func TestStartFollowsCollections(t *testing.T) {
	const floor = 32 << 20
	before := gogc()
	stop := Start(floor)
	stop2 := Start(floor) // a second service in the same process
	defer stop()
	goalNear := func(lo, hi float64) func() bool {
		return func() bool {
			v := read("/gc/heap/live:bytes", "/gc/heap/goal:bytes")
			live, goal := float64(v[0]), float64(v[1])
			return gogc() > 100 && goal >= lo*(live+floor) && goal <= hi*(live+floor)
		}
	}
	waitFor(t, goalNear(0.9, 1.3), "a heap goal near live + floor with a small live heap")
	sink = make([]byte, 96<<20) // live heap well above the floor
	for i := range sink {
		sink[i] = byte(i)
	}
	waitFor(t, func() bool { return gogc() == 100 }, "GOGC 100 with the live heap above the floor")
	sink = nil
	waitFor(t, goalNear(0.9, 1.3), "the floor again once the heap is freed")

	stop2()
	if gogc() <= 100 { // the live heap is small: a running tuner keeps GOGC above 100
		t.Fatal("the first of two stops gave GOGC back while a service still ran")
	}
	stop()
	stop() // a second call of the same stop changes nothing
	if got := gogc(); got != before {
		t.Fatalf("after the last stop GOGC = %d, want %d", got, before)
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
