package observability

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestLogClock: the access line's time is what AppendFormat(time.RFC3339Nano) writes — for
// every fraction, in UTC, the local zone, zones east and west, one with seconds in its offset,
// a zone across its DST change, and years RFC3339 writes otherwise — line after line, whether
// the second is kept or new.
func TestLogClock(t *testing.T) {
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("W", -7*3600), time.FixedZone("E", 5*3600+45*60), time.FixedZone("S", 3600+30*60+15)}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		locs = append(locs, ny)
	}
	var c logClock
	check := func(tm time.Time) {
		t.Helper()
		want := tm.AppendFormat(nil, time.RFC3339Nano)
		if got := c.appendTime([]byte("x"), tm); string(got[1:]) != string(want) || got[0] != 'x' {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dst := time.Date(2026, 3, 8, 6, 59, 58, 0, time.UTC) // 2 am in New York, as it becomes 3
	for _, loc := range locs {
		for _, ns := range []int{0, 1, 10, 100000, 120000000, 123456789, 999999999} {
			check(time.Unix(1_780_000_000, int64(ns)).In(loc))
		}
		for range 2000 {
			check(time.Unix(rng.Int64N(5_000_000_000), rng.Int64N(1e9)).In(loc))
		}
		for i := range 4000 { // a second at a time, and within one
			check(dst.Add(time.Duration(i) * 999 * time.Millisecond).In(loc))
		}
		for _, y := range []int{0, 1, 9999, 10000, -1} {
			check(time.Date(y, 6, 1, 12, 0, 0, 5000, loc))
		}
	}
	check(ClockAfter(time.Now())) // with a monotonic reading
}

// BenchmarkAccessLine is the access line of a chat request, written as the chain writes it.
func BenchmarkAccessLine(b *testing.B) {
	a := &accessOut{}
	ctx := spanContext()
	start := time.Now()
	rec := &Record{Start: start, RequestID: "req_0123456789abcdef0123456789abcdef", Method: "POST",
		Route: "/v1/chat/completions", Status: 200, Chat: true, Model: "mock-chat", PromptTokens: 9, CompletionTokens: 64}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = a.line(buf[:0], ctx, ClockAfter(start), 0, rec)
	}
}
