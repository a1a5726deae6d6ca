package testutil

import (
	"runtime"
	"slices"
	"testing"
)

// TestHeapAdded: per unit, largest first, small sites out of the list but in the total.
func TestHeapAdded(t *testing.T) {
	before := map[string]int64{"a": 100, "b": 1000}
	after := map[string]int64{"a": 100 + 10*64, "b": 1000 + 10*512, "c": 10 * 8}
	sites, total := HeapAdded(before, after, 10)
	want := []SiteBytes{{"b", 512}, {"a", 64}}
	if !slices.Equal(sites, want) || total != 512+64+8 {
		t.Errorf("sites %v total %d, want %v and %d", sites, total, want, 512+64+8)
	}
}

// TestHeapBySite: with every allocation sampled, what this test's function holds is found under
// its name.
func TestHeapBySite(t *testing.T) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	runtime.GC()
	before := HeapBySite()
	held := make([][]byte, 100)
	for i := range held {
		held[i] = make([]byte, 1000)
	}
	runtime.GC()
	runtime.GC() // the profile is as of the last complete collection
	after := HeapBySite()
	const site = "mockgateway/internal/testutil.TestHeapBySite"
	if d := after[site] - before[site]; d < 100*1000 {
		t.Errorf("%s holds %d bytes more, want at least 100,000; sites: %v", site, d, after)
	}
	runtime.KeepAlive(held)
}
