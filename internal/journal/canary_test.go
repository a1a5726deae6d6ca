package journal

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// canary is planted in every place a client can put text; it must appear nowhere the journal
// writes. It is a valid function and schema name, so that it can be planted in those too.
const canary = "cnry7Qz4Xw9"

// canaryBody is a request with the canary in every message's content and name, content parts,
// a refusal, tool call ids, names and arguments, tool names, descriptions and parameters, the
// tool_choice function, the response_format's name, description and schema, the stop strings,
// and the no-effect members that carry text (user, metadata, safety_identifier, cache key).
func canaryBody() string {
	c := canary
	return strings.NewReplacer("C", c).Replace(`{"model":"mock-tools",
	"messages":[
		{"role":"system","content":"sys C","name":"C"},
		{"role":"developer","content":[{"type":"text","text":"dev C"}],"name":"n-C"},
		{"role":"user","content":[{"type":"text","text":"user C"},{"type":"text","text":"C"}],"name":"C"},
		{"role":"assistant","content":"asst C","refusal":"C","name":"C",
		 "tool_calls":[{"id":"call_C","type":"function","function":{"name":"C","arguments":"{\"C\":\"C\"}"}}]},
		{"role":"assistant","content":[{"type":"refusal","refusal":"refuse C"}]},
		{"role":"tool","tool_call_id":"call_C","content":"result C","name":"C"}],
	"tools":[{"type":"function","function":{"name":"C","description":"desc C","strict":true,
		"parameters":{"type":"object","description":"C","properties":{"C":{"type":"string","enum":["C"]}},
		"required":["C"],"additionalProperties":false}}}],
	"tool_choice":{"type":"function","function":{"name":"C"}},
	"response_format":{"type":"json_schema","json_schema":{"name":"C","description":"C",
		"schema":{"type":"object","properties":{"C":{"type":"string"}},"title":"C"}}},
	"stop":["C","stop C"],"user":"C","metadata":{"C":"C"},"safety_identifier":"C","prompt_cache_key":"C",
	"max_tokens":10,"seed":7,"stream":true,"stream_options":{"include_usage":true}}`)
}

// canaryHeaders plants the canary in headers outside the allowlist, credentials included. (The
// allowlisted ones are shown, sanitized: they are the SDK identity.)
func canaryHeaders() http.Header {
	h := http.Header{}
	for _, name := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization",
		"X-Stainless-Arch", "X-Stainless-Timeout", "X-Test-Case", "Openai-Organization", "Openai-Project",
		"X-Forwarded-For", "Referer", "Traceparent", "Baggage", "X-" + canary} {
		h.Set(name, "Bearer sk-"+canary)
	}
	h.Set("X-Stainless-Lang", "python")
	h.Set("X-Stainless-Package-Version", "1.109.1")
	h.Set("X-Stainless-Retry-Count", "0")
	h.Set("User-Agent", "OpenAI/Python 1.109.1")
	return h
}

func TestCanaryAppearsNowhere(t *testing.T) {
	req := decode(t, canaryBody())
	// The request did carry the canary, everywhere it was planted: the test would prove nothing
	// otherwise.
	if !strings.Contains(fmt.Sprintf("%+v", *req), canary) || req.ToolChoice.Function != canary ||
		req.ResponseFormat.Name != canary || req.Tools[0].Name != canary {
		t.Fatal("the canary did not reach the decoded request")
	}

	j := New(Config{EntriesPerScope: 4, MaxScopes: 4})
	e := Entry{RequestID: "req_1", Time: time.Now(), Method: "POST", Route: "/v1/chat/completions", Status: 200,
		Model: "mock-tools", Stream: true, Chunks: 9, StreamOutcome: "completed", DurationMS: 3,
		FinishReason: "tool_calls", PromptTokens: 90, CompletionTokens: 7, Fixture: "generated",
		SDK: SDKOf(canaryHeaders()), Shape: ShapeOf(req)}
	for _, scope := range []string{"", "scope-1"} {
		j.Add(scope, e)
		out := string(j.AppendJSON(nil, scope, 0))
		if strings.Contains(out, canary) {
			t.Errorf("scope %q: the canary is in the journal's JSON:\n%s", scope, out)
		}
		// The Go values too, for a caller that logs them.
		if v := fmt.Sprintf("%+v %#v", j.List(scope, 0), j.List(scope, 0)); strings.Contains(v, canary) {
			t.Errorf("scope %q: the canary is in the entries: %s", scope, v)
		}
		// The shape did see the request: counts, not text.
		if !strings.Contains(out, `"tool_choice":"function"`) || !strings.Contains(out, `"response_format":"json_schema"`) ||
			!strings.Contains(out, `"message_names":true`) || !strings.Contains(out, `"user_agent":"OpenAI/Python 1.109.1"`) {
			t.Errorf("scope %q: the shape or the SDK is missing:\n%s", scope, out)
		}
	}
}
