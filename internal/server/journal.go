package server

import (
	"net/http"
	"time"

	"mockgateway/internal/apierr"
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
// request's shape, once its body decoded.
type callNote struct {
	shape journal.Shape
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

// journalCall files one /v1 call in the journal from its Record and note, once it has been
// answered.
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
	j.RecordCall(rec.Scope, journal.Entry{
		RequestID:          rec.RequestID,
		Time:               rec.Start,
		Method:             rec.Method,
		Route:              rec.Route,
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
		SDK:                journal.SDKOf(r.Header),
		Shape:              note.shape,
	})
}

func chatOnly(chat bool, s string) string {
	if !chat {
		return ""
	}
	return s
}
