package testutil

import "runtime"

// BytesAllocated is what f allocates, in bytes: a count of work as deterministic as the
// allocator, which a test can compare across input sizes where a timing could not be trusted.
// Other goroutines' allocations count too, so a test using it does not run in parallel.
func BytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
