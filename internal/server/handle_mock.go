package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"mockgateway/internal/apierr"
	"mockgateway/internal/journal"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// The control surface /_mock/* (docs/fixtures.md) is the mock's own, not OpenAI's: fixtures
// for one scope (added, listed, dropped), dropping a scope, and the call journal. It answers in the same envelope, is
// traced, measured and logged like every route, and is guarded by the local key when one is set.

// keyGuard checks the local key, when one is set, then serves the request.
type keyGuard struct {
	key  string
	next http.Handler
}

func (g *keyGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.key != "" {
		if err := checkKey(g.key, r); err != nil {
			writeError(w, r, err)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// mockGuard checks the local key and the scope of a /_mock request, then serves it.
type mockGuard struct {
	key  string
	next http.Handler
}

func (g *mockGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.key != "" {
		if err := checkKey(g.key, r); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if err := readScope(r, observability.RecordFrom(r.Context())); err != nil {
		writeError(w, r, err)
		return
	}
	g.next.ServeHTTP(w, r)
}

type fixturesAdded struct {
	Object string   `json:"object"` // "fixtures.added"
	Scope  string   `json:"scope"`
	Names  []string `json:"names"`
}

// handleAddFixtures serves POST /_mock/fixtures: the body's fixtures join the request's scope.
func handleAddFixtures(store state.Store, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := readBody(w, r, maxBody); err != nil {
			writeError(w, r, err)
			return
		}
		buf := takeBody(r)
		defer putBuffer(buf)
		scope := observability.RecordFrom(r.Context()).Scope
		names, err := store.AddFixtures(r.Context(), scope, buf.Bytes())
		if err != nil {
			writeError(w, r, stateError(err))
			return
		}
		encodeJSON(w, http.StatusOK, fixturesAdded{Object: "fixtures.added", Scope: scope, Names: names})
	})
}

type fixtureList struct {
	Object string        `json:"object"` // "list"
	Scope  string        `json:"scope"`
	Data   []fixtureInfo `json:"data"`
}

type fixtureInfo struct {
	Name       string   `json:"name"`
	Origin     string   `json:"origin"` // file or runtime
	Priority   int      `json:"priority"`
	Hits       int64    `json:"hits"`
	Conditions []string `json:"conditions"` // condition names, never their values
}

// handleListFixtures serves GET /_mock/fixtures: the scope's runtime fixtures and the file
// fixtures, with their hit counts.
func handleListFixtures(store state.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := scopeParam(w, r)
		if !ok {
			return
		}
		infos, err := store.ListFixtures(r.Context(), scope)
		if err != nil {
			writeError(w, r, stateError(err))
			return
		}
		list := fixtureList{Object: "list", Scope: scope, Data: []fixtureInfo{}}
		for _, f := range infos {
			conds := f.Conditions
			if conds == nil {
				conds = []string{}
			}
			list.Data = append(list.Data, fixtureInfo{Name: f.Name, Origin: f.Origin.String(), Priority: f.Priority, Hits: f.Hits, Conditions: conds})
		}
		encodeJSON(w, http.StatusOK, list)
	})
}

type fixturesDeleted struct {
	Object  string `json:"object"` // "fixtures.deleted"
	Scope   string `json:"scope"`
	Deleted bool   `json:"deleted"`
}

// handleDeleteFixtures serves DELETE /_mock/fixtures: the runtime fixtures of the scope named by
// ?scope= or x-mock-scope — the unscoped ones when neither names one — go, with the scope's
// reply counters and attempt counts; its journal stays (DELETE /_mock/scopes/{scope} drops that
// too). It is the one way to drop the unscoped fixtures, which no path can name.
func handleDeleteFixtures(store state.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := scopeParam(w, r)
		if !ok {
			return
		}
		deleted, err := store.DropScope(r.Context(), scope, false)
		if err != nil {
			writeError(w, r, stateError(err))
			return
		}
		encodeJSON(w, http.StatusOK, fixturesDeleted{Object: "fixtures.deleted", Scope: scope, Deleted: deleted})
	})
}

type scopeDeleted struct {
	Object  string `json:"object"` // "scope.deleted"
	Scope   string `json:"scope"`
	Deleted bool   `json:"deleted"`
}

// handleDeleteScope serves DELETE /_mock/scopes/{scope}: the scope's runtime fixtures, reply
// counters, attempt counts and journal go.
func handleDeleteScope(store state.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope := mux.Vars(r)["scope"]
		if scope == "" || !journal.ValidScope(scope) {
			writeError(w, r, apierr.New(apierr.InvalidValue, "scope", "A scope is 1 to 128 letters, digits, '.', '_', ':' or '-'."))
			return
		}
		deleted, err := store.DropScope(r.Context(), scope, true)
		if err != nil {
			writeError(w, r, stateError(err))
			return
		}
		encodeJSON(w, http.StatusOK, scopeDeleted{Object: "scope.deleted", Scope: scope, Deleted: deleted})
	})
}

// defaultJournalLimit is how many calls GET /_mock/journal returns without a limit.
const defaultJournalLimit = 100

// handleJournal serves GET /_mock/journal?scope=…&limit=…: the scope's most recent calls, newest
// first, without a word of what was said.
func handleJournal(j state.Store, on bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !on {
			writeError(w, r, apierr.New(apierr.NotFound, "", "The call journal is off (--journal-entries 0)."))
			return
		}
		scope, ok := scopeParam(w, r)
		if !ok {
			return
		}
		limit, ok := limitParam(w, r, defaultJournalLimit, 0)
		if !ok {
			return
		}
		buf := getBuffer()
		defer putBuffer(buf)
		b, err := j.AppendJournal(r.Context(), buf.AvailableBuffer(), scope, limit)
		if err != nil {
			writeError(w, r, stateError(err))
			return
		}
		writeJSONBytes(w, http.StatusOK, append(b, '\n'))
	})
}

// scopeParam is the scope a GET names: ?scope=, or else the x-mock-scope header (read by
// mockGuard). A malformed one is refused without being echoed.
func scopeParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	rec := observability.RecordFrom(r.Context())
	q := r.URL.Query()
	if !q.Has("scope") {
		return rec.Scope, true
	}
	scope := q.Get("scope")
	if !journal.ValidScope(scope) {
		writeError(w, r, apierr.New(apierr.InvalidValue, "scope", "A scope is 1 to 128 letters, digits, '.', '_', ':' or '-'."))
		return "", false
	}
	return scope, true
}

// limitParam is the query's limit, def without one: the OpenAPI's integer from 1 to most (0: no
// most), in digits only — strconv.Atoi alone takes a sign. A bad one is answered 400.
func limitParam(w http.ResponseWriter, r *http.Request, def, most int) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	ok := err == nil && n >= 1 && (most == 0 || n <= most) && strings.Trim(v, "0123456789") == ""
	if !ok {
		msg := "limit must be a positive whole number."
		if most > 0 {
			msg = "limit must be a whole number from 1 to " + strconv.Itoa(most) + "."
		}
		writeError(w, r, apierr.New(apierr.InvalidValue, "limit", msg))
	}
	return n, ok
}
