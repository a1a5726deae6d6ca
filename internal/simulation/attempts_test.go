package simulation

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestAttemptCounterCountsRetriesOfOneRequest(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := NewAttemptCounter(10, time.Minute, clock.now)
	for want := 1; want <= 3; want++ {
		if got := c.Next(42, ""); got != want {
			t.Fatalf("attempt %d: got %d", want, got)
		}
		clock.t = clock.t.Add(time.Second)
	}
	if got := c.Next(7, ""); got != 1 {
		t.Errorf("another request is its own first attempt, got %d", got)
	}
}

func TestAttemptCounterForgetsOnSuccessAndAfterTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := NewAttemptCounter(10, time.Minute, clock.now)
	c.Next(1, "")
	c.Next(1, "")
	c.Done(1)
	if got := c.Next(1, ""); got != 1 {
		t.Errorf("after success the same request starts again: got %d", got)
	}
	clock.t = clock.t.Add(time.Minute + time.Second)
	if got := c.Next(1, ""); got != 1 {
		t.Errorf("after the TTL the same request starts again: got %d", got)
	}
	clock.t = clock.t.Add(30 * time.Second)
	if got := c.Next(1, ""); got != 2 {
		t.Errorf("within the TTL of the last attempt it counts on: got %d", got)
	}
}

// TestAttemptCounterIsBounded drives far more distinct requests through the counter than it
// keeps: it never holds more than its maximum, and evicts the key seen longest ago.
func TestAttemptCounterIsBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	const max = 100
	c := NewAttemptCounter(max, time.Minute, clock.now)
	c.Next(0, "")
	for k := uint64(1); k < 100_000; k++ {
		clock.t = clock.t.Add(time.Microsecond)
		c.Next(k, "")
		if k == 50 {
			c.Next(0, "") // 0 is now more recent than 1..49
		}
		if n := c.Len(); n > max {
			t.Fatalf("after %d keys the counter holds %d, more than %d", k, n, max)
		}
	}
	// 0 was refreshed and then evicted in turn as 100,000 newer keys arrived; the newest stay.
	if got := c.Next(99_999, ""); got != 2 {
		t.Errorf("the newest key was evicted: got attempt %d", got)
	}
}

func TestAttemptCounterOff(t *testing.T) {
	c := NewAttemptCounter(0, time.Minute, time.Now)
	for range 3 {
		if got := c.Next(1, ""); got != 1 {
			t.Fatalf("counting off: got %d", got)
		}
	}
	var nilCounter *AttemptCounter
	if got := nilCounter.Next(1, ""); got != 1 {
		t.Fatalf("nil counter: got %d", got)
	}
	nilCounter.Done(1)
	if nilCounter.DropScope("t") {
		t.Fatal("a nil counter dropped a scope")
	}
}

// TestAttemptCounterDropScope: dropping a scope forgets its counts and only its counts.
func TestAttemptCounterDropScope(t *testing.T) {
	c := NewAttemptCounter(100, time.Minute, time.Now)
	c.Next(1, "t-1")
	c.Next(1, "t-1")
	c.Next(2, "t-1")
	c.Next(3, "t-2")
	c.Next(4, "")
	if !c.DropScope("t-1") {
		t.Fatal("DropScope(t-1) found nothing")
	}
	if c.DropScope("t-1") {
		t.Error("DropScope(t-1) twice found counts the second time")
	}
	if got := c.Len(); got != 2 {
		t.Errorf("%d keys left, want the other scopes' 2", got)
	}
	if got := c.Next(1, "t-1"); got != 1 {
		t.Errorf("after the drop, key 1 is attempt %d, want 1", got)
	}
	if got := c.Next(3, "t-2"); got != 2 {
		t.Errorf("another scope's key is attempt %d, want 2", got)
	}
	if got := c.Next(4, ""); got != 2 {
		t.Errorf("the unscoped key is attempt %d, want 2", got)
	}
}

// TestAttemptCounterDropScopeExpired: a count past its TTL is forgotten already, so dropping its
// scope drops it but does not report it as something the scope still held.
func TestAttemptCounterDropScopeExpired(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	c := NewAttemptCounter(100, time.Minute, clock.now)
	c.Next(1, "old")
	clock.t = clock.t.Add(2 * time.Minute)
	if c.DropScope("old") {
		t.Error("an expired count was reported as dropped")
	}
	if c.Len() != 0 {
		t.Errorf("%d keys left, want 0: the expired key goes too", c.Len())
	}
}

// TestAttemptCounterScopesFollowKeys: a scope is kept while it has a key, once whatever the
// number of its keys, and goes with its last key — done, evicted or dropped — so the scopes are
// bounded by the keys.
func TestAttemptCounterScopesFollowKeys(t *testing.T) {
	c := NewAttemptCounter(3, time.Minute, time.Now)
	c.Next(1, "a")
	c.Next(2, "a")
	c.Next(3, "b")
	if len(c.scopes) != 2 || len(c.scopes["a"].keys) != 2 {
		t.Fatalf("scopes %v, want a with 2 keys and b", c.scopes)
	}
	c.Done(3)
	if _, ok := c.scopes["b"]; ok {
		t.Error("scope b kept after its only key was done")
	}
	c.Next(4, "c")
	c.Next(5, "c") // past the bound: key 1, the oldest, goes
	if got := len(c.scopes["a"].keys); got != 1 {
		t.Errorf("scope a has %d keys after one was evicted, want 1", got)
	}
	c.DropScope("a")
	c.DropScope("c")
	if len(c.scopes) != 0 || c.Len() != 0 {
		t.Errorf("after dropping every scope: %d scopes, %d keys", len(c.scopes), c.Len())
	}
}

// BenchmarkDropScope: dropping a test's scope, one key of its own, among --attempt-keys' default
// 10,000 kept for other scopes — what every other request waits for on the counter's lock.
func BenchmarkDropScope(b *testing.B) {
	c := NewAttemptCounter(10_001, time.Hour, time.Now)
	for k := range uint64(10_000) {
		c.Next(k, "other-"+string(rune('a'+k%26)))
	}
	for b.Loop() {
		c.Next(1<<40, "mine")
		c.DropScope("mine")
	}
}
