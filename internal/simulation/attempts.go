package simulation

import (
	"container/list"
	"strings"
	"sync"
	"time"
)

// AttemptCounter numbers the attempts of clients that send no attempt header (LangChain, the
// Vercel AI SDK, LlamaIndex, go-openai, … retry on their own and say nothing), so that "fail the
// first K attempts" recovers for them too. A retry resends the same request, so its key is a hash
// of what identifies it — the body, the model, the fault header and the scope — computed by the
// caller; the counter never sees the request itself, and nothing it keeps reaches telemetry. It
// keeps each key's scope id beside it, so that dropping a scope (DropScope) forgets its counts.
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
	scope string // the scope the key was counted in ("" unscoped)
	count int
	last  time.Time
}

// NewAttemptCounter keeps at most max keys, each for ttl after its last attempt. max < 1 turns
// counting off: every request is attempt 1.
func NewAttemptCounter(max int, ttl time.Duration, now func() time.Time) *AttemptCounter {
	return &AttemptCounter{max: max, ttl: ttl, now: now, keys: make(map[uint64]*list.Element)}
}

// Next records one attempt of the request with this key, in scope, and returns its number, from
// 1. The key already covers the scope; scope is kept only for DropScope.
func (c *AttemptCounter) Next(key uint64, scope string) int {
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
	// The scope id is cut from a request header: a copy keeps no more of the request alive.
	c.keys[key] = c.lru.PushFront(&attemptEntry{key: key, scope: strings.Clone(scope), count: 1, last: now})
	return 1
}

// DropScope forgets every count kept in scope, as DELETE /_mock/scopes/{scope} drops the scope's
// other state: a test that reruns in the same scope starts again at attempt 1 even if its last
// run gave up before an attempt got through. It reports whether any was still counting (one
// past --attempt-ttl is forgotten already, only not yet removed). It walks every key, at most
// max of them, under the lock Next takes, and runs only when a test drops its scope.
func (c *AttemptCounter) DropScope(scope string) bool {
	if c == nil {
		return false
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	dropped := false
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*attemptEntry); e.scope == scope {
			dropped = dropped || now.Sub(e.last) <= c.ttl
			c.remove(el)
		}
		el = next
	}
	return dropped
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
