package journal

import (
	"slices"
	"sync"
)

// ring is one scope's entries: a circular buffer of at most perScope entries that grows as it
// fills, so that a scope with few calls holds few.
type ring struct {
	scope string // immutable

	mu      sync.Mutex
	entries []Entry // len grows to perScope, then stays
	head    int     // where the next entry goes once the ring is full: the oldest entry

	// The recency list's links (toward older and newer scopes), guarded by Journal.mu.
	next, prev *ring
}

func (r *ring) add(e Entry, perScope int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.entries) < perScope {
		if len(r.entries) == cap(r.entries) {
			// Grown by hand, not by append, so that the capacity never passes perScope.
			grown := make([]Entry, len(r.entries), min(max(2*cap(r.entries), 4), perScope))
			copy(grown, r.entries)
			r.entries = grown
		}
		r.entries = append(r.entries, e)
		return
	}
	r.entries[r.head] = e
	r.head = (r.head + 1) % perScope
}

// list copies up to limit entries, newest first; all when limit <= 0.
func (r *ring) list(limit int) []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.entries)
	if limit <= 0 || limit > n {
		limit = n
	}
	if limit == 0 {
		return nil
	}
	out := make([]Entry, limit)
	// The newest is just before head (head is 0 until the ring is full, when len is the end).
	newest := r.head - 1
	if newest < 0 {
		newest = n - 1
	}
	for i := range out {
		out[i] = r.entries[(newest-i+n)%n]
	}
	// Filed when answered, shown by when they started: a client that sends its next request as
	// soon as it has an answer can be answered again before the first call is filed.
	slices.SortStableFunc(out, func(a, b Entry) int { return b.Time.Compare(a.Time) })
	return out
}

func (r *ring) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries, r.head = nil, 0
}
