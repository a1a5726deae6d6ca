package testutil

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
)

// HeapBySite is the heap in use, as of the last collection, by the function that allocated it:
// the first frame of each allocation's stack outside the runtime and the generic helpers that
// would hide the caller. It is exact only when every allocation is sampled
// (runtime.MemProfileRate = 1: go test -memprofilerate 1); the open-stream benchmarks use it to
// say what each stream holds, and where.
func HeapBySite() map[string]int64 {
	var recs []runtime.MemProfileRecord
	for n, _ := runtime.MemProfile(nil, true); ; n += 64 {
		recs = make([]runtime.MemProfileRecord, n)
		got, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:got]
			break
		}
	}
	by := map[string]int64{}
	for _, r := range recs {
		by[allocator(r.Stack())] += r.InUseBytes()
	}
	return by
}

func allocator(stack []uintptr) string {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		if fn := f.Function; !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "internal/") && !strings.HasPrefix(fn, "slices.") {
			return fn
		}
		if !more {
			return "runtime"
		}
	}
}

// SiteBytes is what one allocating function holds, per unit.
type SiteBytes struct {
	Site  string
	Bytes int64
}

// HeapAdded is what after holds beyond before, per unit of k (k streams: bytes a stream), by
// site, largest first, and in all. Sites under 16 bytes a unit are left out of the list, not of
// the total.
func HeapAdded(before, after map[string]int64, k int) (sites []SiteBytes, total int64) {
	for site, n := range after {
		d := n - before[site]
		total += d
		if d/int64(k) >= 16 {
			sites = append(sites, SiteBytes{site, d / int64(k)})
		}
	}
	slices.SortFunc(sites, func(x, y SiteBytes) int { return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(x.Site, y.Site)) })
	return sites, total / int64(k)
}
