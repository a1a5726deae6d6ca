package simulation

import (
	"net/http"
	"testing"
)

// FuzzParseFault: any header value either parses into a fault whose own rendering parses back
// to the same kind and attempts, or fails. (That errors never quote the value is checked in
// TestParseFault: a fuzzed value can be a word of the fixed message.)
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"rate_limit", "rate_limit;attempts=2;retry_after=250ms", "stream_cut;after=0", "timeout;for=1s",
		"server_error;;", "unavailable;attempts=1000", "stream_error;after=99999", ";", "rate_limit;attempts=", "x=y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseFault(s)
		if err != nil {
			return
		}
		again, err := ParseFault(got.String())
		if err != nil || again.Kind != got.Kind || again.Attempts != got.Attempts {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, got, got.String(), again, err)
		}
		if got.Attempts < 0 || got.After < 0 || got.RetryAfter < 0 || got.For < 0 {
			t.Fatalf("negative parameter: %+v", got)
		}
		_ = Decide("m", &got, 1, &Policy{Retries: 2, Fallback: []string{"x"}}, func(string) (Target, bool) { return Target{}, false }, Progress{})
	})
}

// FuzzParseLatency: never a panic, never a negative delay, and timings stay within bounds.
func FuzzParseLatency(f *testing.F) {
	for _, s := range []string{"slow", "ttfc=1s;between=10ms;jitter=5ms", "ttfc=", "jitter=1h", "between=-1s", "REALISTIC"} {
		f.Add(s, uint64(7))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		l, err := ParseLatency(s)
		if err != nil {
			return
		}
		if l.FirstChunk < 0 || l.BetweenChunks < 0 || l.Jitter < 0 {
			t.Fatalf("negative latency %+v", l)
		}
		tm := NewTimings(l, seed)
		for i := 0; i < 4; i++ {
			if d := tm.Next(); d < 0 || d > l.BetweenChunks+l.Jitter {
				t.Fatalf("delay %v outside [0, %v]", d, l.BetweenChunks+l.Jitter)
			}
		}
		h := http.Header{}
		h.Set(HeaderAttempt, s)
		if n, err := AttemptOf(h); err == nil && n < 1 {
			t.Fatalf("attempt %d", n)
		}
	})
}
