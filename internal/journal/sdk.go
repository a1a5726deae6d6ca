package journal

import (
	"net/http"

	"mockgateway/observability"
)

// SDK is the client's identity, from a fixed allowlist of headers: the x-stainless-* headers
// that the Stainless-generated SDKs (openai-python, openai-node, openai-go, …) send on every
// call, and the User-Agent. No other header's value is ever read.
type SDK struct {
	Lang           string `json:"lang,omitempty"`            // x-stainless-lang
	PackageVersion string `json:"package_version,omitempty"` // x-stainless-package-version
	OS             string `json:"os,omitempty"`              // x-stainless-os
	Runtime        string `json:"runtime,omitempty"`         // x-stainless-runtime
	RuntimeVersion string `json:"runtime_version,omitempty"` // x-stainless-runtime-version
	// RetryCount is x-stainless-retry-count as sent ("0" on a first try): kept as text, like
	// the others, so that a malformed value is shown rather than guessed at.
	RetryCount string `json:"retry_count,omitempty"`
	UserAgent  string `json:"user_agent,omitempty"` // cut to 128 characters, as in spans
}

// The cuts, in characters. The user agent's is the spans' (user_agent.original); the
// x-stainless values are short tokens and versions, so 64 is generous.
const (
	maxUserAgent = 128
	maxSDKValue  = 64
)

// sdkHeader is one allowlisted header: its canonical name (how net/http keys a request's
// headers) and its cut. Its value goes to SDK.slot of its index.
type sdkHeader struct {
	name string
	max  int
}

// sdkHeaders is the allowlist, in SDK's member order. TestSDKHeadersAreCanonical holds the names
// to their canonical form: a map lookup with any other spelling would never match.
var sdkHeaders = [...]sdkHeader{
	{"X-Stainless-Lang", maxSDKValue},
	{"X-Stainless-Package-Version", maxSDKValue},
	{"X-Stainless-Os", maxSDKValue},
	{"X-Stainless-Runtime", maxSDKValue},
	{"X-Stainless-Runtime-Version", maxSDKValue},
	{"X-Stainless-Retry-Count", maxSDKValue},
	{"User-Agent", maxUserAgent},
}

// slot is the member of sdkHeaders[i]. (A switch, not a table of functions: through a function
// value the SDK being built would escape to the heap.)
func (s *SDK) slot(i int) *string {
	switch i {
	case 0:
		return &s.Lang
	case 1:
		return &s.PackageVersion
	case 2:
		return &s.OS
	case 3:
		return &s.Runtime
	case 4:
		return &s.RuntimeVersion
	case 5:
		return &s.RetryCount
	}
	return &s.UserAgent
}

// SDKOf reads the allowlisted headers of h (the first value of each), each passed through
// observability.Sanitize: cut to its length, and non-printable characters replaced, so that a
// value can neither be long nor forge a line. It allocates only for a value that needs cutting
// or cleaning.
func SDKOf(h http.Header) SDK {
	var s SDK
	for i, sh := range sdkHeaders {
		// Indexed directly: the keys of a request's header are canonical already (net/http
		// makes them so), and Get would canonicalize each name again.
		if v := h[sh.name]; len(v) > 0 && v[0] != "" {
			*s.slot(i) = observability.Sanitize(v[0], sh.max)
		}
	}
	return s
}
