// Package dialect is the seam between the chat path and the APIs it speaks. A Dialect is one
// API's wire form — OpenAI's Chat Completions (dialect/chat), the Responses API
// (dialect/responses), Anthropic's Messages (dialect/anthropic), Google's Gemini API
// (dialect/google) — and owns everything that
// differs between them: decoding a request into the one protocol.Request, the JSON answer, the
// stream's events, the error envelope and its statuses, its headers, the model list's shape.
//
// The route chooses a request's dialect once (internal/server's routes.go) and the request's
// Record carries it; the handler, the stream loop, the error writer and the guards call it and
// never ask which dialect a request is. What every dialect shares — the request, the generated
// answer (generate), the simulation, the fixtures, the telemetry — knows of no dialect at all.
// docs/dialects.md is the way to add one.
package dialect

import (
	"net/http"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/protocol"
	"mockgateway/internal/quota"
)

// Dialect is one API's wire form of the chat path. Its methods are called from many requests at
// once: a Dialect holds only what it was built with.
type Dialect interface {
	// Name is the dialect's display name, as the journal records it and the console shows it.
	Name() string
	// Marker is the request header (in its canonical form) that chooses this dialect on the
	// routes the dialects share (the model list, an unknown path), as every client of the API
	// sends it; "" when the dialect is chosen by its own routes only.
	Marker() string
	// Key is the key r carries where this dialect's clients put it besides Authorization: Bearer
	// (a header of its own, a query parameter); "" when it carries none there. The key is a
	// credential: it is compared and hashed, never recorded.
	Key(r *http.Request) string
	// Headers sets what every answer of the dialect carries besides the service's own: its
	// name for the request id. It is called before anything is written, the error too.
	Headers(h http.Header)
	// AnswerHeaders sets what an answer the model made carries (not a refusal before it).
	AnswerHeaders(h http.Header)
	// ProcessingHeader names the header in which the provider's answer gives the time it took
	// to start it, in whole milliseconds (set as the answer starts); "" when it sends none.
	ProcessingHeader() string

	// QuotaHeaders sets the provider's rate-limit headers on an answer of a model with limits
	// (internal/quota) — a refusal by them too, with what tells a client when to retry — as
	// the provider shows them on such an answer (none at all is an answer). now is the
	// answer's time, for a reset given as a time.
	QuotaHeaders(h http.Header, s *quota.Status, now time.Time)
	// QuotaError is a refusal by the quota (s.Refused set) in the provider's words: model is
	// the requested model, org the organization the client key stands for (quota.Org).
	QuotaError(s *quota.Status, model string, org quota.Org) *apierr.Error
	// OverloadError is a model past its capacity and its queue (catalog capacity, queue)
	// refused as the provider refuses an overloaded model, with the headers it sends beside.
	OverloadError(h http.Header) *apierr.Error

	// Admit refuses a request that lacks what the dialect requires beyond its body (a header).
	// It is called before Decode, a call of its own: the decoder's deepest moment sizes the
	// stack a stream parks on (TestParkedStreamStack), and Decode adds as little to it as it can.
	Admit(r *http.Request) *apierr.Error
	// Decode decodes the body, strictly, into the shared request; r is the request it came
	// with (a dialect may read its path).
	Decode(r *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error)
	// OffersToolsOnly reports whether the request's tools are only offered, which a model
	// without tools may take and never call; false where such a request is refused.
	OffersToolsOnly(req *protocol.Request) bool
	// Check refuses what the API refuses of the request on the model that is to answer it, in
	// its words: a budget over the model's output limit (a budget within it is accepted however
	// far above --max-tokens, the ceiling: the answer stops there as the budget would stop it),
	// a prompt that with its budget overflows the model's context window (promptTokens, as the
	// usage counts them), and for a reasoning model its rules — parameters, and reasoning sent
	// back that this mock did not seal for this model.
	Check(model *catalog.Model, req *protocol.Request, promptTokens, ceiling int) *apierr.Error
	// ReasoningTokens is what a reasoning model spends reasoning per choice of the request.
	ReasoningTokens(req *protocol.Request, hit *fixtures.Hit) int
	// Reply is the call's answer in the dialect, made from what generate made of the request
	// (c.Result): it gives c its id, and adds what the dialect answers with beside the result
	// (a reasoning item, a thinking block).
	Reply(c *Call, req *protocol.Request, hit *fixtures.Hit, seed uint64) Reply

	// Error is the dialect's answer to a refused request: its status and its body, appended to
	// buf and ending with a newline. The code stays the closed set's (apierr): only the wire
	// form is the dialect's.
	Error(buf []byte, e *apierr.Error, requestID string) (status int, body []byte)
	// AppendStreamError appends what ends a stream that failed (seq: the events sent so far),
	// all that is written after it.
	AppendStreamError(buf []byte, e *apierr.Error, seq int) []byte

	// Models is the model list in the dialect's shape, made once from the catalog.
	Models(c *catalog.Catalog) Models
}

// Reply is one call's answer in its dialect, as JSON or as a stream.
type Reply interface {
	// JSON is the JSON answer.
	JSON() Body
	// Events is the stream's answer, as the events still to come. h holds the stream's headers
	// (text/event-stream), which the dialect may change before anything is written.
	Events(h http.Header) Events
}

// Body is a JSON answer that encodes itself by appending, without reflection, and knows about
// how long it is.
type Body interface {
	AppendJSON([]byte) []byte
	SizeHint() int
}

// Models is a dialect's model list, made once: the catalog cannot change while serving.
type Models interface {
	// List is the list's body for r (a dialect may page it).
	List(r *http.Request) []byte
	// Model is one model's body; false for a model that is not listed.
	Model(id string) ([]byte, bool)
}

// Counter is a dialect that counts a request's tokens at a route of its own (Anthropic's
// count_tokens).
type Counter interface {
	Dialect
	// DecodeCount decodes a counting request into the shared request, once admitted (Admit).
	DecodeCount(r *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error)
	// AppendCount appends the answer of a count: the prompt's tokens, as the answer's usage
	// counts them.
	AppendCount(buf []byte, tokens int) []byte
}

// Set is the dialects and the one that answers on the routes they share.
type Set struct {
	Default Dialect   // OpenAI's: what a request without a marker speaks
	Marked  []Dialect // the dialects with a Marker
}

// Choose is the dialect of a request on a shared route: the first whose marker it carries, else
// the default.
func (s *Set) Choose(h http.Header) Dialect {
	for _, d := range s.Marked {
		if v := h[d.Marker()]; len(v) > 0 && v[0] != "" { // an empty header marks nothing
			return d
		}
	}
	return s.Default
}

// ToolsOnlyOffered reports whether a request's tools are only offered — its tool choice is
// auto, none or unset — so that no call is required of them: what the dialects whose clients
// offer their tools to every model (Claude Code, Gemini CLI) answer in OffersToolsOnly.
func ToolsOnlyOffered(req *protocol.Request) bool {
	m := req.ToolChoice.Mode
	return m == "" || m == protocol.ToolChoiceAuto || m == protocol.ToolChoiceNone
}
