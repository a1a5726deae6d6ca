package quota

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTest(maxKeys int) (*Buckets, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)}
	return NewBuckets(maxKeys, c.now), c
}

// TestRequestsCountDownAndReplenish: each request takes one of rpm, the remaining count falls,
// the bucket refills continuously (a third of the window gives back one of three), and a
// refusal says how long until one request fits.
func TestRequestsCountDownAndReplenish(t *testing.T) {
	b, c := newTest(10)
	l := Limits{Requests: 3, Window: 3 * time.Second}
	for want := 2; want >= 0; want-- {
		s := b.Take(Key{ID: "k"}, l, Usage{}, 0)
		if s.Refused != "" || s.Requests.Remaining != want || s.Requests.Limit != 3 {
			t.Fatalf("want %d remaining, admitted; got %+v", want, s)
		}
	}
	s := b.Take(Key{ID: "k"}, l, Usage{}, 0)
	if s.Refused != Requests || s.RetryAfter != time.Second || s.Requests.Reset != 3*time.Second || s.Requested != 1 {
		t.Fatalf("the fourth: %+v", s)
	}
	c.t = c.t.Add(500 * time.Millisecond)
	if s := b.Take(Key{ID: "k"}, l, Usage{}, 0); s.Refused != Requests || s.RetryAfter != 500*time.Millisecond {
		t.Fatalf("half a request later: %+v", s)
	}
	c.t = c.t.Add(500 * time.Millisecond)
	if s := b.Take(Key{ID: "k"}, l, Usage{}, 0); s.Refused != "" || s.Requests.Remaining != 0 {
		t.Fatalf("a third of the window later: %+v", s)
	}
	c.t = c.t.Add(time.Hour)
	if s := b.Take(Key{ID: "k"}, l, Usage{}, 0); s.Requests.Remaining != 2 || s.Requests.Reset != time.Second {
		t.Fatalf("long after: %+v", s)
	}
}

// TestTokensSettleAndTooLarge: admission takes the whole budget, Settle gives back what was not
// produced (a cut stream), and a request larger than the bucket is refused at once.
func TestTokensSettleAndTooLarge(t *testing.T) {
	b, _ := newTest(10)
	l := Limits{Tokens: 1000}
	if s := b.Take(Key{ID: "k"}, l, Usage{Input: 600}, 0); s.Refused != "" || s.Tokens.Remaining != 400 || s.Tokens.Reset != 36*time.Second {
		t.Fatalf("first: %+v", s)
	}
	if s := b.Take(Key{ID: "k"}, l, Usage{Input: 600}, 0); s.Refused != Tokens || s.TooLarge || s.Requested != 600 || s.RetryAfter != 12*time.Second {
		t.Fatalf("second: %+v", s)
	}
	b.Settle(Key{ID: "k"}, l, Usage{Output: -500}) // produced 100 of its 600
	if s := b.Take(Key{ID: "k"}, l, Usage{Input: 600}, 0); s.Refused != "" || s.Tokens.Remaining != 300 {
		t.Fatalf("after the refund: %+v", s)
	}
	if s := b.Take(Key{ID: "k"}, l, Usage{Input: 1001}, 0); s.Refused != Tokens || !s.TooLarge || s.RetryAfter != 0 {
		t.Fatalf("too large: %+v", s)
	}
}

// TestDailyAndKeysApart: the daily bucket refuses on its own, and another key (another client,
// scope or model) has buckets of its own.
func TestDailyAndKeysApart(t *testing.T) {
	b, _ := newTest(10)
	l := Limits{Requests: 100, Daily: 1}
	if s := b.Take(Key{ID: "a"}, l, Usage{}, 0); s.Refused != "" || s.Daily.Remaining != 0 || s.Daily.Reset != Day {
		t.Fatalf("first: %+v", s)
	}
	if s := b.Take(Key{ID: "a"}, l, Usage{}, 0); s.Refused != Daily || s.RetryAfter != Day || s.Requests.Remaining != 99 {
		t.Fatalf("second, refused by the day, taking nothing: %+v", s)
	}
	if s := b.Take(Key{ID: "b"}, l, Usage{}, 0); s.Refused != "" {
		t.Fatalf("another key: %+v", s)
	}
}

// TestBucketsBounded: past maxKeys the key used longest ago goes (starting full again), and a
// key whose buckets are full is forgotten when a new one comes.
func TestBucketsBounded(t *testing.T) {
	b, c := newTest(2)
	l := Limits{Requests: 1, Window: time.Second}
	b.Take(Key{ID: "a"}, l, Usage{}, 0)
	b.Take(Key{ID: "b"}, l, Usage{}, 0)
	b.Take(Key{ID: "c"}, l, Usage{}, 0)
	if b.Len() != 2 {
		t.Fatalf("kept %d keys", b.Len())
	}
	if s := b.Take(Key{ID: "a"}, l, Usage{}, 0); s.Refused != "" {
		t.Fatalf("a was evicted, so full again: %+v", s)
	}
	c.t = c.t.Add(2 * time.Second)
	b.Take(Key{ID: "d"}, l, Usage{}, 0)
	if b.Len() != 1 {
		t.Fatalf("full keys are forgotten: kept %d", b.Len())
	}
}

