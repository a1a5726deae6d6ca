package server

import (
	"errors"
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/dialect"
	"mockgateway/internal/dialect/chat"
	"mockgateway/observability"
)

// internalError is what any error that is not an *apierr.Error becomes. Its text is fixed: a Go
// error string from a library could carry anything, so it is neither sent nor logged.
func internalError() *apierr.Error {
	return apierr.New(apierr.InternalError, "", "The server had an unexpected error; the x-request-id header identifies it in the service's logs and traces.")
}

// writeError is the service's one error writer: it records the normalized code for the span,
// the metrics and the access log, and writes the error as the request's dialect does (its
// envelope and status: dialect.Dialect's Error) with the code's headers.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *apierr.Error
	if !errors.As(err, &e) {
		e = internalError()
	}
	rec := observability.RecordFrom(r.Context())
	rec.SetError(string(e.Code))
	h := w.Header()
	faultHeaders(h, e)
	if e.Status == http.StatusTooManyRequests && h.Get("Retry-After") == "" {
		h.Set("Retry-After", "1")
	}
	d := dialectOf(rec)
	d.Headers(h)
	buf := getBuffer()
	defer putBuffer(buf)
	status, body := d.Error(buf.AvailableBuffer(), e, rec.RequestID)
	writeJSONBytes(w, status, body)
}

// writeInternalError is handed to the middleware chain for recovered panics.
func writeInternalError(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, internalError())
}

// dialectOf is the request's dialect, which its route chose (routed) or, on a route the
// dialects share, its headers (frontGuard). A request that has met neither — a handler served
// on its own, or a panic before the front — is answered as OpenAI answers.
func dialectOf(rec *observability.Record) dialect.Dialect {
	if d, ok := rec.Dialect.(dialect.Dialect); ok {
		return d
	}
	return chat.New(nil)
}
