package quota

import (
	"container/list"
	"sync"
	"time"
)

// Buckets are the buckets of one process, bounded: at most max keys, a key forgotten once its
// buckets are full again (a full bucket is one never seen), and past max the key used longest
// ago goes first — it loses only what its buckets were short of full.
type Buckets struct {
	mu   sync.Mutex
	max  int
	now  func() time.Time
	keys map[string]*list.Element // of *entry
	lru  list.List                // most recently used first
}

type entry struct {
	key    Key
	limits Limits
	levels Levels
	last   time.Time
	full   time.Time // when every bucket is full again: the key may be forgotten
}

// NewBuckets keeps at most maxKeys keys (at least 1), on the clock now.
func NewBuckets(maxKeys int, now func() time.Time) *Buckets {
	return &Buckets{max: max(1, maxKeys), now: now, keys: map[string]*list.Element{}}
}

// Take admits a request asking u of key's buckets under l, or refuses it (Status.Refused), as
// if it came ahead after now: admitted only if the buckets will hold what it asks by then,
// and charged now, so that the requests before then see the debt (a simulated retry that
// waits without waiting). Its Status is what the buckets say at now+ahead. Ahead 0 is a
// request of now.
func (b *Buckets) Take(key Key, l Limits, u Usage, ahead time.Duration) Status {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(key, &l, now)
	after, refused, tooLarge := take(&l, e.levels, u, ahead)
	b.set(e, &l, after, now)
	return StatusOf(&l, after, refused, tooLarge, u, ahead)
}

// Settle corrects key's token buckets by delta, what the answer used beyond what its
// admission took: positive takes more (it produced more than its budget), negative gives back
// what it did not produce. The token bucket is corrected by all of it, the output bucket by
// its output; the input bucket counts at admission only.
func (b *Buckets) Settle(key Key, l Limits, delta Usage) {
	if l.Tokens == 0 && l.OutputTokens == 0 || delta == (Usage{}) {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(key, &l, now)
	b.set(e, &l, settle(e.levels, delta), now)
}

// entry is key's entry with its levels replenished to now: a new one full.
func (b *Buckets) entry(key Key, l *Limits, now time.Time) *entry {
	size, period := caps(l)
	if el, ok := b.keys[key.ID]; ok {
		b.lru.MoveToFront(el)
		e := el.Value.(*entry)
		for i := range e.levels {
			e.levels[i] = refill(e.levels[i], size[i], period[i], now.Sub(e.last))
		}
		e.last = now
		return e
	}
	for back := b.lru.Back(); back != nil; back = b.lru.Back() {
		if e := back.Value.(*entry); len(b.keys) < b.max && now.Before(e.full) {
			break
		}
		delete(b.keys, back.Value.(*entry).key.ID)
		b.lru.Remove(back)
	}
	e := &entry{key: key, limits: *l, levels: size, last: now, full: now}
	b.keys[key.ID] = b.lru.PushFront(e)
	return e
}

// set stores e's levels, clamped to [-size, size], and when they will all be full.
func (b *Buckets) set(e *entry, l *Limits, lv Levels, now time.Time) {
	size, period := caps(l)
	e.full = now
	for i := range lv {
		lv[i] = clamp(lv[i], size[i])
		if size[i] > 0 {
			if t := now.Add(until(size[i]-lv[i], size[i], period[i])); t.After(e.full) {
				e.full = t
			}
		}
	}
	e.levels = lv
}

// DropScope forgets the buckets of scope's keys, which start full again; it reports whether
// there were any. It looks at every key kept, a bounded number.
func (b *Buckets) DropScope(scope string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	dropped := false
	for id, el := range b.keys {
		if el.Value.(*entry).key.Scope == scope {
			delete(b.keys, id)
			b.lru.Remove(el)
			dropped = true
		}
	}
	return dropped
}

// Len is the number of keys kept.
func (b *Buckets) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.keys)
}
