package observability

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Record is what one request did, filled in by the middleware and the handlers and read once
// when the request ends by the tracing, metrics and access-log middleware. It holds only bounded
// values (templates, catalog ids, codes, counts), never client text, so anything that reads it
// is safe to export.
//
// A Record belongs to its request's goroutine: streams run inside the handler, so every write
// happens before the middleware reads it and no lock is needed.
type Record struct {
	Start     time.Time
	RequestID string
	Method    string // normalized: a known HTTP method or "_OTHER"
	Route     string // route template, or RouteUnmatched
	Status    int
	ErrorCode string // normalized error code; "" on success

	// Chat requests only. (The two bools side by side, packed: a Record is part of every
	// request's allocation, request.go.)
	Chat             bool
	Stream           bool
	Model            string // catalog id or "other"
	StreamOutcome    string
	Chunks           int
	PromptTokens     int
	CompletionTokens int
	ReasoningTokens  int // of CompletionTokens: a reasoning model's
	FinishReason     string

	// Fixtures and the journal: the request's scope (x-mock-scope, validated), the fixture that
	// answered (its name; "" when generated), the simulated attempt's number, and a stream's
	// time to first chunk.
	Scope      string
	Fixture    string
	Attempt    int
	FirstChunk time.Duration

	// Simulation: the fault served (a kind, or ""), and a gateway policy's reported decision.
	// QueueWait is how long the request waited for its model's capacity (catalog capacity).
	Fault           string
	QueueWait       time.Duration
	GatewayAttempts int
	ServedBy        string // a catalog id
	FallbackFrom    string // a catalog id

	// Note is the handler chain's own note on the call, opaque here: the /v1 guard's journal
	// note, which the handlers fill in. Kept on the Record rather than in a derived context,
	// which would cost the request two allocations (BenchmarkChatJSON).
	Note any
	// Dialect is the request's dialect (internal/dialect), opaque here: chosen once, by its route
	// or, on a route the dialects share, by its headers; the error writer and the guards ask it
	// how to answer.
	Dialect any
	// SpanName is the server span's name when the route made it in advance ("" for the chain
	// to make): "METHOD template", concatenated once per route instead of once per request.
	SpanName string

	// exemplar caches the trace-id exemplar labels: every metric of the request carries the
	// same ones, and building them once saves an allocation per observation.
	exemplar        prometheus.Labels
	exemplarChecked bool
	// inFlight: whether the in-flight gauge of metrics counts the request now (leaveInFlight).
	inFlight bool
	handling *atomic.Int64 // the chain's count of requests being handled (enter), or nil

	// metrics is the chain's Metrics (never nil in a chain), for the stream lifecycle and the
	// Observe methods when their caller has none.
	metrics *Metrics
}

// RouteUnmatched is the route label of requests that matched no route.
const RouteUnmatched = "unmatched"

// recordKey is the context key of the Record: the chain's request context answers it
// (request.Value).
type recordKey struct{}

// RecordFrom returns the request's Record. Outside the middleware chain (unit tests of a bare
// handler) it returns a detached Record, so handlers never need a nil check. It is not inlined:
// inlined, that fallback Record would take a slot of ~250 bytes in every caller's stack frame,
// and those frames are what a parked stream holds.
//
//go:noinline
func RecordFrom(ctx context.Context) *Record {
	if r, ok := ctx.Value(recordKey{}).(*Record); ok {
		return r
	}
	return &Record{}
}

// SetRoute is called by the router once a route matched, with its template.
func (r *Record) SetRoute(template string) { r.Route = template }

// SetError records the normalized error code of the response.
func (r *Record) SetError(code string) { r.ErrorCode = code }

// ErrorLabel is the error_code label value: the code, or "none" on success.
func (r *Record) ErrorLabel() string {
	if r.ErrorCode == "" {
		return "none"
	}
	return r.ErrorCode
}

// normalizeMethod bounds the method label: clients can send any token as a method.
func normalizeMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}
