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

// Google's API refuses a key that is not one with 400 INVALID_ARGUMENT and its ErrorInfo, and a
// call without any key with 403 PERMISSION_DENIED, in these words (the SDKs show the message).
// The 403 carries the envelope's empty details, as every error of the dialect does.
const (
	keyInvalid = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},` +
		`{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key not valid. Please pass a valid API key."}]}}` + "\n"
	keyMissing = `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED","details":[]}}` + "\n"
)

// Error is e in Google's envelope, with its status; a refused key with Google's own status and
// body (the code stays invalid_api_key or missing_api_key).
func (*Dialect) Error(buf []byte, e *apierr.Error, _ string) (int, []byte) {
	switch e.Code {
	case apierr.InvalidAPIKey:
		return http.StatusBadRequest, append(buf, keyInvalid...)
	case apierr.MissingAPIKey:
		return http.StatusForbidden, append(buf, keyMissing...)
	}
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
