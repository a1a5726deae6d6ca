package journal

import (
	"math"
	"time"

	"mockgateway/observability"
)

// Entry is one call as the journal shows it. Its strings are the server's bounded values (route
// templates, catalog ids, error codes, outcomes, fixture names), the allowlisted SDK identity and
// the Shape's protocol names: nothing a client wrote into a prompt, a tool or a header outside
// the allowlist. Members that do not apply to a call (a stream's chunks on a JSON answer, usage
// on an error) are left zero and omitted from its JSON.
type Entry struct {
	RequestID string `json:"request_id"`
	// Time is when the request started, written in RFC 3339 (UTC) with milliseconds.
	Time time.Time `json:"time"`
	// Scope is the scope the journal filed the entry under ("" unscoped): Add sets it.
	Scope  string `json:"scope,omitempty"`
	Method string `json:"method"`
	Route  string `json:"route"` // the route template, never the path sent
	// Dialect is the display name of the dialect that answered (internal/dialect's Name), a
	// constant of the server's; "" for a call of none.
	Dialect string `json:"dialect,omitempty"`
	Status  int    `json:"status"`
	// ErrorCode is the normalized error code, "" on success.
	ErrorCode string `json:"error_code,omitempty"`
	// Model is the catalog id (or "other"), for chat calls.
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream,omitempty"`
	// Chunks, StreamOutcome and TimeToFirstChunkMS are a stream's.
	Chunks             int     `json:"chunks,omitempty"`
	StreamOutcome      string  `json:"stream_outcome,omitempty"`
	TimeToFirstChunkMS float64 `json:"time_to_first_chunk_ms,omitempty"`
	DurationMS         float64 `json:"duration_ms"`
	// FinishReason is the first choice's.
	FinishReason     string `json:"finish_reason,omitempty"`
	PromptTokens     int    `json:"prompt_tokens,omitempty"`
	CompletionTokens int    `json:"completion_tokens,omitempty"`
	ReasoningTokens  int    `json:"reasoning_tokens,omitempty"` // of CompletionTokens
	// Fixture is the name of the fixture that answered, or "generated".
	Fixture string `json:"fixture,omitempty"`
	// Fault is the simulated fault's kind, and Attempt the call's number in its simulated
	// attempt sequence (1 for the first).
	Fault   string `json:"fault,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// LimitHit is the simulated limit that refused the call, in the words of the refusals
	// counter's limit label: requests, tokens, daily, input_tokens or output_tokens (its quota), overloaded (its model's
	// capacity and queue were full). QueueMS is how long it waited for a place in its model's
	// capacity. Neither says whose quota it was: the client key is never part of an entry.
	LimitHit string  `json:"limit_hit,omitempty"`
	QueueMS  float64 `json:"queue_ms,omitempty"`

	SDK SDK `json:"sdk,omitzero"`
	// Shape is the request's; zero (and omitted) when the call was not a chat request or its
	// body did not decode.
	Shape Shape `json:"shape,omitzero"`
}

// timeLayout is RFC 3339 with milliseconds, always three digits so that times sort as text.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the Entry with its time in timeLayout (time.Time's own is nanoseconds),
// the members in the order of the struct, request_id and time first; AppendJSON writes it.
// encoding/json reads it back into an Entry unchanged but for the time's precision.
func (e Entry) MarshalJSON() ([]byte, error) { return e.AppendJSON(make([]byte, 0, 512)), nil }

// Millis is d in milliseconds, to the microsecond: the unit of DurationMS, TimeToFirstChunkMS
// and QueueMS (and of the access log's duration_ms).
func Millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// Bounds of an entry's strings, in bytes. Every value the server gives is far below them: they
// are here so that the journal's memory stays bounded by its configuration whatever a caller
// passes, not to shape values.
const (
	maxIDBytes    = 128 // request ids and scopes: the request-id syntax's length
	maxValueBytes = 128 // routes, dialects, models, codes, outcomes, reasons, fixture names, faults, limits
)

// bound cuts e's strings to the bounds above and clears non-finite numbers (which JSON cannot
// carry). A cut value goes through observability.Sanitize, which copies it, so that a long
// value's backing array is not kept alive either. For values within bounds it is a few length
// checks.
func (e *Entry) bound() {
	clip(&e.RequestID, maxIDBytes)
	for _, s := range [...]*string{&e.Method, &e.Route, &e.Dialect, &e.ErrorCode, &e.Model, &e.StreamOutcome,
		&e.FinishReason, &e.Fixture, &e.Fault, &e.LimitHit, &e.Shape.ToolChoice, &e.Shape.ResponseFormat,
		&e.Shape.MaxTokensParam} {
		clip(s, maxValueBytes)
	}
	for i, sh := range sdkHeaders {
		clip(e.SDK.slot(i), sh.max)
	}
	for _, f := range [...]*float64{&e.DurationMS, &e.TimeToFirstChunkMS, &e.QueueMS} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
}

func clip(s *string, max int) {
	if len(*s) > max {
		*s = observability.Sanitize(*s, max)
	}
}
