package simulation

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	good := []struct {
		in   string
		want Fault
	}{
		{"rate_limit", Fault{Kind: RateLimit, After: 3, RetryAfter: time.Second, For: 30 * time.Second}},
		{"rate_limit;attempts=2;retry_after=250ms", Fault{Kind: RateLimit, Attempts: 2, After: 3, RetryAfter: 250 * time.Millisecond, For: 30 * time.Second}},
		{" Server_Error ; attempts = 1 ", Fault{Kind: ServerError, Attempts: 1, After: 3, RetryAfter: time.Second, For: 30 * time.Second}},
		{"stream_cut;after=0", Fault{Kind: StreamCut, After: 0, RetryAfter: time.Second, For: 30 * time.Second}},
		{"timeout;for=2s", Fault{Kind: Timeout, After: 3, RetryAfter: time.Second, For: 2 * time.Second}},
	}
	for _, g := range good {
		f, err := ParseFault(g.in)
		if err != nil || f != g.want {
			t.Errorf("%q: %+v %v, want %+v", g.in, f, err, g.want)
		}
	}
	bad := []string{"", "explode", "rate_limit;attempts", "rate_limit;attempts=0", "rate_limit;attempts=x", "rate_limit;after=2",
		"stream_error;retry_after=1s", "server_error;for=1s", "timeout;for=forever", "rate_limit;colour=red", "cnryVALUE"}
	for _, b := range bad {
		_, err := ParseFault(b)
		if err == nil {
			t.Errorf("%q parsed", b)
		} else if strings.Contains(err.Error(), "cnry") || (b != "" && strings.Contains(err.Error(), b)) {
			t.Errorf("%q: the error quotes the value: %v", b, err)
		}
	}
}

func TestParseLatency(t *testing.T) {
	if l, err := ParseLatency("realistic"); err != nil || l != Profiles()["realistic"] {
		t.Errorf("profile: %+v %v", l, err)
	}
	l, err := ParseLatency("ttfc=100ms;between=10ms;jitter=2ms")
	if err != nil || l != (Latency{FirstChunk: 100 * time.Millisecond, BetweenChunks: 10 * time.Millisecond, Jitter: 2 * time.Millisecond}) {
		t.Errorf("explicit: %+v %v", l, err)
	}
	for _, b := range []string{"glacial", "ttfc=1", "ttfc=-1s", "speed=1s", "ttfc"} {
		if _, err := ParseLatency(b); err == nil {
			t.Errorf("%q parsed", b)
		}
	}
}

func TestAttemptOf(t *testing.T) {
	cases := []struct {
		h    http.Header
		want int
		err  bool
	}{
		{http.Header{}, 1, false},
		{http.Header{"X-Stainless-Retry-Count": {"0"}}, 1, false},
		{http.Header{"X-Stainless-Retry-Count": {"2"}}, 3, false},
		{http.Header{"X-Stainless-Retry-Count": {"junk"}}, 1, false},
		{http.Header{"X-Mock-Attempt": {"4"}, "X-Stainless-Retry-Count": {"0"}}, 4, false},
		{http.Header{"X-Mock-Attempt": {"0"}}, 0, true},
		{http.Header{"X-Mock-Attempt": {"x"}}, 0, true},
	}
	for _, c := range cases {
		got, err := AttemptOf(c.h)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("%v: %d %v", c.h, got, err)
		}
	}
}

func lookup(id string) (Target, bool) {
	switch id {
	case "gpt-4o":
		return Target{Executable: false}, true
	case "mock-chat", "mock-echo":
		return Target{Executable: true}, true
	}
	return Target{}, false
}

