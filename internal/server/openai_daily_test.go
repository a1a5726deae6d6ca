package server

import (
	"regexp"
	"testing"
)

// TestOpenAIDailyRequestLimit: a model with a daily request limit shows it in OpenAI's requests
// headers, as OpenAI shows a free-tier key's 200 requests a day rather than its 3 a minute:
// limit 200, and a reset of 7m12s after one request (a day's bucket refills a request every
// 86400/200 s) — while the tokens headers keep the minute's. Spent, the 429 names the RPD, and
// says to try again in the time one request takes to refill. A daily limit alone shows too; one
// that allows more than the window's limit would over a day is not the one that binds, and the
// window's shows.
func TestOpenAIDailyRequestLimit(t *testing.T) {
	h, _ := newQuotaHarness(t)
	free := []string{"X-Mock-Quota", "rpm=3;tpm=40000;rpd=200", "Authorization", "Bearer sk-free"}
	rr := h.do("POST", chatPath, chatBody("mock-chat", ""), free...)
	hd := rr.Header()
	if rr.Code != 200 || hd.Get("X-Ratelimit-Limit-Requests") != "200" || hd.Get("X-Ratelimit-Remaining-Requests") != "199" ||
		hd.Get("X-Ratelimit-Reset-Requests") != "7m12s" || hd.Get("X-Ratelimit-Limit-Tokens") != "40000" {
		t.Fatalf("first answer: %d %v", rr.Code, hd)
	}

	// A day's worth, on a bucket without a minute's limit to wait out.
	daily := []string{"X-Mock-Quota", "rpd=200", "Authorization", "Bearer sk-daily"}
	for n := 1; n <= 200; n++ {
		if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), daily...); rr.Code != 200 {
			t.Fatalf("request %d: %d %s", n, rr.Code, rr.Body)
		}
	}
	rr = h.do("POST", chatPath, chatBody("mock-chat", ""), daily...)
	hd = rr.Header()
	if rr.Code != 429 || hd.Get("X-Ratelimit-Limit-Requests") != "200" || hd.Get("X-Ratelimit-Remaining-Requests") != "0" ||
		hd.Get("X-Ratelimit-Reset-Requests") != "24h0m0s" || hd.Get("Retry-After") != "432" {
		t.Fatalf("past the day's limit: %d %v", rr.Code, hd)
	}
	rpd := regexp.MustCompile(`^Rate limit reached for mock-chat in organization org-[0-9a-f]{24} on requests per day \(RPD\): Limit 200, Used 200, Requested 1\. Please try again in 7m12s\. `)
	if e := decodeError(t, rr.Body.Bytes()); e.Code != "rate_limit_exceeded" || e.Type != "requests" || !rpd.MatchString(e.Message) {
		t.Errorf("refusal: %+v", e)
	}

	// One request an hour binds before a hundred a day.
	rr = h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Quota", "rpm=1;window=1h;rpd=100", "Authorization", "Bearer sk-hourly")
	if hd := rr.Header(); rr.Code != 200 || hd.Get("X-Ratelimit-Limit-Requests") != "1" || hd.Get("X-Ratelimit-Reset-Requests") != "1h0m0s" {
		t.Errorf("an hourly limit tighter than the daily one: %d %v", rr.Code, hd)
	}
}
