package journal

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// heapAlloc is the live heap, after two collections (the first can leave finalized objects for
// the second).
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemoryIsBounded drives the journal ten times past both its bounds, with fresh scope ids
// and request ids as a client could send, and some values far over their bounds: the heap it
// holds must stay within what the bounds allow, and must not grow with the number of requests.
func TestMemoryIsBounded(t *testing.T) {
	const perScope, maxScopes, rounds = 50, 40, 10
	sdk := SDKOf(canaryHeaders())
	shape := ShapeOf(decode(t, toolRoundTripBody))

	base := heapAlloc()
	j := New(Config{EntriesPerScope: perScope, MaxScopes: maxScopes})
	n := 0
	// fill gives maxScopes new scopes (and the unscoped journal) times entries each.
	fill := func(round, times int) {
		for s := range maxScopes + 1 {
			scope := ""
			if s > 0 {
				scope = "round-" + strconv.Itoa(round) + "-scope-" + strconv.Itoa(s)
			}
			for range times * perScope {
				n++
				e := entry(n)
				e.RequestID = "req_" + strconv.Itoa(n) + strings.Repeat("0", 24) // fresh, as ids are
				e.SDK, e.Shape = sdk, shape
				if n%97 == 0 {
					e.Route = strings.Repeat("/x", 2048) // far over its bound; its copy is cut
				}
				j.Add(scope, e)
			}
		}
	}
	fill(0, 1)
	atBounds := heapAlloc()
	for r := 1; r <= rounds; r++ {
		fill(r, rounds)
	}
	after := heapAlloc()
	runtime.KeepAlive(j)

	// What the bounds allow: every ring full, each entry with its own request id (a 48-byte
	// allocation) and a cut value now and then, plus a scope's ring, map slot and id. Doubled
	// for the heap's size classes and bookkeeping.
	perEntry := uint64(unsafe.Sizeof(Entry{})) + 48 + 16
	bound := 2 * ((maxScopes+1)*perScope*perEntry + maxScopes*1024)
	t.Logf("%d adds in %d scopes; entry %d bytes; heap held: %d at the bounds, %d after (bound %d)",
		n, rounds*maxScopes+maxScopes+1, unsafe.Sizeof(Entry{}), atBounds-base, after-base, bound)
	if after > base && after-base > bound {
		t.Errorf("the journal holds %d bytes after %d adds, over the %d its bounds allow", after-base, n, bound)
	}
	// Ten times the requests: the same memory, give or take the heap's noise.
	if after > atBounds && after-atBounds > bound/4 {
		t.Errorf("the heap grew by %d bytes from the bounds (%d) to ten times past them (%d)", after-atBounds, atBounds-base, after-base)
	}
	if got := len(j.scopes); got != maxScopes {
		t.Errorf("%d scopes kept, want %d", got, maxScopes)
	}
	if got := len(j.List("", 0)); got != perScope {
		t.Errorf("unscoped journal holds %d entries, want %d", got, perScope)
	}
}