func TestDecide(t *testing.T) {
	always := &Fault{Kind: ServerError}
	twice := &Fault{Kind: RateLimit, Attempts: 2}
	policy := &Policy{Retries: 2, Backoff: 100 * time.Millisecond, BackoffMultiplier: 2, Fallback: []string{"gpt-4o", "mock-chat"}}

	// No fault, no policy.
	if p := Decide("m", nil, 1, policy, lookup, Progress{}); p.Fault != nil || p.Policy || p.ServedBy != "m" {
		t.Errorf("no fault: %+v", p)
	}
	// Without a policy the client's attempt decides.
	if p := Decide("m", twice, 2, nil, lookup, Progress{}); p.Fault == nil {
		t.Error("attempt 2 of attempts=2 must fail")
	}
	if p := Decide("m", twice, 3, nil, lookup, Progress{}); p.Fault != nil {
		t.Error("attempt 3 of attempts=2 must succeed")
	}
	// The gateway's retries absorb attempts=2: the third attempt of the primary succeeds.
	p := Decide("m", twice, 1, policy, lookup, Progress{})
	if p.Fault != nil || p.Attempts != 3 || p.ServedBy != "m" || len(p.Steps) != 2 || p.Wait != 300*time.Millisecond {
		t.Errorf("retries recover: %+v", p)
	}
	// Every attempt fails: skip the external target, serve from the mock.
	p = Decide("m", always, 1, policy, lookup, Progress{})
	if p.Fault != nil || p.Attempts != 3 || p.ServedBy != "mock-chat" || p.FallbackFrom != "m" {
		t.Errorf("fallback: %+v", p)
	}
	var kinds []string
	for _, s := range p.Steps {
		kinds = append(kinds, s.Kind+":"+s.To)
		if s.To == "gpt-4o" && !s.Skipped {
			t.Error("an external target must be skipped")
		}
	}
	if strings.Join(kinds, ",") != "retry:,retry:,fallback:gpt-4o,fallback:mock-chat" {
		t.Errorf("steps: %v", kinds)
	}
	// Only external fallbacks: the final error.
	p = Decide("m", always, 1, &Policy{Retries: 1, Fallback: []string{"gpt-4o"}}, lookup, Progress{})
	if p.Fault == nil || p.Attempts != 2 || p.ServedBy != "m" {
		t.Errorf("exhausted: %+v", p)
	}
	// Stream faults strike after output has started: no gateway can retry them.
	if p := Decide("m", &Fault{Kind: StreamCut}, 1, policy, lookup, Progress{}); p.Policy || p.Fault == nil {
		t.Errorf("stream fault with a policy: %+v", p)
	}
}

func TestTimingsAreSeededByTheRequest(t *testing.T) {
	l := Latency{FirstChunk: 100 * time.Millisecond, BetweenChunks: 20 * time.Millisecond, Jitter: 10 * time.Millisecond}
	a, b, c := NewTimings(l, 42), NewTimings(l, 42), NewTimings(l, 43)
	same, differ := true, false
	for i := 0; i < 20; i++ {
		x, y, z := a.Next(), b.Next(), c.Next()
		same = same && x == y
		differ = differ || x != z
		if x < 10*time.Millisecond || x > 30*time.Millisecond {
			t.Fatalf("delay %v outside 20ms ± 10ms", x)
		}
	}
	if !same || !differ {
		t.Errorf("same seed same timings: %v; another seed differs: %v", same, differ)
	}
	if NewTimings(Latency{}, 1).Total(100) != 0 {
		t.Error("instant is not instant")
	}
}

// TestTimingsInstant: a schedule is instant only when nothing can make it wait — no first-chunk
// or between-chunk delay and no jitter, which alone can draw a wait.
func TestTimingsInstant(t *testing.T) {
	for _, tc := range []struct {
		lat  Latency
		want bool
	}{
		{Profiles()["instant"], true},
		{Profiles()["fast"], false},
		{Latency{FirstChunk: time.Millisecond}, false},
		{Latency{BetweenChunks: time.Millisecond}, false},
		{Latency{Jitter: time.Millisecond}, false},
	} {
		if got := NewTimings(tc.lat, 1).Instant(); got != tc.want {
			t.Errorf("%+v: Instant %v, want %v", tc.lat, got, tc.want)
		}
	}
}

