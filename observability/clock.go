package observability

import "time"

// ClockAfter is the time now, read as start plus the time since start on the monotonic clock:
// one clock reading where time.Now takes two (the wall clock, then the monotonic), and clock
// readings are dear on the VMs the service runs on (BenchmarkClock). It is how the SDK ends its
// spans (monotonicEndTime). It differs from time.Now only if the wall clock was stepped since
// start, and then it keeps the span or the request whole. A start without a monotonic reading
// (not from time.Now) costs what time.Now does; the zero time is not a start.
func ClockAfter(start time.Time) time.Time {
	if start.IsZero() {
		return time.Now()
	}
	return start.Add(time.Since(start))
}
