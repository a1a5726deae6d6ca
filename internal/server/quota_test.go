package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/quota"
)

// quotaClock is the buckets' clock in these tests: it moves only when told.
type quotaClock struct{ t time.Time }

func (c *quotaClock) now() time.Time { return c.t }

// newQuotaHarness is a harness whose quota buckets run on clock.
func newQuotaHarness(t *testing.T, opts ...func(*Deps)) (*harness, *quotaClock) {
	clock := &quotaClock{t: time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)}
	return newHarness(t, append(opts, func(d *Deps) {
		m := memoryState(d.Config, false)
		m.Quotas = quota.NewBuckets(100, clock.now)
		d.State = m
	})...), clock
}

var openAIOrg = regexp.MustCompile(`^Rate limit reached for mock-chat in organization org-[0-9a-f]{24} on requests per min \(RPM\): Limit 2, Used 2, Requested 1\. Please try again in 5s\. Visit https://platform\.openai\.com/account/rate-limits to learn more\.$`)

// TestQuotaOpenAI: with a quota, every answer carries OpenAI's x-ratelimit-* headers counting
// down; past the limit a 429 rate_limit_exceeded of type "requests" in OpenAI's words, with
// retry-after; once the bucket has refilled, an answer again. The Responses API shows the same.
func TestQuotaOpenAI(t *testing.T) {
	h, clock := newQuotaHarness(t)
	q := []string{"X-Mock-Quota", "rpm=2;tpm=10000;window=10s", "Authorization", "Bearer sk-one"}
	for want := 1; want >= 0; want-- {
		rr := h.do("POST", chatPath, chatBody("mock-chat", ""), q...)
		hd := rr.Header()
		if rr.Code != 200 || hd.Get("X-Ratelimit-Limit-Requests") != "2" || hd.Get("X-Ratelimit-Remaining-Requests") != strconv.Itoa(want) ||
			hd.Get("X-Ratelimit-Reset-Requests") != strconv.Itoa(5*(2-want))+"s" || hd.Get("X-Ratelimit-Limit-Tokens") != "10000" {
			t.Fatalf("answer with %d left: %d %v", want, rr.Code, hd)
		}
	}
	rr := h.do("POST", chatPath, chatBody("mock-chat", ""), q...)
	e := decodeError(t, rr.Body.Bytes())
	if rr.Code != 429 || e.Code != "rate_limit_exceeded" || e.Type != "requests" || e.Param != nil || !openAIOrg.MatchString(e.Message) {
		t.Errorf("refusal: %+v", e)
	}
	if rr.Header().Get("Retry-After") != "5" || rr.Header().Get("Retry-After-Ms") != "5000" || rr.Header().Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Errorf("refusal's headers: %v", rr.Header())
	}
	if rec := lastAccess(t, h); rec["fault"] != "quota_requests" || rec["error_code"] != "rate_limit_exceeded" {
		t.Errorf("access line: %v", rec)
	}
	if v := metricValue(t, h.metrics, "mockgateway_quota_refusals_total", map[string]string{"model": "mock-chat", "limit": "requests"}); v != 1 {
		t.Errorf("refusals counted: %v", v)
	}
	// Another key is another organization, another scope other buckets.
	for _, other := range [][]string{{"Authorization", "Bearer sk-two"}, {"X-Mock-Scope", "other"}} {
		if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), append(append([]string{}, q...), other...)...); rr.Code != 200 {
			t.Errorf("%v: %d", other, rr.Code)
		}
	}
	clock.t = clock.t.Add(5 * time.Second)
	rr = h.do("POST", "/v1/responses", `{"model":"mock-chat","input":"hello there"}`, q...)
	if rr.Code != 200 || rr.Header().Get("X-Ratelimit-Remaining-Requests") != "0" || rr.Header().Get("X-Ratelimit-Reset-Requests") != "10s" {
		t.Errorf("the Responses API, once one request refilled: %d %v", rr.Code, rr.Header())
	}
}