// TestDecideHonoursRetryAfter: a refusal's retry-after is waited when it is longer than the
// policy's backoff, and one beyond MaxBackoff is not retried at all — the fallback serves.
func TestDecideHonoursRetryAfter(t *testing.T) {
	policy := &Policy{Retries: 2, Backoff: 100 * time.Millisecond, Fallback: []string{"mock-chat"}}
	p := Decide("m", &Fault{Kind: RateLimit, Attempts: 1, RetryAfter: 2 * time.Second}, 1, policy, lookup, Progress{})
	if p.Fault != nil || p.Attempts != 2 || p.ServedBy != "m" || len(p.Steps) != 1 || p.Steps[0].Backoff != 2*time.Second || p.Wait != 2*time.Second {
		t.Errorf("retry-after 2s over a 100ms backoff: %+v", p)
	}
	// A server error says no retry-after: the backoff alone.
	p = Decide("m", &Fault{Kind: ServerError, Attempts: 1, RetryAfter: 2 * time.Second}, 1, policy, lookup, Progress{})
	if len(p.Steps) != 1 || p.Steps[0].Backoff != 100*time.Millisecond {
		t.Errorf("server error: %+v", p)
	}
	// A retry-after of two minutes is not waited: straight to the fallback.
	p = Decide("m", &Fault{Kind: RateLimit, RetryAfter: 2 * time.Minute}, 1, policy, lookup, Progress{})
	if p.Fault != nil || p.Attempts != 1 || p.ServedBy != "mock-chat" || p.Wait != 0 || len(p.Steps) != 1 || p.Steps[0].Kind != "fallback" {
		t.Errorf("retry-after beyond MaxBackoff: %+v", p)
	}
	if w, ok := policy.RetryWait(1, MaxBackoff+time.Second); ok || w != 0 {
		t.Errorf("RetryWait beyond MaxBackoff = %v, %v", w, ok)
	}
}

// TestBackoffIsBounded: a backoff grown by its multiplier stops at MaxBackoff — ten retries of
// a minute at ×10 neither wait hours nor overflow to nothing.
func TestBackoffIsBounded(t *testing.T) {
	p := &Policy{Retries: 10, Backoff: time.Minute, BackoffMultiplier: 10}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 10; n++ {
		if w, ok := p.RetryWait(n, 0); !ok || w != MaxBackoff {
			t.Errorf("retry %d waits %v, want %v", n, w, MaxBackoff)
		}
	}
	if w, _ := (&Policy{Backoff: 100 * time.Millisecond, BackoffMultiplier: 2}).RetryWait(3, 0); w != 400*time.Millisecond {
		t.Errorf("a small backoff grows as before: %v", w)
	}
}

// TestDecideGoesOnFromItsProgress: after retries the policy already made (on the model's
// quota), its attempts and backoffs go on from there, the fault counts the attempts that reach
// the model, and a sleeping policy makes no retry beyond what it may still sleep.
func TestDecideGoesOnFromItsProgress(t *testing.T) {
	policy := &Policy{Retries: 4, Backoff: time.Second, BackoffMultiplier: 2, Fallback: []string{"mock-chat"}}
	p := Decide("m", &Fault{Kind: ServerError, Attempts: 1}, 1, policy, lookup, Progress{Retries: 1})
	if p.Fault != nil || p.Attempts != 3 || p.ServedBy != "m" || len(p.Steps) != 1 || p.Steps[0].Attempt != 2 || p.Steps[0].Backoff != 2*time.Second {
		t.Errorf("one retry made already: %+v", p)
	}
	sleepy := *policy
	sleepy.SleepBackoff = true
	p = Decide("m", &Fault{Kind: ServerError, Attempts: 1}, 1, &sleepy, lookup, Progress{Retries: 1, Left: 1500 * time.Millisecond})
	if p.Fault != nil || p.Attempts != 2 || p.ServedBy != "mock-chat" || p.Wait != 0 {
		t.Errorf("a 2s retry with 1.5s left to sleep is not made: %+v", p)
	}
}

// TestDecideProgressBeyondItsRetries: retries already made beyond the policy's own leave none
// to make; the attempts say so.
func TestDecideProgressBeyondItsRetries(t *testing.T) {
	p := Decide("m", &Fault{Kind: ServerError}, 1, &Policy{Retries: 2, Fallback: []string{"mock-chat"}}, lookup, Progress{Retries: 3})
	if p.Attempts != 3 || p.ServedBy != "mock-chat" || len(p.Steps) != 1 {
		t.Errorf("%+v", p)
	}
}
