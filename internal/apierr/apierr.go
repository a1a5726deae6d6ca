// Package apierr owns the service's one error type: the fields of the OpenAI error envelope and
// the closed set of normalized codes. The same code is the error_code metric label, the span's
// error.type and the log's error_code, so the set must stay closed: a code that is not listed
// here cannot be constructed.
package apierr

import (
	"net/http"
	"time"
)

// Code is a normalized error code from the contract's error table.
type Code string

// The contract's codes. Adding one means adding a row to the table in New.
const (
	InvalidJSON          Code = "invalid_json"
	UnsupportedMediaType Code = "unsupported_media_type"
	UnknownParameter     Code = "unknown_parameter"
	UnsupportedParameter Code = "unsupported_parameter"
	UnsupportedValue     Code = "unsupported_value" // a value a reasoning model refuses
	// InvalidEncryptedContent: a reasoning item sent back whose seal does not open.
	InvalidEncryptedContent  Code = "invalid_encrypted_content"
	MissingRequiredParameter Code = "missing_required_parameter"
	InvalidValue             Code = "invalid_value"
	ToolsNotSupported        Code = "tools_not_supported"
	ModelNotFound            Code = "model_not_found"
	ModelNotExecutable       Code = "model_not_executable"
	NotFound                 Code = "not_found"
	UnsupportedSurface       Code = "unsupported_surface"
	MethodNotAllowed         Code = "method_not_allowed"
	RequestTooLarge          Code = "request_too_large"
	RequestTimeout           Code = "request_timeout"
	ContextLengthExceeded    Code = "context_length_exceeded"
	MissingAPIKey            Code = "missing_api_key"
	InvalidAPIKey            Code = "invalid_api_key"
	ServerBusy               Code = "server_busy"
	ShuttingDown             Code = "shutting_down"
	InternalError            Code = "internal_error"
	// StateUnavailable: the request needs the shared state store (--state-store) and it did
	// not answer. Requests that need no shared state are served without it.
	StateUnavailable Code = "state_unavailable"
	// StreamTimeout ends a stream that ran past its total duration limit. It only ever appears
	// in an error frame, after the 200 has been sent.
	StreamTimeout Code = "stream_timeout"

	// Fixtures (docs/fixtures.md): strict mode found no fixture for a request; the fixture that
	// matched cannot answer it (a tool the request did not offer, arguments or content that
	// do not fit its schema).
	NoFixtureMatch  Code = "no_fixture_match"
	FixtureMismatch Code = "fixture_mismatch"

	// Simulation: a malformed x-mock-* header, and the faults the mock simulates on request.
	InvalidSimulationHeader Code = "invalid_simulation_header"
	SimulatedRateLimit      Code = "simulated_rate_limit"
	// RateLimitExceeded is a simulated quota's refusal (internal/quota): OpenAI's code, in
	// every dialect's own words.
	RateLimitExceeded Code = "rate_limit_exceeded"
	// ServerIsOverloaded is a simulated model past its capacity and its queue: OpenAI's code,
	// in every dialect's own words (Anthropic's 529 overloaded_error).
	ServerIsOverloaded   Code = "server_is_overloaded"
	SimulatedServerError Code = "simulated_server_error"
	SimulatedUnavailable Code = "simulated_unavailable"
	SimulatedTimeout     Code = "simulated_timeout"
	SimulatedStreamError Code = "simulated_stream_error"

	// Browsers (docs/console.md): a request from a web page on an origin or a site the mock does
	// not answer, and one whose Host is a name the mock does not answer (DNS rebinding).
	OriginNotAllowed Code = "origin_not_allowed"
	HostNotAllowed   Code = "host_not_allowed"
)

// Error types of the OpenAI envelope.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeRateLimit      = "rate_limit_error"
	TypeServer         = "server_error"
)

type row struct {
	status int
	typ    string
}

