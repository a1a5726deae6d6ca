package observability

import (
	"testing"
	"time"
)

// TestClockAfter: the time after a start is now — on the monotonic clock, so that durations
// from it are monotonic too — and the zero time is not a start.
func TestClockAfter(t *testing.T) {
	start := time.Now()
	before := time.Now()
	got := ClockAfter(start)
	after := time.Now()
	if got.Before(before) || got.After(after) {
		t.Errorf("ClockAfter = %v, not between %v and %v", got, before, after)
	}
	if got.Round(0) == got {
		t.Error("no monotonic reading")
	}
	if z := ClockAfter(time.Time{}); z.Before(before) {
		t.Errorf("after the zero time: %v", z)
	}
	wall := start.Round(0) // a start without a monotonic reading, as trace.WithTimestamp gives
	if got := ClockAfter(wall); got.Before(before) || time.Since(got) > time.Minute {
		t.Errorf("after a wall-clock start: %v", got)
	}
}

// BenchmarkClock: what a reading of the time costs, by time.Now and by ClockAfter.
func BenchmarkClock(b *testing.B) {
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			_ = time.Now()
		}
	})
	b.Run("ClockAfter", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			_ = ClockAfter(start)
		}
	})
}
