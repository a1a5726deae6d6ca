package server

import (
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
	"mockgateway/observability"
)

// Anthropic's error envelope, the Messages dialect's one error writer: writeError hands it every
// error of an Anthropic request (anthropicRequest). The code stays the closed set's — the metric
// label, the span's error.type and the log's error_code are the same as in the other dialects;
// only the wire form is Anthropic's: {"type":"error","error":{"type","message"},"request_id"},
// with Anthropic's error types and statuses.

// anthropicOverloaded is Anthropic's status for an overloaded API, which its SDKs retry.
const anthropicOverloaded = 529

// anthropicError is an error's status and type in Anthropic's API: the type follows the status
// (Anthropic's errors page), and the simulated unavailability is Anthropic's overload, 529.
func anthropicError(e *apierr.Error) (int, string) {
	if e.Code == apierr.SimulatedUnavailable {
		return anthropicOverloaded, "overloaded_error"
	}
	switch e.Status {
	case http.StatusUnauthorized:
		return e.Status, "authentication_error"
	case http.StatusForbidden:
		return e.Status, "permission_error"
	case http.StatusNotFound:
		return e.Status, "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return e.Status, "request_too_large"
	case http.StatusTooManyRequests:
		return e.Status, "rate_limit_error"
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return e.Status, "timeout_error"
	}
	if e.Status >= 500 {
		return e.Status, "api_error"
	}
	return e.Status, "invalid_request_error"
}

// writeAnthropicError writes e in Anthropic's envelope, with request-id beside x-request-id.
// writeError has recorded its code and set its fault headers.
func writeAnthropicError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	setRequestIDHeader(w)
	status, typ := anthropicError(e)
	buf := getBuffer()
	defer putBuffer(buf)
	b := append(buf.AvailableBuffer(), `{"type":"error","error":`...)
	b = protocol.AppendAnthropicError(b, typ, e.Message)
	b = protocol.AppendMember(b, "request_id", observability.RecordFrom(r.Context()).RequestID)
	buf.Write(append(b, "}\n"...))
	writeJSONBytes(w, status, buf.Bytes())
}

// anthropicErrorEvent ends a Messages stream that failed, as Anthropic ends one: an error event,
// appended after what is pending (writeFinal writes them).
func (s *sseWriter) anthropicErrorEvent(e *apierr.Error) {
	_, typ := anthropicError(e)
	b := protocol.AppendAnthropicEventStart(s.buf, "error")
	b = append(b, `,"error":`...)
	b = protocol.AppendAnthropicError(b, typ, e.Message)
	s.buf = protocol.AppendEventEnd(b)
	s.pendingLen = len(s.buf)
}
