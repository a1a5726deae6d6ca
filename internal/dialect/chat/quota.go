package chat

import (
	"net/http"
	"strconv"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/quota"
)

// QuotaHeaders sets OpenAI's x-ratelimit-* headers, for the requests and the tokens per window
// that the model limits (the daily limit shows only in a refusal), their reset as OpenAI writes
// it ("1s", "6m0s", "20ms"); and on a refusal retry-after (whole seconds) and retry-after-ms,
// which the SDKs wait before their retry.
func (*Dialect) QuotaHeaders(h http.Header, s *quota.Status, _ time.Time) {
	for _, b := range [...]struct {
		name string
		b    quota.Bucket
	}{{"Requests", s.Requests}, {"Tokens", s.Tokens}} {
		if b.b.Limit == 0 {
			continue
		}
		h.Set("X-Ratelimit-Limit-"+b.name, strconv.Itoa(b.b.Limit))
		h.Set("X-Ratelimit-Remaining-"+b.name, strconv.Itoa(b.b.Remaining))
		h.Set("X-Ratelimit-Reset-"+b.name, resetDuration(b.b.Reset))
	}
	if s.Refused != "" && !s.TooLarge {
		h.Set("Retry-After", strconv.Itoa(quota.Seconds(s.RetryAfter)))
		h.Set("Retry-After-Ms", strconv.FormatInt(s.RetryAfter.Milliseconds(), 10))
	}
}

// resetDuration is a reset as OpenAI's headers and messages write it: a Go duration to the
// millisecond.
func resetDuration(d time.Duration) string { return d.Round(time.Millisecond).String() }

// QuotaError is OpenAI's 429 rate_limit_exceeded, its type the limit's ("requests" or
// "tokens"), in OpenAI's words: "Rate limit reached for MODEL in organization org-… on
// requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. …", and for
// a request larger than the whole token bucket "Request too large for MODEL …".
func (*Dialect) QuotaError(s *quota.Status, model string, org quota.Org) *apierr.Error {
	b := s.Bucket()
	typ, per := "requests", "requests per min (RPM)"
	switch s.Refused {
	case quota.Tokens:
		typ, per = "tokens", "tokens per min (TPM)"
	case quota.Daily:
		per = "requests per day (RPD)"
	}
	where := " for " + model + " in organization " + org.String() + " on " + per + ": Limit " + strconv.Itoa(b.Limit)
	var msg string
	if s.TooLarge {
		msg = "Request too large" + where + ", Requested " + strconv.Itoa(s.Requested) +
			". The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more."
	} else {
		msg = "Rate limit reached" + where + ", Used " + strconv.Itoa(b.Limit-b.Remaining) + ", Requested " + strconv.Itoa(s.Requested) +
			". Please try again in " + resetDuration(s.RetryAfter) + ". Visit https://platform.openai.com/account/rate-limits to learn more."
	}
	e := apierr.New(apierr.RateLimitExceeded, "", msg)
	e.Type = typ
	return e
}

// OverloadError is OpenAI's answer when its servers are overloaded: 503
// server_is_overloaded, of type service_unavailable_error, which the SDKs retry.
func (*Dialect) OverloadError(http.Header) *apierr.Error {
	e := apierr.New(apierr.ServerIsOverloaded, "", "Our servers are currently overloaded. Please try again later.")
	e.Type = "service_unavailable_error"
	return e
}
