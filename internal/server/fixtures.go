package server

import (
	"context"
	"errors"
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// script finds the fixture that answers the request (docs/fixtures.md), or nil when the model's
// own generated answer does. A strict miss is 400 no_fixture_match; a fixture whose reply does
// not fit the request (a tool it did not offer, arguments or content outside its schema), or
// whose regexes the request's budget cannot cover, is 400 fixture_mismatch — so SDKs do not
// retry either. A client that leaves meanwhile stops the matching: errClientLeft, and nothing
// is written.
//
//go:noinline
func (h *chatHandler) script(r *http.Request, req *protocol.Request, rec *observability.Record) (*fixtures.Hit, error) {
	hit, ok, miss, err := h.state.Match(r.Context(), fixtures.Query{Request: req, Header: r.Header, Scope: rec.Scope, Context: r.Context()})
	if errors.Is(err, context.Canceled) {
		rec.Status = observability.StatusClientClosed
		return nil, errClientLeft
	}
	if err != nil {
		return nil, stateError(err)
	}
	if miss != nil {
		return nil, scriptError(rec, miss.AsError())
	}
	if !ok {
		return nil, nil
	}
	if e := h.fixtures.Check(hit, req); e != nil {
		return nil, scriptError(rec, e)
	}
	rec.Fixture = hit.Name
	h.metrics.ObserveFixture(hit.Label)
	return &hit, nil
}

// errClientLeft says the client left while fixtures were matched: there is no one to answer.
var errClientLeft = errors.New("the client left")

// scriptError is fixtureError, or errClientLeft (recorded as 499) when the client has left.
func scriptError(rec *observability.Record, e *fixtures.Error) error {
	if e.Code == fixtures.CodeClientGone {
		rec.Status = observability.StatusClientClosed
		return errClientLeft
	}
	return fixtureError(e)
}

// stateError is an error of the state store in the envelope: a refused Add (its message names
// fixtures, fields and limits, never the body's text), or 503 state_unavailable.
func stateError(err error) *apierr.Error {
	if e, ok := err.(*fixtures.Error); ok {
		return fixtureError(e)
	}
	if errors.Is(err, state.ErrBusy) {
		return apierr.New(apierr.ServerBusy, "", "Too many reads of the unscoped journal are waiting for the replicas (--journal-flush-reads); retry after the time in the retry-after header.")
	}
	if errors.Is(err, state.ErrUnavailable) {
		return apierr.New(apierr.StateUnavailable, "", "The shared state store (--state-store) is not answering: requests that need a scope, runtime fixtures, a reply position, an attempt count, a quota or the journal's list fail until it returns; other requests are served.")
	}
	return apierr.New(apierr.InvalidValue, "", "The fixtures could not be added.")
}

// fixtureError is a fixtures error in the contract's envelope. Its message names fixtures,
// condition names and schema paths, never request or reply text.
func fixtureError(e *fixtures.Error) *apierr.Error {
	code := apierr.InvalidValue
	switch e.Code {
	case fixtures.CodeNoFixtureMatch:
		code = apierr.NoFixtureMatch
	case fixtures.CodeFixtureMismatch:
		code = apierr.FixtureMismatch
	}
	return apierr.New(code, e.Param, e.Message)
}

// scripted is a fixture's reply as the generator takes it.
func scripted(r fixtures.Reply) generate.Scripted {
	s := generate.Scripted{Content: r.Content, Refusal: r.Refusal, FinishReason: r.FinishReason}
	for _, tc := range r.ToolCalls {
		s.ToolCalls = append(s.ToolCalls, generate.ScriptedCall{Name: tc.Name, Arguments: tc.Arguments})
	}
	if u := r.Usage; u != nil {
		s.Usage = &generate.ScriptedUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	}
	return s
}
