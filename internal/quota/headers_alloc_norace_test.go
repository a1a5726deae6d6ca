//go:build !race

package quota

import (
	"net/http"
	"testing"
	"time"
)

// Not built with -race: the race detector's instrumentation changes what escapes to the heap.

// TestHeaderValuesAllocations: all the values of a status's headers cost two allocations, one
// string and one array of slices, however many there are.
func TestHeaderValuesAllocations(t *testing.T) {
	h := http.Header{}
	now := time.Now()
	set := func() {
		var hv HeaderValues
		for _, name := range [...]string{"X-A", "X-B", "X-C", "X-D", "X-E", "X-F"} {
			hv.Int(name, 1000000000000)
		}
		hv.Time("X-G", now, time.RFC3339)
		hv.SetOn(h)
	}
	set()
	if n := testing.AllocsPerRun(100, set); n > 2 {
		t.Errorf("%v allocations, want 2", n)
	}
}