// TestQuotaTokensSettle: a request is charged its prompt and its whole output budget, then
// given back what it did not produce; one larger than the whole bucket is refused at once.
func TestQuotaTokensSettle(t *testing.T) {
	h, _ := newQuotaHarness(t)
	q := []string{"X-Mock-Quota", "tpm=1000"}
	body := chatBody("mock-chat", `"max_tokens":400`)
	rr := h.do("POST", chatPath, body, q...)
	var ans struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &ans); err != nil || rr.Code != 200 {
		t.Fatalf("%d %s", rr.Code, rr.Body)
	}
	p, c := ans.Usage.PromptTokens, ans.Usage.CompletionTokens
	if c == 0 || c >= 400 {
		t.Fatalf("usage %+v", ans.Usage)
	}
	if got := rr.Header().Get("X-Ratelimit-Remaining-Tokens"); got != strconv.Itoa(1000-p-400) {
		t.Errorf("charged at admission: %s, want %d", got, 1000-p-400)
	}
	rr = h.do("POST", chatPath, body, q...)
	if got := rr.Header().Get("X-Ratelimit-Remaining-Tokens"); got != strconv.Itoa(1000-(p+c)-(p+400)) {
		t.Errorf("after the first settled: %s, want %d", got, 1000-(p+c)-(p+400))
	}
	rr = h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":1000`), q...)
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 429 || e.Code != "rate_limit_exceeded" || e.Type != "tokens" || !strings.HasPrefix(e.Message, "Request too large for mock-chat in organization org-") ||
		!strings.Contains(e.Message, "on tokens per min (TPM): Limit 1000, Requested "+strconv.Itoa(p+1000)+". The input or output tokens must be reduced") {
		t.Errorf("too large: %+v", e)
	}
}

