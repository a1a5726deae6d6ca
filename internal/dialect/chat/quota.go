package chat

import (
	"net/http"
	"strconv"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/quota"
)

// QuotaHeaders sets OpenAI's x-ratelimit-* headers, for the requests (requestsShown) and the
// tokens per window that the model limits (OpenAI counts one kind of token, so the tokens are
// the most restrictive of the token buckets — tpm, itpm, otpm), their reset as OpenAI writes it
// ("1s", "6m0s", "20ms"); and on a refusal retry-after (whole seconds) and retry-after-ms,
// which the SDKs wait before their retry.
func (*Dialect) QuotaHeaders(h http.Header, s *quota.Status, _ time.Time) {
	var hv quota.HeaderValues
	var reset time.Duration // the last reset written, and its text: the two buckets' are often alike
	var resetText string
	for _, b := range [...]struct {
		limit, remaining, reset string
		b                       quota.Bucket
	}{
		{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests", requestsShown(s)},
		{"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens", s.TokenBucket()},
	} {
		if b.b.Limit == 0 {
			continue
		}
		hv.Int(b.limit, int64(b.b.Limit))
		hv.Int(b.remaining, int64(b.b.Remaining))
		if resetText == "" || b.b.Reset != reset {
			reset, resetText = b.b.Reset, resetDuration(b.b.Reset)
		}
		hv.String(b.reset, resetText)
	}
	if s.Refused != "" && !s.TooLarge {
		hv.Int("Retry-After", int64(quota.Seconds(s.RetryAfter)))
		hv.Int("Retry-After-Ms", s.RetryAfter.Milliseconds())
	}
	hv.SetOn(h)
}

// requestsShown is the requests bucket OpenAI's headers show. OpenAI has one set of requests
// headers, and for a key limited both per minute and per day they show the daily limit — the
// one that binds over time, though the minute's is the one a burst meets first. So of a
// model's window and daily buckets, the one that allows fewer requests over a day (the daily
// one on a tie); the refusal still names the bucket that refused.
func requestsShown(s *quota.Status) quota.Bucket {
	if s.Daily.Limit == 0 {
		return s.Requests
	}
	if s.Requests.Limit == 0 {
		return s.Daily
	}
	if float64(s.Daily.Limit) <= float64(s.Requests.Limit)*float64(quota.Day)/float64(s.Limits.Period()) {
		return s.Daily
	}
	return s.Requests
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
	case quota.Tokens, quota.InputTokens, quota.OutputTokens: // OpenAI has one kind of token limit
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
