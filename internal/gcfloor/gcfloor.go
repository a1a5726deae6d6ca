// Package gcfloor owns the service's one garbage-collector setting: a floor under the heap
// target, so that a small live heap does not make the collector run all the time.
//
// The service's live heap is a few megabytes (the span buffer, connections, the catalog), and
// every request allocates a dozen kilobytes it drops at once. With GOGC's default the heap target
// is about twice the live heap, so under load the collector ran about eighty times a second and
// took a fifth of the CPU. A fixed floor (raising GOGC while the live heap is small) spaces the
// collections out; once the live heap is above the floor — thousands of open streams — GOGC is
// back at the default 100 and memory grows no faster than without the floor. The floor is
// virtual, unlike a ballast allocation: nothing is allocated for it.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapMinimum is the runtime's own floor under the heap target at GOGC=100; it scales with
// GOGC, so a large GOGC over a tiny heap would put the target far above live + floor.
const heapMinimum = 4 << 20

// GOGC is the process's, so the tuner is too: the first Start arms it, the last stop gives GOGC
// back. (Tests run several services in one process; each would otherwise restore the value the
// one before had set.)
var process struct {
	mu    sync.Mutex
	users int
	t     *tuner
}

// Start keeps the heap target near live heap + floor bytes, never below Go's own, by setting
// GOGC after every collection, until the returned stop is called; the last stop restores GOGC
// to what it was. A zero floor does nothing. While several are started, the first one's floor
// holds.
func Start(floor uint64) (stop func()) {
	if floor == 0 {
		return func() {}
	}
	process.mu.Lock()
	defer process.mu.Unlock()
	process.users++
	if process.users == 1 {
		process.t = &tuner{floor: floor, sample: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
		}}
		process.t.previous = debug.SetGCPercent(100)
		process.t.tune()
		process.t.arm()
	}
	return sync.OnceFunc(release)
}

func release() {
	process.mu.Lock()
	defer process.mu.Unlock()
	process.users--
	if process.users == 0 {
		process.t.stop()
		process.t = nil
	}
}

type tuner struct {
	floor    uint64
	previous int

	mu      sync.Mutex // tune runs in the cleanup goroutine; stop from anywhere
	stopped bool
	sample  []metrics.Sample
}

// sentinel is garbage as soon as it is made: its cleanup runs after the next collection, tunes,
// and arms a new one. (Larger than the tiny allocator's 16-byte blocks, which may never be
// collected on their own.)
type sentinel struct{ _ [32]byte }

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		if t.tune() {
			t.arm()
		}
	}, t)
}

// tune sets GOGC from what the last collection measured; it reports false once stopped.
func (t *tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	live := t.sample[0].Value.Uint64()
	roots := t.sample[1].Value.Uint64() + t.sample[2].Value.Uint64()
	debug.SetGCPercent(percentFor(live, roots, t.floor))
	return true
}

func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	debug.SetGCPercent(t.previous)
}

// percentFor is the GOGC that puts the heap target at about live + floor, never below the
// default 100. The runtime's target is live + (live + roots) × GOGC/100 (roots: the stacks and
// globals it scans), and at least heapMinimum × GOGC/100; the second bound caps GOGC so that
// a tiny live heap cannot lift the target beyond live + floor either.
func percentFor(live, roots, floor uint64) int {
	p := floor * 100 / max(live+roots, 1)
	p = min(p, (live+floor)*100/heapMinimum)
	return int(max(p, 100))
}