func TestParse(t *testing.T) {
	l, err := Parse("rpm=3; tpm=2000;rpd=10;window=5s")
	if err != nil || l != (Limits{Requests: 3, Tokens: 2000, Daily: 10, Window: 5 * time.Second}) {
		t.Fatalf("got %+v, %v", l, err)
	}
	if l.String() != "rpm=3;tpm=2000;rpd=10;windowms=5000" {
		t.Fatalf("String: %s", l.String())
	}
	for _, bad := range []string{"", "rpm", "rpm=0", "rpm=-1", "rpm=x", "tpm=1;tpm=2", "rps=3", "rpm=3;window=forever", "rpm=3;window=48h", "window=5s"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// TestTakeAheadReserves: a request taken ahead is charged now, so the requests of now are
// refused until the debt has refilled, and one taken ahead again waits after it; once the
// clock reaches the debt's end the bucket serves as before.
func TestTakeAheadReserves(t *testing.T) {
	b, c := newTest(10)
	l := Limits{Requests: 1, Window: 10 * time.Second}
	b.Take(Key{ID: "k"}, l, Usage{}, 0)
	s := b.Take(Key{ID: "k"}, l, Usage{}, 0)
	if s.Refused != Requests || s.RetryAfter != 10*time.Second {
		t.Fatalf("spent: %+v", s)
	}
	if s := b.Take(Key{ID: "k"}, l, Usage{}, s.RetryAfter); s.Refused != "" || s.Requests.Remaining != 0 || s.Requests.Reset != 10*time.Second {
		t.Fatalf("its retry, taken after the retry-after it was told: %+v", s)
	}
	if s := b.Take(Key{ID: "k"}, l, Usage{}, 10*time.Second); s.Refused != Requests || s.RetryAfter != 10*time.Second {
		t.Fatalf("another retry at the same time finds it taken: %+v", s)
	}
	c.t = c.t.Add(15 * time.Second)
	if s := b.Take(Key{ID: "k"}, l, Usage{}, 0); s.Refused != Requests || s.RetryAfter != 5*time.Second || s.Requests.Reset != 5*time.Second {
		t.Fatalf("half way through the reservation: %+v", s)
	}
	c.t = c.t.Add(5 * time.Second)
	if s := b.Take(Key{ID: "k"}, l, Usage{}, 0); s.Refused != "" {
		t.Fatalf("after it: %+v", s)
	}
}

// TestListReplenishes: a listing shows the buckets as they are now, not as last drawn, and
// forgets the keys whose buckets are full again.
func TestListReplenishes(t *testing.T) {
	b, c := newTest(10)
	l := Limits{Requests: 4, Window: 4 * time.Second}
	k := Key{ID: "k", Model: "m", Scope: "s", Org: Org{7}}
	for range 4 {
		b.Take(k, l, Usage{}, 0)
	}
	c.t = c.t.Add(time.Second)
	vs := b.List("s", 10)
	if len(vs) != 1 || vs[0].Requests != (Bucket{Limit: 4, Remaining: 1, Reset: 3 * time.Second}) || vs[0].Org != (Org{7}).String() || vs[0].Limits.Window != 4*time.Second {
		t.Fatalf("a second later: %+v", vs)
	}
	c.t = c.t.Add(3 * time.Second)
	if vs := b.List("s", 10); len(vs) != 0 {
		t.Fatalf("full again: %+v", vs)
	}
}

// TestInputAndOutputBuckets: itpm counts a request's input at admission, otpm its output
// budget, corrected by Settle to what it produced (the input is not corrected); each refuses
// on its own kind, and a request larger than either bucket is refused at once.
func TestInputAndOutputBuckets(t *testing.T) {
	b, _ := newTest(10)
	k := Key{ID: "k"}
	l := Limits{Tokens: 5000, InputTokens: 1000, OutputTokens: 500, Window: 10 * time.Second}
	s := b.Take(k, l, Usage{Input: 300, Output: 200}, 0)
	if s.Refused != "" || s.InputTokens != (Bucket{1000, 700, 3 * time.Second}) || s.OutputTokens != (Bucket{500, 300, 4 * time.Second}) || s.Tokens.Remaining != 4500 {
		t.Fatalf("first: %+v", s)
	}
	if tb := s.TokenBucket(); tb != s.OutputTokens {
		t.Errorf("the most restrictive token bucket: %+v, want the output's", tb)
	}
	s = b.Take(k, l, Usage{Input: 100, Output: 400}, 0)
	if s.Refused != OutputTokens || s.Requested != 400 || s.RetryAfter != 2*time.Second || s.Bucket() != s.OutputTokens || s.InputTokens.Remaining != 700 {
		t.Fatalf("the output budget does not fit: %+v", s)
	}
	b.Settle(k, l, Usage{Input: 20, Output: -150}) // the first produced 50 of its 200, and its prompt was 20 more
	s = b.Take(k, l, Usage{Input: 100, Output: 400}, 0)
	if s.Refused != "" || s.OutputTokens.Remaining != 50 || s.InputTokens.Remaining != 600 || s.Tokens.Remaining != 5000-300-20-50-500 {
		t.Fatalf("after the correction: %+v", s)
	}
	if s := b.Take(k, l, Usage{Input: 700}, 0); s.Refused != InputTokens || s.RetryAfter != time.Second || s.Requested != 700 {
		t.Fatalf("the input does not fit: %+v", s)
	}
	if s := b.Take(k, l, Usage{Input: 1001}, 0); s.Refused != InputTokens || !s.TooLarge {
		t.Errorf("too large for the input bucket: %+v", s)
	}
	if s := b.Take(k, l, Usage{Output: 501}, 0); s.Refused != OutputTokens || !s.TooLarge {
		t.Errorf("too large for the output bucket: %+v", s)
	}
}

func TestParseInputOutput(t *testing.T) {
	l, err := Parse("itpm=1500;otpm=500")
	if err != nil || l != (Limits{InputTokens: 1500, OutputTokens: 500}) || l.String() != "itpm=1500;otpm=500;windowms=60000" {
		t.Fatalf("got %+v %s, %v", l, l.String(), err)
	}
	for _, bad := range []string{"itpm=0", "otpm=-1", "otpm=x", "itpm=1;itpm=2"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