// TestQuotaAnthropic: Anthropic's anthropic-ratelimit-* headers, resets in RFC 3339, and its
// 429 rate_limit_error in its words, with retry-after and x-should-retry.
func TestQuotaAnthropic(t *testing.T) {
	h, _ := newQuotaHarness(t)
	q := []string{"X-Mock-Quota", "rpm=1;tpm=5000;window=4s", "X-Api-Key", "sk-ant-one"}
	body := `{"model":"mock-chat","max_tokens":64,"messages":[{"role":"user","content":"hello there"}]}`
	rr := h.anthropic(messagesPath, body, q...)
	hd := rr.Header()
	if rr.Code != 200 || hd.Get("Anthropic-Ratelimit-Requests-Limit") != "1" || hd.Get("Anthropic-Ratelimit-Requests-Remaining") != "0" {
		t.Fatalf("%d %v", rr.Code, hd)
	}
	for _, name := range []string{"Requests", "Tokens", "Input-Tokens", "Output-Tokens"} {
		if _, err := time.Parse(time.RFC3339, hd.Get("Anthropic-Ratelimit-"+name+"-Reset")); err != nil {
			t.Errorf("%s reset: %v", name, err)
		}
	}
	if hd.Get("X-Ratelimit-Limit-Requests") != "" {
		t.Errorf("OpenAI's headers on Anthropic's answer: %v", hd)
	}
	rr = h.anthropic(messagesPath, body, q...)
	if rr.Code != 429 || rr.Header().Get("Retry-After") != "4" || rr.Header().Get("X-Should-Retry") != "true" {
		t.Fatalf("%d %v", rr.Code, rr.Header())
	}
	var e struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &e); err != nil || e.Error.Type != "rate_limit_error" ||
		!regexp.MustCompile(`^This request would exceed the rate limit for your organization \([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\) of 1 requests per minute \(model: mock-chat\)\. For details, refer to: https://docs\.claude\.com/en/api/rate-limits\. `).MatchString(e.Error.Message) {
		t.Errorf("refusal: %s", rr.Body)
	}
	// Too large: no wait helps, and x-should-retry says so.
	rr = h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":3000,"messages":[{"role":"user","content":"hi"}]}`, "X-Mock-Quota", "tpm=2000", "X-Api-Key", "sk-ant-two")
	if rr.Code != 429 || rr.Header().Get("X-Should-Retry") != "false" || !strings.Contains(rr.Body.String(), "of 2,000 tokens per minute") {
		t.Errorf("too large: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}
}

// TestQuotaHeaderAndCatalog: the catalog's limits apply without a header; a malformed header
// is 400 invalid_simulation_header; with simulation headers off the header means nothing; a
// model without limits answers without any rate-limit header.
func TestQuotaHeaderAndCatalog(t *testing.T) {
	cat, err := catalog.Parse([]byte("models:\n  - {id: limited, kind: mock, behavior: chat, limits: {rpm: 1, window: 2s}}\n  - {id: plain, kind: mock, behavior: chat}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newQuotaHarness(t, func(d *Deps) { d.Catalog = cat })
	if rr := h.do("POST", chatPath, chatBody("limited", "")); rr.Code != 200 || rr.Header().Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Errorf("the catalog's limits: %d %v", rr.Code, rr.Header())
	}
	if rr := h.do("POST", chatPath, chatBody("limited", "")); rr.Code != 429 {
		t.Errorf("the catalog's limits, past them: %d", rr.Code)
	}
	rr := h.do("POST", chatPath, chatBody("plain", ""))
	for name := range rr.Header() {
		if strings.Contains(strings.ToLower(name), "ratelimit") || name == "Retry-After" {
			t.Errorf("a model without limits answers with %s", name)
		}
	}
	checkError(t, h.do("POST", chatPath, chatBody("plain", ""), "X-Mock-Quota", "rpm=lots"), 400, "invalid_simulation_header", "X-Mock-Quota")

	off, _ := newQuotaHarness(t, func(d *Deps) { d.Config.AllowSimulationHeaders = false })
	for range 3 {
		if rr := off.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Quota", "rpm=1"); rr.Code != 200 || rr.Header().Get("X-Ratelimit-Limit-Requests") != "" {
			t.Fatalf("simulation headers off: %d %v", rr.Code, rr.Header())
		}
	}
}

// TestQuotaGoogle: Google's answers carry no rate-limit header; its refusal is 429
// RESOURCE_EXHAUSTED with a QuotaFailure (metric, a …PerMinute… or …PerDay… id, dimensions,
// value), a Help link and a RetryInfo in whole seconds, and "Please retry in Ns." in the
// message, as Gemini CLI reads it. An overloaded model is 503 UNAVAILABLE in Google's words.
func TestQuotaGoogle(t *testing.T) {
	h, _ := newQuotaHarness(t)
	path := geminiPath("v1beta", "mock-chat", "generateContent")
	body := `{"contents":[{"role":"user","parts":[{"text":"hello there"}]}]}`
	for _, row := range []struct{ quota, id string }{
		{"rpm=1;window=30s", "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"},
		{"rpd=1", "GenerateRequestsPerDayPerProjectPerModel-FreeTier"},
	} {
		q := []string{"X-Mock-Quota", row.quota, "X-Goog-Api-Key", "key-" + row.quota}
		rr := h.do("POST", path, body, q...)
		if rr.Code != 200 {
			t.Fatalf("%s: %d %s", row.quota, rr.Code, rr.Body)
		}
		for name := range rr.Header() {
			if strings.Contains(strings.ToLower(name), "ratelimit") {
				t.Errorf("Google answers with %s", name)
			}
		}
		rr = h.do("POST", path, body, q...)
		var e struct {
			Error struct {
				Code    int
				Message string
				Status  string
				Details []map[string]any
			}
		}
		if err := json.Unmarshal(rr.Body.Bytes(), &e); err != nil || rr.Code != 429 || e.Error.Status != "RESOURCE_EXHAUSTED" || len(e.Error.Details) != 3 {
			t.Fatalf("%s, refused: %d %s", row.quota, rr.Code, rr.Body)
		}
		v := e.Error.Details[0]["violations"].([]any)[0].(map[string]any)
		if e.Error.Details[0]["@type"] != "type.googleapis.com/google.rpc.QuotaFailure" || v["quotaId"] != row.id || v["quotaValue"] != "1" ||
			v["quotaDimensions"].(map[string]any)["model"] != "mock-chat" || e.Error.Details[1]["@type"] != "type.googleapis.com/google.rpc.Help" {
			t.Errorf("%s: details %v", row.quota, e.Error.Details)
		}
		wait := e.Error.Details[2]["retryDelay"]
		if e.Error.Details[2]["@type"] != "type.googleapis.com/google.rpc.RetryInfo" || wait != rr.Header().Get("Retry-After")+"s" ||
			!strings.HasSuffix(e.Error.Message, "\nPlease retry in "+strings.TrimSuffix(wait.(string), "s")+"s.") {
			t.Errorf("%s: retry %v, header %q, message %q", row.quota, wait, rr.Header().Get("Retry-After"), e.Error.Message)
		}
	}

	// mock-busy's one place taken by a slow answer, and no queue.
	cat, err := catalog.Parse([]byte("models:\n  - {id: mock-busy, kind: mock, behavior: chat, capacity: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	busy := newHarness(t, func(d *Deps) { d.Catalog = cat })
	srv := httptest.NewServer(busy.handler)
	defer srv.Close()
	held := post(context.Background(), srv, chatPath, chatBody("mock-busy", ""), "X-Mock-Latency", "ttfc=200ms")
	waitFor(t, busy, "mockgateway_model_running", 1)
	defer func() { <-held }()
	rr := busy.do("POST", geminiPath("v1beta", "mock-busy", "generateContent"), body, googleKeyHeader...)
	if rr.Code != 503 || !strings.Contains(rr.Body.String(), `"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"`) {
		t.Errorf("overloaded: %d %s", rr.Code, rr.Body)
	}
}

// TestQuotaRefusalTakesNoScriptedReply: a call the quota refuses is refused before the
// fixtures, so it does not use up a reply of a sequence: the client's retry, once the bucket has
// refilled, gets the reply the refused call would have.
func TestQuotaRefusalTakesNoScriptedReply(t *testing.T) {
	h, clock := newQuotaHarness(t)
	addFixtures(t, h, "", `{"fixtures":[{"name":"steps","match":{"model":"mock-chat"},"replies":[{"content":"one"},{"content":"two"},{"content":"three"}]}]}`)
	q := []string{"X-Mock-Quota", "rpm=1;window=2s"}
	content := func(rr *httptest.ResponseRecorder) string {
		t.Helper()
		if rr.Code != 200 {
			t.Fatalf("%d %s", rr.Code, rr.Body)
		}
		return *decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message.Content
	}
	if got := content(h.do("POST", chatPath, chatBody("mock-chat", ""), q...)); got != "one" {
		t.Fatalf("first: %q", got)
	}
	if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), q...); rr.Code != 429 {
		t.Fatalf("second: %d", rr.Code)
	}
	clock.t = clock.t.Add(2 * time.Second)
	if got := content(h.do("POST", chatPath, chatBody("mock-chat", ""), q...)); got != "two" {
		t.Errorf("the retry: %q, want the second reply", got)
	}
}

// TestQuotaCutStreamRefunds: a stream that ends after two chunks gives back the budget it did
// not produce, so the next call sees the tokens of the cut one's prompt and chunks alone taken.
func TestQuotaCutStreamRefunds(t *testing.T) {
	h, _ := newQuotaHarness(t)
	q := []string{"X-Mock-Quota", "tpm=2000"}
	if rr := h.do("POST", chatPath, chatBody("mock-chat", `"stream":true,"max_tokens":400`), append([]string{"X-Mock-Fault", "stream_error;after=2"}, q...)...); rr.Code != 200 || rr.Header().Get("X-Ratelimit-Remaining-Tokens") == "" {
		t.Fatalf("the cut stream: %d %v", rr.Code, rr.Header())
	}
	rr := h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":400`), q...)
	left, _ := strconv.Atoi(rr.Header().Get("X-Ratelimit-Remaining-Tokens"))
	// Each call's prompt is a handful of tokens; without the refund the cut stream's 400 would
	// still be taken, leaving under 1200.
	if rr.Code != 200 || left < 2000-400-40 {
		t.Errorf("after the cut stream: %d, %d tokens left", rr.Code, left)
	}
}

// TestQuotaGatewayPolicy: a model's gateway policy handles its quota's refusal as it handles
// the rate_limit fault, honouring the refusal's retry-after: a bucket that refills within the
// wait admits the retry (the simulated wait is charged ahead, so the next call sees it); a
// retry-after beyond a minute is not waited and the fallback chain serves (the external gpt-4o
// skipped); without an executable fallback the refusal stands, in the dialect's words, with
// the gateway's headers. Every decision shows in the x-mock-gateway-* headers, the span events,
// the metrics and the access line.
func TestQuotaGatewayPolicy(t *testing.T) {
	cat, err := catalog.Parse([]byte(`models:
  - {id: mock-primary, kind: mock, behavior: chat, limits: {rpm: 1}, gateway: {retries: 2, backoff: 100ms, fallback: [gpt-4o, mock-backup]}}
  - {id: mock-lonely, kind: mock, behavior: chat, limits: {rpd: 1}, gateway: {retries: 1, backoff: 100ms}}
  - {id: mock-backup, kind: mock, behavior: echo, limits: {rpm: 5}}
  - {id: gpt-4o, kind: external, provider: openai}
`))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newQuotaHarness(t, func(d *Deps) { d.Catalog = cat })
	if rr := h.do("POST", chatPath, chatBody("mock-primary", "")); rr.Code != 200 || rr.Header().Get("X-Mock-Gateway-Attempts") != "" {
		t.Fatalf("first: %d %v", rr.Code, rr.Header())
	}
	// Refused, retry-after 60s: the policy's first retry waits it (not its 100ms backoff), and
	// the bucket has refilled by then.
	rr := h.do("POST", chatPath, chatBody("mock-primary", ""))
	hd := rr.Header()
	if rr.Code != 200 || hd.Get("X-Mock-Gateway-Attempts") != "2" || hd.Get("X-Mock-Gateway-Served-By") != "mock-primary" ||
		hd.Get("X-Mock-Gateway-Fallback-From") != "" || hd.Get("X-Ratelimit-Limit-Requests") != "1" || hd.Get("X-Ratelimit-Remaining-Requests") != "0" ||
		!strings.Contains(rr.Body.String(), `"model":"mock-primary"`) {
		t.Fatalf("second, its retry after the retry-after: %d %v %s", rr.Code, hd, rr.Body)
	}
	if rec := lastAccess(t, h); rec["served_by"] != "mock-primary" || rec["fault"] != "quota_requests" || rec["attempts"] != 2.0 {
		t.Errorf("access line: %v", rec)
	}
	if got := retryBackoffs(h); len(got) != 1 || got[0] != 60000 {
		t.Errorf("gateway.retry backoff_ms: %v, want [60000]", got)
	}
	// The retry was charged a minute ahead: the bucket is in debt until then, so this call's
	// retry-after is two minutes — not waited — and the fallback serves.
	rr = h.do("POST", chatPath, chatBody("mock-primary", ""))
	hd = rr.Header()
	if rr.Code != 200 || hd.Get("X-Mock-Gateway-Attempts") != "1" || hd.Get("X-Mock-Gateway-Served-By") != "mock-backup" ||
		hd.Get("X-Mock-Gateway-Fallback-From") != "mock-primary" || hd.Get("X-Ratelimit-Limit-Requests") != "5" || hd.Get("Retry-After") != "" ||
		!strings.Contains(rr.Body.String(), `"model":"mock-backup"`) {
		t.Fatalf("third, on the fallback: %d %v %s", rr.Code, hd, rr.Body)
	}
	if rec := lastAccess(t, h); rec["served_by"] != "mock-backup" || rec["fallback_from"] != "mock-primary" || rec["fault"] != "quota_requests" || rec["attempts"] != 1.0 {
		t.Errorf("access line: %v", rec)
	}
	if v := metricValue(t, h.metrics, "mockgateway_simulated_fallbacks_total", map[string]string{"model": "mock-primary", "target": "mock-backup"}); v != 1 {
		t.Errorf("fallbacks counted: %v", v)
	}
	if v := metricValue(t, h.metrics, "mockgateway_simulated_retries_total", map[string]string{"model": "mock-primary", "fault": "rate_limit"}); v != 1 {
		t.Errorf("retries counted: %v", v)
	}
	if v := metricValue(t, h.metrics, "mockgateway_quota_refusals_total", map[string]string{"model": "mock-primary", "limit": "requests"}); v != 2 {
		t.Errorf("refusals counted: %v", v)
	}

	// A daily quota: its retry-after is hours, the policy does not retry, and with no fallback
	// the refusal stands.
	h.do("POST", chatPath, chatBody("mock-lonely", ""))
	rr = h.do("POST", chatPath, chatBody("mock-lonely", ""))
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 429 || e.Code != "rate_limit_exceeded" || rr.Header().Get("X-Mock-Gateway-Attempts") != "1" ||
		rr.Header().Get("X-Mock-Gateway-Served-By") != "mock-lonely" || rr.Header().Get("Retry-After") == "" {
		t.Errorf("no fallback: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}
}

// TestQuotaGatewaySleeps: a policy that sleeps its backoff really waits the refusal's
// retry-after, then draws again on the refilled bucket; a client that leaves while it waits
// is answered nothing.
func TestQuotaGatewaySleeps(t *testing.T) {
	cat, err := catalog.Parse([]byte(`models:
  - {id: mock-patient, kind: mock, behavior: chat, limits: {rpm: 1, window: 1s}, gateway: {retries: 1, backoff: 10ms, sleep_backoff: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) {
		d.Catalog = cat
		m := memoryState(d.Config, false)
		m.Quotas = quota.NewBuckets(100, time.Now)
		d.State = m
	})
	h.do("POST", chatPath, chatBody("mock-patient", ""))
	start := time.Now()
	rr := h.do("POST", chatPath, chatBody("mock-patient", ""))
	if waited := time.Since(start); rr.Code != 200 || rr.Header().Get("X-Mock-Gateway-Attempts") != "2" || waited < 900*time.Millisecond {
		t.Fatalf("the retry after a real wait: %d %v, waited %v", rr.Code, rr.Header(), waited)
	}
	if got := retryBackoffs(h); len(got) != 1 || got[0] != 1000 {
		t.Errorf("gateway.retry backoff_ms: %v, want [1000]", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req := httptest.NewRequest("POST", chatPath, strings.NewReader(chatBody("mock-patient", ""))).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, req)
	if w.Body.Len() != 0 {
		t.Errorf("a client that left was answered: %d %s", w.Code, w.Body)
	}
}

// retryBackoffs are the backoffs of the gateway.retry span events, in milliseconds.
func retryBackoffs(h *harness) []int64 {
	var got []int64
	for _, s := range h.spans.GetSpans() {
		for _, e := range s.Events {
			if e.Name == "gateway.retry" {
				got = append(got, attributeKeys(e.Attributes)["mockgateway.gateway.backoff_ms"].AsInt64())
			}
		}
	}
	return got
}
