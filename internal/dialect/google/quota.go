package google

import (
	"net/http"
	"strconv"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonenc"
	"mockgateway/internal/quota"
)

// QuotaHeaders: Google's answers carry no rate-limit headers, a refusal only the retry-after
// its RetryInfo says.
func (*Dialect) QuotaHeaders(h http.Header, s *quota.Status, _ time.Time) {
	if s.Refused != "" && !s.TooLarge {
		h.Set("Retry-After", strconv.Itoa(quota.Seconds(s.RetryAfter)))
	}
}

// quotaFailure is a refusal's google.rpc.QuotaFailure violation, as the Gemini API words it.
type quotaFailure struct {
	metric, id, model string
	value             int
	retry             int // RetryInfo's retryDelay, whole seconds; 0: none (too large)
}

// QuotaError is the Gemini API's 429 RESOURCE_EXHAUSTED: a QuotaFailure naming the quota's
// metric and id (…PerMinute… or …PerDay…, which Gemini CLI tells apart: a day's quota it does
// not retry), its dimensions and value, a Help link and a RetryInfo, and "Please retry in Ns."
// in the message, which Gemini CLI reads.
func (*Dialect) QuotaError(s *quota.Status, model string, _ quota.Org) *apierr.Error {
	f := &quotaFailure{metric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
		id: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", model: model, value: s.Bucket().Limit}
	switch s.Refused {
	case quota.Tokens, quota.InputTokens, quota.OutputTokens: // the Gemini API's one token quota counts input tokens
		f.metric, f.id = "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", "GenerateContentInputTokensPerModelPerMinute-FreeTier"
	case quota.Daily:
		f.id = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
	}
	msg := "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: " +
		f.metric + ", limit: " + strconv.Itoa(f.value) + ", model: " + model
	if !s.TooLarge {
		f.retry = quota.Seconds(s.RetryAfter)
		msg += "\nPlease retry in " + strconv.FormatFloat(s.RetryAfter.Seconds(), 'f', -1, 64) + "s."
	}
	e := apierr.New(apierr.RateLimitExceeded, "", msg)
	e.Detail = f
	return e
}

// appendQuotaDetails appends a quota refusal's details: QuotaFailure, Help and RetryInfo.
func appendQuotaDetails(buf []byte, f *quotaFailure) []byte {
	buf = append(buf, `{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":`...)
	buf = jsonenc.AppendString(buf, f.metric)
	buf = append(buf, `,"quotaId":`...)
	buf = jsonenc.AppendString(buf, f.id)
	buf = append(buf, `,"quotaDimensions":{"location":"global","model":`...)
	buf = jsonenc.AppendString(buf, f.model)
	buf = append(buf, `},"quotaValue":"`...)
	buf = strconv.AppendInt(buf, int64(f.value), 10)
	buf = append(buf, `"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]}`...)
	if f.retry > 0 {
		buf = append(buf, `,{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
		buf = strconv.AppendInt(buf, int64(f.retry), 10)
		buf = append(buf, `s"}`...)
	}
	return buf
}

// OverloadError is the Gemini API's overload: 503 UNAVAILABLE, "The model is overloaded.
// Please try again later.", which the SDKs and Gemini CLI retry.
func (*Dialect) OverloadError(http.Header) *apierr.Error {
	return apierr.New(apierr.ServerIsOverloaded, "", "The model is overloaded. Please try again later.")
}
