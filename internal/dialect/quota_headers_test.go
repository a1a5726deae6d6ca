package dialect_test

import (
	"net/http"
	"testing"
	"time"

	"mockgateway/internal/dialect"
	"mockgateway/internal/dialect/anthropic"
	"mockgateway/internal/dialect/chat"
	"mockgateway/internal/dialect/google"
	"mockgateway/internal/dialect/responses"
	"mockgateway/internal/quota"
)

// TestQuotaHeaderNamesCanonical: every dialect's rate-limit headers are set under their
// canonical names (quota.HeaderValues puts them in the map as given: a name that is not
// canonical would be a second header, and invisible to Header.Get), one value each.
func TestQuotaHeaderNamesCanonical(t *testing.T) {
	b := quota.Bucket{Limit: 1000, Remaining: 10, Reset: 6 * time.Minute}
	statuses := []quota.Status{
		{Requests: b, Tokens: b, Daily: b, InputTokens: b, OutputTokens: quota.Bucket{Limit: 50, Reset: 20 * time.Millisecond}},
		{Requests: b, Tokens: b, Refused: quota.Tokens, RetryAfter: 1500 * time.Millisecond},
		{Requests: b, Tokens: b, Refused: quota.Tokens, TooLarge: true},
	}
	for _, d := range []dialect.Dialect{chat.New(nil), responses.New(nil), anthropic.New(nil), google.New(nil, google.Generate)} {
		for i := range statuses {
			h := http.Header{}
			d.QuotaHeaders(h, &statuses[i], time.Unix(1_800_000_000, 0))
			for name, v := range h {
				if name != http.CanonicalHeaderKey(name) || len(v) != 1 {
					t.Errorf("%s, status %d: %s: %q", d.Name(), i, name, v)
				}
			}
		}
	}
}
