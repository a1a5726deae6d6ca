package simulation

import (
	"container/list"
	"sync"
	"time"
)

// AttemptCounter numbers the attempts of clients that send no attempt header (LangChain, the
// Vercel AI SDK, LlamaIndex, go-openai, … retry on their own and say nothing), so that "fail the
// first K attempts" recovers for them too. A retry resends the same request, so its key is a hash
// of what identifies it — the body, the model and the fault header (and the scope, once scopes
// exist) — computed by the caller; the counter never sees the request itself, and nothing it
// keeps reaches telemetry.
//
// This is the one piece of simulation state that is not a pure function of the request, and it
// is bounded three ways: a key is forgotten TTL after its last attempt, a key is forgotten once
// its attempt succeeds (so the next identical request starts again at attempt 1, as a test that
// reruns expects), and at most max keys are kept (past that, the oldest-seen go first). It is per
// process: behind a load balancer, replicas count separately — clients that send an attempt
// header (x-mock-attempt, x-stainless-retry-count) are counted statelessly instead.
type AttemptCounter struct {
	mu   sync.Mutex
	max  int
	ttl  time.Duration
	now  func() time.Time
	keys map[uint64]*list.Element // of *attemptEntry
	lru  list.List                // most recently seen first: eviction takes from the back in O(1)
}

type attemptEntry struct {
	key   uint64
	count int
	last  time.Time
}

// NewAttemptCounter keeps at most max keys, each for ttl after its last attempt. max < 1 turns
// counting off: every request is attempt 1.
func NewAttemptCounter(max int, ttl time.Duration, now func() time.Time) *AttemptCounter {
	return &AttemptCounter{max: max, ttl: ttl, now: now, keys: make(map[uint64]*list.Element)}
}

// Next records one attempt of the request with this key and returns its number, from 1.
func (c *AttemptCounter) Next(key uint64) int {
	if c == nil || c.max < 1 {
		return 1
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.keys[key]; ok {
		e := el.Value.(*attemptEntry)
		if now.Sub(e.last) > c.ttl {
			e.count = 0
		}
		e.count++
		e.last = now
		c.lru.MoveToFront(el)
		return e.count
	}
	// Expired keys are at the back; past the bound, the key seen longest ago goes too.
	for back := c.lru.Back(); back != nil; back = c.lru.Back() {
		if e := back.Value.(*attemptEntry); len(c.keys) < c.max && now.Sub(e.last) <= c.ttl {
			break
		}
		c.remove(back)
	}
	c.keys[key] = c.lru.PushFront(&attemptEntry{key: key, count: 1, last: now})
	return 1
}

// Done forgets the key: its attempt succeeded, and a later identical request is a new first try.
func (c *AttemptCounter) Done(key uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if el, ok := c.keys[key]; ok {
		c.remove(el)
	}
	c.mu.Unlock()
}

func (c *AttemptCounter) remove(el *list.Element) {
	delete(c.keys, el.Value.(*attemptEntry).key)
	c.lru.Remove(el)
}

// Len is the number of keys kept.
func (c *AttemptCounter) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}
