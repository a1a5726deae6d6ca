package anthropic

import (
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
)

// Anthropic's error envelope: the service's error writer hands it every error of a request of
// this dialect. The code stays the closed set's — the metric label, the span's error.type and
// the log's error_code are the same as in the other dialects; only the wire form is
// Anthropic's: {"type":"error","error":{"type","message"},"request_id"}, with Anthropic's error
// types and statuses.

// anthropicOverloaded is Anthropic's status for an overloaded API, which its SDKs retry.
const anthropicOverloaded = 529

// anthropicError is an error's status and type in Anthropic's API: the type follows the status
// (Anthropic's errors page), and the simulated unavailability and an overloaded model are
// Anthropic's overload, 529.
func anthropicError(e *apierr.Error) (int, string) {
	if e.Code == apierr.SimulatedUnavailable || e.Code == apierr.ServerIsOverloaded {
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

// Error is e in Anthropic's envelope, with its status.
func (*Dialect) Error(buf []byte, e *apierr.Error, requestID string) (int, []byte) {
	status, typ := anthropicError(e)
	b := append(buf, `{"type":"error","error":`...)
	b = protocol.AppendAnthropicError(b, typ, e.Message)
	b = protocol.AppendMember(b, "request_id", requestID)
	return status, append(b, "}\n"...)
}

// AppendStreamError ends a Messages stream that failed, as Anthropic ends one: an error event.
func (*Dialect) AppendStreamError(buf []byte, e *apierr.Error, _ int) []byte {
	_, typ := anthropicError(e)
	b := protocol.AppendAnthropicEventStart(buf, "error")
	b = append(b, `,"error":`...)
	b = protocol.AppendAnthropicError(b, typ, e.Message)
	return protocol.AppendEventEnd(b)
}
