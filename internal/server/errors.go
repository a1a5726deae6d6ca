package server

import (
	"errors"
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/observability"
)

// errorEnvelope is the OpenAI error body: always all four keys, param null when empty.
type errorEnvelope struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func envelopeOf(e *apierr.Error) errorEnvelope {
	b := errorBody{Message: e.Message, Type: e.Type, Code: string(e.Code)}
	if e.Param != "" {
		p := e.Param
		b.Param = &p
	}
	return errorEnvelope{Error: b}
}

// internalError is what any error that is not an *apierr.Error becomes. Its text is fixed: a Go
// error string from a library could carry anything, so it is neither sent nor logged.
func internalError() *apierr.Error {
	return apierr.New(apierr.InternalError, "", "The server had an unexpected error; the x-request-id header identifies it in the service's logs and traces.")
}

// writeError is the service's one error writer: it records the normalized code for the span,
// the metrics and the access log, and writes the envelope with the code's status.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *apierr.Error
	if !errors.As(err, &e) {
		e = internalError()
	}
	observability.RecordFrom(r.Context()).SetError(string(e.Code))
	faultHeaders(w.Header(), e)
	if e.Status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	if anthropicRequest(r) {
		writeAnthropicError(w, r, e) // the Messages dialect's envelope (errors_anthropic.go)
		return
	}
	encodeJSON(w, e.Status, envelopeOf(e))
}

// writeInternalError is handed to the middleware chain for recovered panics.
func writeInternalError(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, internalError())
}
