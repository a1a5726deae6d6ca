package google

import (
	"net/http"
	"strconv"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonenc"
)

// Google's error envelope: the service's error writer hands it every error of a request of this
// dialect. The code stays the closed set's (the metric label, the span's error.type, the log's
// error_code); only the wire form is Google's — {"error":{"code","message","status","details"}}
// with the google.rpc status of the HTTP status, and a RetryInfo detail on a 429, whose
// retryDelay is the retry-after header's (Gemini CLI and the SDKs read either).

// googleStatus is the google.rpc status Google's API answers an HTTP status with.
func googleStatus(e *apierr.Error) string {
	switch e.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed:
		return "UNIMPLEMENTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if e.Status >= 500 {
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// Error is e in Google's envelope, with its status. Google's API refuses a bad key with 400
// INVALID_ARGUMENT; the mock keeps 401 UNAUTHENTICATED, which the SDKs treat alike.
func (*Dialect) Error(buf []byte, e *apierr.Error, _ string) (int, []byte) {
	return e.Status, append(appendError(buf, e), '\n')
}

// AppendStreamError ends a stream that failed, as Google's do: a data line holding the error.
func (*Dialect) AppendStreamError(buf []byte, e *apierr.Error, _ int) []byte {
	buf = append(buf, "data: "...)
	return append(appendError(buf, e), separator...)
}

// appendError appends {"error":{…}}.
func appendError(buf []byte, e *apierr.Error) []byte {
	buf = append(buf, `{"error":{"code":`...)
	buf = strconv.AppendInt(buf, int64(e.Status), 10)
	buf = append(buf, `,"message":`...)
	buf = jsonenc.AppendString(buf, e.Message)
	buf = append(buf, `,"status":"`...)
	buf = append(buf, googleStatus(e)...)
	buf = append(buf, `","details":[`...)
	if f, ok := e.Detail.(*quotaFailure); ok {
		buf = appendQuotaDetails(buf, f)
	} else if e.Status == http.StatusTooManyRequests {
		buf = append(buf, `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
		buf = strconv.AppendInt(buf, int64(retrySeconds(e)), 10)
		buf = append(buf, `s"}`...)
	}
	return append(buf, "]}}"...)
}

// retrySeconds is a 429's wait in whole seconds, as its retry-after header says it: a simulated
// rate limit's own wait (0 when it names none), else the 1 the error writer sets.
func retrySeconds(e *apierr.Error) int {
	secs := int(e.RetryAfter.Round(time.Second) / time.Second)
	if e.Code == apierr.SimulatedRateLimit && e.RetryAfter == 0 {
		return 0
	}
	return max(1, secs)
}
