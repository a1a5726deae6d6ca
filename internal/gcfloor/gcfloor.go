// Package gcfloor owns the service's one garbage-collector setting: a floor under the heap
// target, so that a small live heap does not make the collector run all the time.
//
// The service's live heap is a few megabytes (the span buffer, connections, the catalog), and
// every request allocates a dozen kilobytes it drops at once. With GOGC's default the heap target
// is twice the live heap, so under load the collector ran about eighty times a second and took
// a fifth of the CPU. A fixed floor (raising GOGC while the live heap is below it) spaces the
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

// maxPercent bounds GOGC while the live heap is tiny (at start-up, when idle).
const maxPercent = 10000

// Start keeps the heap target at or above live heap + floor bytes by setting GOGC after every
// collection, until the returned stop is called, which restores GOGC to what it was. A zero floor
// does nothing. GOGC is process-wide, so this is for the process's one service: two tuners at
// once would overwrite each other's setting.
func Start(floor uint64) (stop func()) {
	if floor == 0 {
		return func() {}
	}
	t := &tuner{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.previous = debug.SetGCPercent(100)
	t.tune()
	t.arm()
	return t.stop
}

type tuner struct {
	floor    uint64
	previous int

	mu      sync.Mutex // tune runs in the cleanup goroutine; stop from anywhere
	stopped bool
	percent int
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

// tune sets GOGC from the live heap the last collection measured; it reports false once stopped.
func (t *tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	percent := percentFor(t.sample[0].Value.Uint64(), t.floor)
	if percent != t.percent {
		debug.SetGCPercent(percent)
		t.percent = percent
	}
	return true
}

func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		debug.SetGCPercent(t.previous)
	}
}

// percentFor is the GOGC that puts the heap target (live × (1 + GOGC/100)) at live + floor,
// and never below the default 100.
func percentFor(live, floor uint64) int {
	if live == 0 {
		return maxPercent
	}
	p := floor * 100 / live
	switch {
	case p < 100:
		return 100
	case p > maxPercent:
		return maxPercent
	}
	return int(p)
}
