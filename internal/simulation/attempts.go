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
// keeps each scope's keys together, so that dropping a scope (DropScope) forgets its counts.
//
// This is the one piece of simulation state that is not a pure function of the request, and it
// is bounded three ways: a key is forgotten TTL after its last attempt, a key is forgotten once
// its attempt succeeds (so the next identical request starts again at attempt 1, as a test that
// reruns expects), and at most max keys are kept (past that, the oldest-seen go first). It is per
// process: behind a load balancer, replicas count separately — clients that send an attempt
// header (x-mock-attempt, x-stainless-retry-count) are counted statelessly instead.
type AttemptCounter struct {
	mu     sync.Mutex
	max    int
	ttl    time.Duration
	now    func() time.Time
	keys   map[uint64]*list.Element // of *attemptEntry
	scopes map[string]*scopeKeys    // each scope that has a key kept ("" unscoped), with its keys
	lru    list.List                // most recently seen first: eviction takes from the back in O(1)
}

// scopeKeys are the keys counted in one scope: DropScope visits these alone, not every key.
type scopeKeys struct {
	id   string // cloned once per scope: cut from a request header, a copy keeps no more of the request alive
	keys map[uint64]*list.Element
}

type attemptEntry struct {
	key   uint64
	scope *scopeKeys // the scope the key was counted in
	count int
	last  time.Time
}

// NewAttemptCounter keeps at most max keys, each for ttl after its last attempt. max < 1 turns
// counting off: every request is attempt 1.
func NewAttemptCounter(max int, ttl time.Duration, now func() time.Time) *AttemptCounter {
	return &AttemptCounter{max: max, ttl: ttl, now: now, keys: map[uint64]*list.Element{}, scopes: map[string]*scopeKeys{}}
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
	sk := c.scopes[scope]
	if sk == nil {
		sk = &scopeKeys{id: strings.Clone(scope), keys: map[uint64]*list.Element{}}
		c.scopes[sk.id] = sk
	}
	el := c.lru.PushFront(&attemptEntry{key: key, scope: sk, count: 1, last: now})
	c.keys[key], sk.keys[key] = el, el
	return 1
}

// DropScope forgets every count kept in scope, as DELETE /_mock/scopes/{scope} drops the scope's
// other state: a test that reruns in the same scope starts again at attempt 1 even if its last
// run gave up before an attempt got through. It reports whether any was still counting (one
// past --attempt-ttl is forgotten already, only not yet removed). It visits the scope's own keys
// only, under the lock Next takes (BenchmarkDropScope).
func (c *AttemptCounter) DropScope(scope string) bool {
	if c == nil {
		return false
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	dropped := false
	if sk := c.scopes[scope]; sk != nil {
		for _, el := range sk.keys {
			dropped = dropped || now.Sub(el.Value.(*attemptEntry).last) <= c.ttl
			c.remove(el) // deleting from the map being ranged over is allowed
		}
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
	e := el.Value.(*attemptEntry)
	delete(c.keys, e.key)
	if delete(e.scope.keys, e.key); len(e.scope.keys) == 0 {
		delete(c.scopes, e.scope.id)
	}
	c.lru.Remove(el)
}

// Len is the number of keys kept.
func (c *AttemptCounter) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}
