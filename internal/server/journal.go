package server

import (
	"net/http"
	"strings"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/dialect"
	"mockgateway/internal/journal"
	"mockgateway/internal/protocol"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// HeaderScope is the header that puts a request in a scope (docs/fixtures.md): its runtime
// fixtures, its replies counters and its journal.
const HeaderScope = "X-Mock-Scope"

// readScope validates the request's scope and gives it to the Record. A scope has the syntax of a
// request id; anything else is refused, never echoed, and never becomes a map key.
func readScope(r *http.Request, rec *observability.Record) *apierr.Error {
	s := r.Header.Get(HeaderScope)
	if s == "" {
		return nil
	}
	if !journal.ValidScope(s) {
		return apierr.New(apierr.InvalidSimulationHeader, HeaderScope, "The "+HeaderScope+" header is malformed: a scope is 1 to 128 letters, digits, '.', '_', ':' or '-'.")
	}
	rec.Scope = s
	return nil
}

// callNote is what the handlers learn of a call for its journal entry beyond the Record: the
// request's shape, once its body decoded, and the simulated limit that refused it. (Here
// rather than on the Record, which every request allocates: a note only journaled calls do.)
type callNote struct {
	shape    journal.Shape
	limitHit string // a quota.Refusals() word: the bucket that refused, or overloaded (noteLimit)
	filed    bool   // the entry is filed already (entryFirst)

	// The call, for file: held here rather than as the deferred call's arguments, which would
	// be slots of v1Guard's frame, below every parked stream (TestParkedStreamStack).
	j   state.Store
	r   *http.Request
	rec *observability.Record
}

// noteShape notes the request's shape, for the journal: what the client sent, not a word of it.
// It is a call of its own so that the Shape it builds, a few hundred bytes, is not a slot of the
// decoding handler's frame, which is on the stack below the decoder's deepest moment — the one
// that sizes the stack a stream parks on (TestParkedStreamStack).
//
//go:noinline
func (n *callNote) noteShape(req *protocol.Request) {
	n.shape = journal.ShapeOf(req)
}

// noteLimit notes for the call's journal entry the simulated limit that refused it: a quota's
// kind (internal/quota) or overloaded, the label the refusals counter gives it. The last one
// noted stands: a gateway policy's fallback that is refused in turn names its own.
func noteLimit(rec *observability.Record, limit string) {
	if n, ok := rec.Note.(*callNote); ok {
		n.limitHit = limit
	}
}

// file files the call in the journal once (journalCall): as v1Guard's deferred call, before
// net/http writes what it holds of the answer — a stream's end, a short answer whole
// (TestStreamEndsInOneWrite) —, or from entryFirst before the body.
func (n *callNote) file() {
	if !n.filed {
		n.filed = true
		journalCall(n.j, n.r, n.rec, n)
	}
}

// journalCall files one /v1 call in the journal from its Record and note.
//
//go:noinline
func journalCall(j state.Store, r *http.Request, rec *observability.Record, note *callNote) {
	fixture := ""
	if rec.Chat && rec.Status == http.StatusOK {
		fixture = "generated"
		if rec.Fixture != "" {
			fixture = rec.Fixture
		}
	}
	j.RecordCall(r.Context(), rec.Scope, journal.Entry{
		RequestID:          rec.RequestID,
		Time:               rec.Start,
		Method:             rec.Method,
		Route:              rec.Route,
		Dialect:            dialectName(rec.Dialect),
		Status:             rec.Status,
		ErrorCode:          rec.ErrorCode,
		Model:              chatOnly(rec.Chat, rec.Model),
		Stream:             rec.Stream,
		Chunks:             rec.Chunks,
		StreamOutcome:      rec.StreamOutcome,
		TimeToFirstChunkMS: journal.Millis(rec.FirstChunk),
		DurationMS:         journal.Millis(time.Since(rec.Start)),
		FinishReason:       rec.FinishReason,
		PromptTokens:       rec.PromptTokens,
		CompletionTokens:   rec.CompletionTokens,
		ReasoningTokens:    rec.ReasoningTokens,
		Fixture:            fixture,
		Fault:              rec.Fault,
		Attempt:            rec.Attempt,
		LimitHit:           note.limitHit,
		QueueMS:            journal.Millis(rec.QueueWait),
		SDK:                journal.SDKOf(r.Header),
		Shape:              note.shape,
	})
}

// dialectName is the name of the dialect that answered the call (the route's, or on a route the
// dialects share, the one the request's headers chose): a constant, never the client's text.
func dialectName(d any) string {
	if dl, ok := d.(dialect.Dialect); ok {
		return dl.Name()
	}
	return ""
}

func chatOnly(chat bool, s string) string {
	if !chat {
		return ""
	}
	return s
}

// entryFirst files a scoped call's entry before its answer's body is written, unless the answer
// is an event stream (whose end net/http writes after the handler, and so after the deferred
// file). A JSON answer is written in one Write, which net/http passes straight to the
// connection when it is longer than its buffers: a client could hold it whole, and read the
// journal, before the handler had returned. Only scoped calls take this writer: they are the
// calls whose entries the shared store writes at once; a read of the unscoped journal asks for
// the writers' queues instead (docs/fixtures.md, "Shared state").
type entryFirst struct {
	http.ResponseWriter
	note *callNote
}

// serveEntryFirst serves a scoped call through an entryFirst: a call of its own, so that
// v1Guard's frame, below every parked stream, stays as it was (TestParkedStreamStack).
//
//go:noinline
func (n *callNote) serveEntryFirst(next http.Handler, w http.ResponseWriter) {
	next.ServeHTTP(&entryFirst{ResponseWriter: w, note: n}, n.r)
}

func (w *entryFirst) Write(p []byte) (int, error) {
	if !w.note.filed && !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		if w.note.rec.Status == 0 {
			w.ResponseWriter.WriteHeader(http.StatusOK) // what Write would do: the entry's status
		}
		w.note.file()
	}
	return w.ResponseWriter.Write(p)
}

func (w *entryFirst) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController calls: a stream must learn that its flush failed.
func (w *entryFirst) FlushError() error {
	if f, ok := w.ResponseWriter.(interface{ FlushError() error }); ok {
		return f.FlushError()
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *entryFirst) Unwrap() http.ResponseWriter { return w.ResponseWriter }
