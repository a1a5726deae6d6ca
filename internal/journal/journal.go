// Package journal owns the call journal: the content-free record of the most recent calls per
// scope that GET /_mock/journal serves, so that a test can see what its client sent and what
// the mock answered — the client setup preview — without a word of what was said.
//
// It owns the three values a call leaves there and how they are built: the Entry (what the
// server did: route, status, model, stream, usage, fixture, simulated fault, …), the Shape of
// the request (ShapeOf: which protocol fields were set, counts and lengths, modes and types
// from the protocol's closed sets, never a name or text from the client), and the SDK identity
// (SDKOf: a fixed allowlist of headers, sanitized and cut). It also owns the Journal, the
// bounded rings those entries are kept in, and their JSON. Serving that JSON over HTTP, and
// filling entries from a request's Record, belong to the server.
//
// # Bounds
//
// The journal is diagnostic: it never fails a request, and its memory is bounded by its Config
// whatever scope ids arrive (they come from a client header). Each scope keeps at most
// EntriesPerScope entries, the oldest overwritten first. At most MaxScopes named scopes are
// kept: a new scope beyond that evicts the least recently used one (by Add or List), whose
// entries are gone, as if it had been dropped. The unscoped journal ("") is not one of them
// and is never evicted, so a flood of scope ids cannot erase the unscoped calls. A scope id
// that is not valid (the request-id syntax, ^[A-Za-z0-9._:-]{1,128}$) is never stored.
//
// # Concurrency
//
// Many requests add at once. One mutex guards the scope index (a map lookup and a move in the
// recency list, some tens of nanoseconds) and each ring has its own for the entry copy, so
// requests of different scopes contend only on the index, and unscoped requests not at all.
// BenchmarkJournalAddParallel measures it.
package journal

import (
	"encoding/json"
	"strings"
	"sync"

	"mockgateway/internal/jsonenc"
	"mockgateway/observability"
)

// Config bounds a Journal. A zero member means its default.
type Config struct {
	EntriesPerScope int // entries kept per scope, newest first
	MaxScopes       int // named scopes kept; the unscoped journal is not counted
}

// The package's defaults (the service sets its own from --journal-entries and --journal-scopes).
// At these bounds a journal holds DefaultEntriesPerScope × DefaultMaxScopes entries; what an
// entry holds is in docs/configuration.md (--journal-scopes). Rings grow as they fill, so idle
// scopes cost little.
const (
	DefaultEntriesPerScope = 100
	DefaultMaxScopes       = 256
)

// Journal is the bounded, per-scope record of recent calls. Its methods are safe for
// concurrent use.
type Journal struct {
	perScope  int
	maxScopes int

	unscoped ring // scope "": outside the index, never evicted

	mu     sync.Mutex       // guards scopes and the recency list
	scopes map[string]*ring // named scopes
	recent ring             // sentinel of the recency list: recent.next is the most recent, recent.prev the least
}

// New makes an empty Journal.
func New(c Config) *Journal {
	if c.EntriesPerScope <= 0 {
		c.EntriesPerScope = DefaultEntriesPerScope
	}
	if c.MaxScopes <= 0 {
		c.MaxScopes = DefaultMaxScopes
	}
	j := &Journal{
		perScope:  c.EntriesPerScope,
		maxScopes: c.MaxScopes,
		scopes:    make(map[string]*ring),
	}
	j.recent.next, j.recent.prev = &j.recent, &j.recent
	return j
}

// ValidScope reports whether scope can be a journal scope: "" (unscoped) or a valid request
// id. Add ignores, and List and AppendJSON show nothing for, any other.
func ValidScope(scope string) bool {
	return scope == "" || observability.ValidRequestID(scope)
}

// Add files e under scope (setting e.Scope), as the newest entry. It never fails: an invalid
// scope's entry is not kept, and a new scope beyond MaxScopes evicts the least recently used.
func (j *Journal) Add(scope string, e Entry) {
	if !ValidScope(scope) {
		return
	}
	r := j.ring(scope, true)
	e.Scope = r.scope // the ring's own copy of the id: e keeps no caller's buffer alive
	e.bound()
	r.add(e, j.perScope)
}

// List returns up to limit of scope's entries, newest first (all of them when limit <= 0). A
// scope sees only its own entries; an unknown scope has none.
func (j *Journal) List(scope string, limit int) []Entry {
	if !ValidScope(scope) {
		return nil
	}
	r := j.ring(scope, false)
	if r == nil {
		return nil
	}
	return r.list(limit)
}

// Drop forgets scope's entries. Dropping "" empties the unscoped journal.
func (j *Journal) Drop(scope string) {
	if scope == "" {
		j.unscoped.reset()
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if r, ok := j.scopes[scope]; ok {
		j.remove(r)
	}
}

// AppendJSON appends GET /_mock/journal's answer for scope and limit (as List) to buf:
// {"object":"list","scope":"…","data":[…]}. An invalid scope gets an empty list under "": its
// id is not echoed.
func (j *Journal) AppendJSON(buf []byte, scope string, limit int) []byte {
	if !ValidScope(scope) {
		scope = ""
		limit = -1
	}
	var entries []Entry
	if limit >= 0 {
		entries = j.List(scope, limit)
	} // else an invalid scope: nothing to show
	return AppendList(buf, scope, entries)
}

// AppendList appends the journal's JSON answer for scope with these entries, in their order:
// {"object":"list","scope":"…","data":[…]}. A shared store's journal (internal/state) answers
// with it too.
func AppendList(buf []byte, scope string, entries []Entry) []byte {
	buf = append(buf, `{"object":"list","scope":`...)
	buf = jsonenc.AppendString(buf, scope)
	buf = append(buf, `,"data":[`...)
	n := 0
	for i := range entries {
		b, err := json.Marshal(entries[i])
		if err != nil {
			continue // cannot happen (bound clears what JSON cannot carry); never fail the list
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, b...)
		n++
	}
	return append(buf, "]}"...)
}

// Bound cuts e's strings to the journal's bounds, as Add does: for a shared store's journal.
func (e *Entry) Bound() { e.bound() }

// ring returns scope's ring, creating it when create is set, and marks it most recently used.
func (j *Journal) ring(scope string, create bool) *ring {
	if scope == "" {
		return &j.unscoped
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.scopes[scope]
	switch {
	case ok:
		j.unlink(r)
	case !create:
		return nil
	default:
		if len(j.scopes) >= j.maxScopes {
			j.remove(j.recent.prev) // the least recently used
		}
		// A fresh ring, never an evicted one reused: an Add still holding the evicted ring
		// would write into the new scope's. The id is copied, so that the map key does not
		// keep the buffer it was cut from alive.
		r = &ring{scope: strings.Clone(scope)}
		j.scopes[r.scope] = r
	}
	j.pushNewest(r)
	return r
}

// remove takes r out of the index. An Add that already holds r may still write to it; r is
// then garbage, and that entry lost, as the journal's bounds allow. j.mu is held.
func (j *Journal) remove(r *ring) {
	j.unlink(r)
	delete(j.scopes, r.scope)
}

// unlink and pushNewest maintain the recency list; j.mu is held.
func (j *Journal) unlink(r *ring) {
	r.prev.next, r.next.prev = r.next, r.prev
	r.prev, r.next = nil, nil
}

func (j *Journal) pushNewest(r *ring) {
	r.prev, r.next = &j.recent, j.recent.next
	j.recent.next.prev = r
	j.recent.next = r
}