var table = map[Code]row{
	InvalidJSON:              {http.StatusBadRequest, TypeInvalidRequest},
	UnsupportedMediaType:     {http.StatusUnsupportedMediaType, TypeInvalidRequest},
	UnknownParameter:         {http.StatusBadRequest, TypeInvalidRequest},
	UnsupportedParameter:     {http.StatusBadRequest, TypeInvalidRequest},
	UnsupportedValue:         {http.StatusBadRequest, TypeInvalidRequest},
	InvalidEncryptedContent:  {http.StatusBadRequest, TypeInvalidRequest},
	MissingRequiredParameter: {http.StatusBadRequest, TypeInvalidRequest},
	InvalidValue:             {http.StatusBadRequest, TypeInvalidRequest},
	ToolsNotSupported:        {http.StatusBadRequest, TypeInvalidRequest},
	ModelNotFound:            {http.StatusNotFound, TypeInvalidRequest},
	ModelNotExecutable:       {http.StatusBadRequest, TypeInvalidRequest},
	NotFound:                 {http.StatusNotFound, TypeInvalidRequest},
	UnsupportedSurface:       {http.StatusNotFound, TypeInvalidRequest},
	MethodNotAllowed:         {http.StatusMethodNotAllowed, TypeInvalidRequest},
	RequestTooLarge:          {http.StatusRequestEntityTooLarge, TypeInvalidRequest},
	RequestTimeout:           {http.StatusRequestTimeout, TypeInvalidRequest},
	ContextLengthExceeded:    {http.StatusBadRequest, TypeInvalidRequest},
	MissingAPIKey:            {http.StatusUnauthorized, TypeInvalidRequest},
	InvalidAPIKey:            {http.StatusUnauthorized, TypeInvalidRequest},
	ServerBusy:               {http.StatusTooManyRequests, TypeRateLimit},
	ShuttingDown:             {http.StatusServiceUnavailable, TypeServer},
	InternalError:            {http.StatusInternalServerError, TypeServer},
	StateUnavailable:         {http.StatusServiceUnavailable, TypeServer},
	StreamTimeout:            {http.StatusGatewayTimeout, TypeServer},
	NoFixtureMatch:           {http.StatusBadRequest, TypeInvalidRequest},
	FixtureMismatch:          {http.StatusBadRequest, TypeInvalidRequest},
	InvalidSimulationHeader:  {http.StatusBadRequest, TypeInvalidRequest},
	SimulatedRateLimit:       {http.StatusTooManyRequests, TypeRateLimit},
	RateLimitExceeded:        {http.StatusTooManyRequests, TypeRateLimit},
	ServerIsOverloaded:       {http.StatusServiceUnavailable, TypeServer},
	SimulatedServerError:     {http.StatusInternalServerError, TypeServer},
	SimulatedUnavailable:     {http.StatusServiceUnavailable, TypeServer},
	SimulatedTimeout:         {http.StatusGatewayTimeout, TypeServer},
	SimulatedStreamError:     {http.StatusInternalServerError, TypeServer},
	OriginNotAllowed:         {http.StatusForbidden, TypeInvalidRequest},
	HostNotAllowed:           {http.StatusForbidden, TypeInvalidRequest},
}

// Codes lists every code, so that metrics can be pre-initialised and tests can walk the table.
func Codes() []Code {
	out := make([]Code, 0, len(table))
	for c := range table {
		out = append(out, c)
	}
	return out
}

// Error is the one API error. Message must never contain a value a client sent (message
// text, a header, a field's value): only field paths, catalog model ids and fixed prose.
type Error struct {
	Status  int
	Type    string
	Code    Code
	Param   string // a field path such as messages[2].tool_call_id; empty means null
	Message string
	// RetryAfter is the wait a simulated rate limit or unavailability names in its Retry-After
	// and x-ratelimit-* headers (the error writer sets them, as OpenAI does); 0 for most errors.
	RetryAfter time.Duration
	// Detail is what the dialect that made the error adds to it in its own envelope (Google's
	// QuotaFailure of a quota's refusal): only that dialect's writer reads it; nil for most.
	Detail any
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New builds an Error whose status and type come from the code's row in the table. An unknown
// code is a programming error and becomes internal_error rather than an unlisted label.
func New(code Code, param, message string) *Error {
	r, ok := table[code]
	if !ok {
		code, r = InternalError, table[InternalError]
	}
	return &Error{Status: r.status, Type: r.typ, Code: code, Param: param, Message: message}
}
