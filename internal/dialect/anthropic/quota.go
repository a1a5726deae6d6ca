package anthropic

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/quota"
)

// QuotaHeaders sets Anthropic's anthropic-ratelimit-* headers for the requests and the tokens
// the model limits, each reset as the RFC 3339 time the bucket is full again: the input and
// the output tokens from their own buckets (itpm, otpm), or from the one token bucket (tpm)
// when the model has no bucket of theirs; the tokens, as Anthropic's do, from the most
// restrictive of the token buckets in effect. A refusal adds retry-after (whole seconds) and
// x-should-retry, which the SDKs obey: true, but false for a request no wait would admit.
func (*Dialect) QuotaHeaders(h http.Header, s *quota.Status, now time.Time) {
	var hv quota.HeaderValues
	set := func(limit, remaining, reset string, b quota.Bucket) {
		if b.Limit == 0 {
			return
		}
		hv.Int(limit, int64(b.Limit))
		hv.Int(remaining, int64(b.Remaining))
		hv.Time(reset, now.Add(b.Reset).UTC(), time.RFC3339)
	}
	in, out := s.InputTokens, s.OutputTokens
	if in.Limit == 0 {
		in = s.Tokens
	}
	if out.Limit == 0 {
		out = s.Tokens
	}
	set("Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset", s.Requests)
	set("Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset", s.TokenBucket())
	set("Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset", in)
	set("Anthropic-Ratelimit-Output-Tokens-Limit", "Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset", out)
	switch {
	case s.Refused == "":
	case s.TooLarge:
		hv.String("X-Should-Retry", "false")
	default:
		hv.Int("Retry-After", int64(quota.Seconds(s.RetryAfter)))
		hv.String("X-Should-Retry", "true")
	}
	hv.SetOn(h)
}

// QuotaError is Anthropic's 429 rate_limit_error in Anthropic's words: "This request would
// exceed the rate limit for your organization (…) of 3 requests per minute. …" (tokens, input
// tokens, output tokens per minute; requests per day).
func (*Dialect) QuotaError(s *quota.Status, model string, org quota.Org) *apierr.Error {
	b := s.Bucket()
	what := " requests per minute"
	switch s.Refused {
	case quota.Tokens:
		what = " tokens per minute"
	case quota.InputTokens:
		what = " input tokens per minute"
	case quota.OutputTokens:
		what = " output tokens per minute"
	case quota.Daily:
		what = " requests per day"
	}
	id := hex.EncodeToString(org[:])
	id = id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
	return apierr.New(apierr.RateLimitExceeded, "", "This request would exceed the rate limit for your organization ("+id+") of "+
		thousands(b.Limit)+what+" (model: "+model+"). For details, refer to: https://docs.claude.com/en/api/rate-limits. "+
		"You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. "+
		"You may also contact sales at https://claude.com/contact-sales to discuss your options for a rate limit increase.")
}

// thousands writes n with commas between its thousands, as Anthropic's messages do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// OverloadError is Anthropic's overload: 529 overloaded_error, "Overloaded", with
// x-should-retry: true, which the SDKs and Claude Code retry.
func (*Dialect) OverloadError(h http.Header) *apierr.Error {
	h.Set("X-Should-Retry", "true")
	return apierr.New(apierr.ServerIsOverloaded, "", "Overloaded")
}
