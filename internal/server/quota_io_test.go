package server

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// messages is a Messages request to mock-chat with this output budget.
func messages(maxTokens int) string {
	return `{"model":"mock-chat","max_tokens":` + strconv.Itoa(maxTokens) + `,"messages":[{"role":"user","content":"hello there, tell me something"}]}`
}

// untilRefused sends call until it is refused, at most 100 times: the refusal.
func untilRefused(t *testing.T, call func() *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	t.Helper()
	for range 100 {
		if rr := call(); rr.Code != 200 {
			return rr
		}
	}
	t.Fatal("never refused")
	return nil
}

// checkQuotaInputOutputAnthropic: with itpm and otpm, Anthropic's input- and output-tokens
// headers show their own buckets — the input charged its prompt, the output its budget, then
// corrected to what it produced — and the tokens headers the most restrictive of them; each
// refuses in Anthropic's words for its kind, a budget larger than the output bucket at once.
func checkQuotaInputOutputAnthropic(t *testing.T, h *harness) {
	q := []string{"X-Mock-Quota", "itpm=1000;otpm=100;window=1m", "X-Api-Key", "sk-ant-io"}
	rr := h.anthropic(messagesPath, messages(60), q...)
	var ans struct {
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &ans); err != nil || rr.Code != 200 {
		t.Fatalf("%d %s", rr.Code, rr.Body)
	}
	p, c := ans.Usage.InputTokens, ans.Usage.OutputTokens
	hd := rr.Header()
	for name, want := range map[string]string{
		"Input-Tokens-Limit": "1000", "Input-Tokens-Remaining": strconv.Itoa(1000 - p),
		"Output-Tokens-Limit": "100", "Output-Tokens-Remaining": "40",
		"Tokens-Limit": "100", "Tokens-Remaining": "40",
	} {
		if got := hd.Get("Anthropic-Ratelimit-" + name); got != want {
			t.Errorf("%s: %q, want %s", name, got, want)
		}
	}
	if hd.Get("Anthropic-Ratelimit-Requests-Limit") != "" {
		t.Errorf("a requests header without rpm: %v", hd)
	}
	// The first produced c of its 60: 100-c left, which a budget of 100 does not fit.
	rr = h.anthropic(messagesPath, messages(100), q...)
	if rr.Code != 429 || rr.Header().Get("X-Should-Retry") != "true" || rr.Header().Get("Anthropic-Ratelimit-Output-Tokens-Remaining") != strconv.Itoa(100-c) ||
		!strings.Contains(rr.Body.String(), `"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (`) ||
		!strings.Contains(rr.Body.String(), ") of 100 output tokens per minute (model: mock-chat). ") {
		t.Errorf("the output bucket refuses: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}
	if rec := lastAccess(t, h); rec["fault"] != "quota_output_tokens" {
		t.Errorf("access line: %v", rec)
	}
	if v := metricValue(t, h.metrics, "mockgateway_quota_refusals_total", map[string]string{"model": "mock-chat", "limit": "output_tokens"}); v != 1 {
		t.Errorf("refusals counted: %v", v)
	}
	rr = h.anthropic(messagesPath, messages(101), q...)
	if rr.Code != 429 || rr.Header().Get("X-Should-Retry") != "false" || !strings.Contains(rr.Body.String(), " of 100 output tokens per minute ") {
		t.Errorf("a budget larger than the output bucket: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}

	// The input bucket: a prompt of p tokens fits three times.
	in := []string{"X-Mock-Quota", "itpm=" + strconv.Itoa(3*p) + ";tpm=100000", "X-Api-Key", "sk-ant-in"}
	rr = untilRefused(t, func() *httptest.ResponseRecorder { return h.anthropic(messagesPath, messages(10), in...) })
	if rr.Code != 429 || !strings.Contains(rr.Body.String(), " of "+thousandsOf(3*p)+" input tokens per minute ") || rr.Header().Get("Retry-After") == "" ||
		rr.Header().Get("Anthropic-Ratelimit-Output-Tokens-Limit") != "100000" || rr.Header().Get("Anthropic-Ratelimit-Input-Tokens-Remaining") != "0" {
		t.Errorf("the input bucket refuses: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}
	if rec := lastAccess(t, h); rec["fault"] != "quota_input_tokens" {
		t.Errorf("access line: %v", rec)
	}
}

// thousandsOf is n as Anthropic's messages write it.
func thousandsOf(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// checkQuotaInputOutputOpenAI: OpenAI counts one kind of token: its tokens headers show the
// most restrictive bucket, and an itpm or otpm refusal is its "tokens" refusal.
func checkQuotaInputOutputOpenAI(t *testing.T, h *harness) {
	q := []string{"X-Mock-Quota", "itpm=1000;otpm=100", "Authorization", "Bearer sk-io"}
	rr := h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":60`), q...)
	if rr.Code != 200 || rr.Header().Get("X-Ratelimit-Limit-Tokens") != "100" || rr.Header().Get("X-Ratelimit-Remaining-Tokens") != "40" {
		t.Fatalf("%d %v", rr.Code, rr.Header())
	}
	rr = h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":100`), q...)
	e := decodeError(t, rr.Body.Bytes())
	if rr.Code != 429 || e.Code != "rate_limit_exceeded" || e.Type != "tokens" || !strings.Contains(e.Message, " on tokens per min (TPM): Limit 100, Used ") ||
		!strings.Contains(e.Message, ", Requested 100. Please try again in ") {
		t.Errorf("the output bucket refuses: %d %+v", rr.Code, e)
	}
	rr = h.do("POST", chatPath, chatBody("mock-chat", `"max_tokens":10`), "X-Mock-Quota", "itpm=1", "Authorization", "Bearer sk-io")
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 429 || e.Type != "tokens" || !strings.HasPrefix(e.Message, "Request too large for mock-chat") {
		t.Errorf("a prompt larger than the input bucket: %d %+v", rr.Code, e)
	}
}

// checkQuotaInputOutputGoogle: the Gemini API has one token quota, of input tokens: an itpm
// or otpm refusal names it.
func checkQuotaInputOutputGoogle(t *testing.T, h *harness) {
	path := geminiPath("v1beta", "mock-chat", "generateContent")
	body := func(n int) string {
		return `{"contents":[{"role":"user","parts":[{"text":"hello there"}]}],"generationConfig":{"maxOutputTokens":` + strconv.Itoa(n) + `}}`
	}
	q := []string{"X-Mock-Quota", "otpm=100", "X-Goog-Api-Key", "key-io"}
	if rr := h.do("POST", path, body(60), q...); rr.Code != 200 {
		t.Fatalf("%d %s", rr.Code, rr.Body)
	}
	rr := h.do("POST", path, body(100), q...)
	if rr.Code != 429 || !strings.Contains(rr.Body.String(), `"quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier"`) ||
		!strings.Contains(rr.Body.String(), `"quotaValue":"100"`) || !strings.Contains(rr.Body.String(), "generate_content_free_tier_input_token_count, limit: 100, model: mock-chat") {
		t.Errorf("the output bucket refuses: %d %s", rr.Code, rr.Body)
	}
	rr = h.do("POST", path, body(10), "X-Mock-Quota", "itpm=1", "X-Goog-Api-Key", "key-io")
	if rr.Code != 429 || !strings.Contains(rr.Body.String(), `"quotaId":"GenerateContentInputTokensPerModelPerMinute-FreeTier"`) || !strings.Contains(rr.Body.String(), `"quotaValue":"1"`) {
		t.Errorf("the input bucket refuses: %d %s", rr.Code, rr.Body)
	}
}

var quotaInputOutputChecks = map[string]func(*testing.T, *harness){
	"anthropic": checkQuotaInputOutputAnthropic, "openai": checkQuotaInputOutputOpenAI, "google": checkQuotaInputOutputGoogle,
}

// TestQuotaInputOutput: itpm and otpm in each dialect, in memory.
func TestQuotaInputOutput(t *testing.T) {
	for name, check := range quotaInputOutputChecks {
		t.Run(name, func(t *testing.T) {
			h, _ := newQuotaHarness(t)
			check(t, h)
		})
	}
}

// TestQuotaInputOutputRedis: the same in the shared store.
func TestQuotaInputOutputRedis(t *testing.T) {
	for name, check := range quotaInputOutputChecks {
		t.Run(name, func(t *testing.T) { check(t, sharedStateHarness(t)) })
	}
}
