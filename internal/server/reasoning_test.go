package server

import (
	"encoding/json"
	"strings"
	"testing"

	"mockgateway/internal/seal"
)

// chatUsage decodes a chat answer's usage and first choice.
type chatReasoningAnswer struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens            int `json:"prompt_tokens"`
		CompletionTokens        int `json:"completion_tokens"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

func decodeChatReasoning(t *testing.T, rr interface{ Bytes() []byte }) chatReasoningAnswer {
	t.Helper()
	var a chatReasoningAnswer
	if err := json.Unmarshal(rr.Bytes(), &a); err != nil || len(a.Choices) == 0 {
		t.Fatalf("not a chat answer: %s", rr.Bytes())
	}
	return a
}

// TestChatReasoningTokensByEffort: mock-reasoning's reasoning tokens are the effort's (medium
// when absent), reported in completion_tokens_details and counted in completion_tokens; the
// answer's text is the same whatever the effort.
func TestChatReasoningTokensByEffort(t *testing.T) {
	h := newHarness(t)
	var text string
	for _, c := range []struct {
		effort string
		want   int
	}{{"", 192}, {"minimal", 16}, {"low", 64}, {"medium", 192}, {"high", 512}} {
		body := `{"model":"mock-reasoning","messages":[{"role":"user","content":"Plan a trip"}]`
		if c.effort != "" {
			body += `,"reasoning_effort":"` + c.effort + `"`
		}
		rr := h.do("POST", chatPath, body+"}")
		if rr.Code != 200 {
			t.Fatalf("%s: %d %s", c.effort, rr.Code, rr.Body)
		}
		a := decodeChatReasoning(t, rr.Body)
		u := a.Usage
		content := *a.Choices[0].Message.Content
		if u.CompletionTokensDetails.ReasoningTokens != c.want || u.CompletionTokens != c.want+len(strings.Fields(content)) && u.CompletionTokens <= c.want {
			t.Errorf("effort %q: usage %+v, want %d reasoning tokens within completion_tokens", c.effort, u, c.want)
		}
		if text == "" {
			text = content
		} else if content != text {
			t.Errorf("effort %q changed the words: %q, %q", c.effort, content, text)
		}
	}
}

// TestChatReasoningBudget: the budget covers the reasoning first. What it leaves is the
// answer's; a budget the reasoning eats whole gives empty content and finish_reason length.
func TestChatReasoningBudget(t *testing.T) {
	h := newHarness(t)
	rr := h.do("POST", chatPath, `{"model":"mock-reasoning","messages":[{"role":"user","content":"Plan a trip"}],"reasoning_effort":"low","max_completion_tokens":70}`)
	a := decodeChatReasoning(t, rr.Body)
	if a.Usage.CompletionTokens != 70 || a.Usage.CompletionTokensDetails.ReasoningTokens != 64 || a.Choices[0].FinishReason != "length" {
		t.Errorf("budget 70 at low effort: %s", rr.Body)
	}
	rr = h.do("POST", chatPath, `{"model":"mock-reasoning","messages":[{"role":"user","content":"Plan a trip"}],"max_completion_tokens":100}`)
	a = decodeChatReasoning(t, rr.Body)
	if a.Usage.CompletionTokens != 100 || a.Usage.CompletionTokensDetails.ReasoningTokens != 100 ||
		a.Choices[0].FinishReason != "length" || a.Choices[0].Message.Content == nil || *a.Choices[0].Message.Content != "" {
		t.Errorf("a budget the reasoning eats whole: %s", rr.Body)
	}
	// A stream counts the same, and sends no content.
	rr = h.do("POST", chatPath, `{"model":"mock-reasoning","messages":[{"role":"user","content":"Plan a trip"}],"max_completion_tokens":100,"stream":true,"stream_options":{"include_usage":true}}`)
	body := rr.Body.String()
	if !strings.Contains(body, `"completion_tokens":100,`) || !strings.Contains(body, `"reasoning_tokens":100}`) || !strings.Contains(body, `"finish_reason":"length"`) {
		t.Errorf("the eaten stream: %s", body)
	}
}

// TestReasoningModelRefuses: what OpenAI refuses of a reasoning model, in its codes and
// messages; the other models accept the same requests, and reasoning_effort has no effect on
// them.
func TestReasoningModelRefuses(t *testing.T) {
	h := newHarness(t)
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ body, code, param, message string }{
		{`{"model":"mock-reasoning",` + msgs + `,"max_tokens":100}`, "unsupported_parameter", "max_tokens",
			"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."},
		{`{"model":"mock-reasoning",` + msgs + `,"max_tokens":100,"max_completion_tokens":100}`, "unsupported_parameter", "max_tokens", ""},
		{`{"model":"mock-reasoning",` + msgs + `,"temperature":0.7}`, "unsupported_value", "temperature",
			"Unsupported value: 'temperature' does not support this value with this model. Only the default (1) value is supported."},
		{`{"model":"mock-reasoning",` + msgs + `,"top_p":0.5}`, "unsupported_value", "top_p", ""},
	} {
		rr := h.do("POST", chatPath, c.body)
		e := decodeError(t, rr.Body.Bytes())
		if rr.Code != 400 || e.Code != c.code || e.Param == nil || *e.Param != c.param || (c.message != "" && e.Message != c.message) {
			t.Errorf("%s: %d %s", c.body, rr.Code, rr.Body)
		}
		other := strings.Replace(c.body, "mock-reasoning", "mock-chat", 1)
		if rr := h.do("POST", chatPath, other); rr.Code != 200 {
			t.Errorf("%s: %d %s", other, rr.Code, rr.Body)
		}
	}
	// max_tokens is refused on a reasoning model whatever its value: a budget over the model's
	// output limit is not what OpenAI names there.
	rr := h.do("POST", chatPath, `{"model":"mock-reasoning",`+msgs+`,"max_tokens":40000}`)
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 400 || e.Code != "unsupported_parameter" || e.Param == nil || *e.Param != "max_tokens" {
		t.Errorf("max_tokens over the limit on a reasoning model: %d %s", rr.Code, rr.Body)
	}
	for _, c := range []struct{ body, param string }{
		{`{"model":"mock-reasoning","input":"hi","temperature":0.2}`, "temperature"},
		{`{"model":"mock-reasoning","input":"hi","top_p":0.9}`, "top_p"},
	} {
		rr := h.do("POST", "/v1/responses", c.body)
		e := decodeError(t, rr.Body.Bytes())
		if rr.Code != 400 || e.Code != "unsupported_parameter" || *e.Param != c.param ||
			e.Message != "Unsupported parameter: '"+c.param+"' is not supported with this model." {
			t.Errorf("%s: %d %s", c.body, rr.Code, rr.Body)
		}
	}
	for _, body := range []string{
		`{"model":"mock-reasoning",` + msgs + `,"temperature":1,"top_p":1,"max_completion_tokens":300}`,
		`{"model":"mock-reasoning","input":"hi","temperature":1,"top_p":1}`,
	} {
		path := chatPath
		if strings.Contains(body, `"input"`) {
			path = "/v1/responses"
		}
		if rr := h.do("POST", path, body); rr.Code != 200 {
			t.Errorf("%s: %d %s", body, rr.Code, rr.Body)
		}
	}
	rr = h.do("POST", chatPath, `{"model":"mock-chat",`+msgs+`,"reasoning_effort":"high"}`)
	if a := decodeChatReasoning(t, rr.Body); a.Usage.CompletionTokensDetails.ReasoningTokens != 0 {
		t.Errorf("mock-chat reasoned: %s", rr.Body)
	}
}

// reasoningTurn is a Responses request of mock-reasoning asking for a summary and the
// encrypted content.
const reasoningTurn = `{"model":"mock-reasoning","input":"Plan a trip","reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false}`

// firstReasoningItem returns the answer's reasoning item.
func firstReasoningItem(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var resp struct {
		Output []map[string]any `json:"output"`
		Usage  struct {
			OutputTokens int `json:"output_tokens"`
			Details      struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Output) < 2 {
		t.Fatalf("not an answer with a reasoning item and a message: %s", body)
	}
	if resp.Output[0]["type"] != "reasoning" || resp.Output[1]["type"] != "message" {
		t.Fatalf("the reasoning item is not first: %s", body)
	}
	if resp.Usage.Details.ReasoningTokens != 64 || resp.Usage.OutputTokens <= 64 {
		t.Errorf("usage: %+v", resp.Usage)
	}
	return resp.Output[0]
}

// TestResponsesReasoningRoundTrip: the reasoning item carries a summary and sealed encrypted
// content that another replica with the same key makes alike and accepts when sent back; a
// tampered item, or one another key sealed, is 400 invalid_encrypted_content, as OpenAI answers.
func TestResponsesReasoningRoundTrip(t *testing.T) {
	withKey := func(key string) func(*Deps) {
		return func(d *Deps) { d.Sealer = seal.New(key) }
	}
	a, b := newHarness(t, withKey("the replicas' shared key")), newHarness(t, withKey("the replicas' shared key"))
	foreign := newHarness(t, withKey("another deployment's key"))
	first := a.do("POST", "/v1/responses", reasoningTurn)
	rs := firstReasoningItem(t, first.Body.Bytes())
	if again := b.do("POST", "/v1/responses", reasoningTurn); again.Body.String() != first.Body.String() {
		t.Errorf("two replicas answered differently:\n%s\n%s", first.Body, again.Body)
	}
	enc, _ := rs["encrypted_content"].(string)
	summary, _ := rs["summary"].([]any)
	if enc == "" || len(summary) != 1 || !strings.HasPrefix(rs["id"].(string), "rs_") {
		t.Fatalf("reasoning item: %v", rs)
	}
	if plain := a.do("POST", "/v1/responses", `{"model":"mock-reasoning","input":"Plan a trip"}`); !strings.Contains(plain.Body.String(), `"type":"reasoning","summary":[]}`) {
		t.Errorf("without summary or include, the item is bare: %s", plain.Body)
	}

	item, _ := json.Marshal(rs)
	next := func(it string) string {
		return `{"model":"mock-reasoning","include":["reasoning.encrypted_content"],"input":[{"role":"user","content":"Plan a trip"},` + it +
			`,{"role":"assistant","content":"Done."},{"role":"user","content":"And then?"}]}`
	}
	if rr := b.do("POST", "/v1/responses", next(string(item))); rr.Code != 200 {
		t.Fatalf("the item sent back to another replica: %d %s", rr.Code, rr.Body)
	}
	tampered := strings.Replace(string(item), enc, enc[:10]+flipChar(enc[10])+enc[11:], 1)
	for name, c := range map[string]struct {
		h    *harness
		item string
	}{"tampered": {a, tampered}, "foreign key": {foreign, string(item)}, "not ours": {a, `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABo-not-sealed-here=="}`}} {
		rr := c.h.do("POST", "/v1/responses", next(c.item))
		e := decodeError(t, rr.Body.Bytes())
		if rr.Code != 400 || e.Code != "invalid_encrypted_content" || e.Param != nil || e.Type != "invalid_request_error" ||
			e.Message != "The encrypted content for the reasoning item at input[1] could not be verified. Reason: Encrypted content could not be decrypted or parsed." {
			t.Errorf("%s: %d %s", name, rr.Code, rr.Body)
		}
		// A model that does not reason ignores reasoning items, as it ignores every reasoning
		// parameter.
		other := strings.Replace(next(c.item), "mock-reasoning", "mock-chat", 1)
		if rr := c.h.do("POST", "/v1/responses", other); rr.Code != 200 {
			t.Errorf("%s on mock-chat: %d %s", name, rr.Code, rr.Body)
		}
	}
}

func itemTypes(resp map[string]any) string {
	var out []string
	for _, it := range resp["output"].([]any) {
		out = append(out, it.(map[string]any)["type"].(string))
	}
	return strings.Join(out, ",")
}

func flipChar(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// TestResponsesReasoningConformToOpenAI: mock-reasoning's answers and stream events, with and
// without a summary, the encrypted content, tools, and a budget the reasoning eats whole, are
// valid against OpenAI's own document; the stream's reasoning events come first, in OpenAI's
// order, and its final response is the JSON answer's.
func TestResponsesReasoningConformToOpenAI(t *testing.T) {
	responseSchema, _ := officialSchemas(t)
	h := newHarness(t)
	for _, c := range []struct {
		name, body string
		events     []string // the reasoning item's events, after response.in_progress
	}{
		{"summary and encrypted content", reasoningTurn, []string{"response.output_item.added", "response.reasoning_summary_part.added",
			"response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done"}},
		{"no summary", `{"model":"mock-reasoning","input":"Plan a trip"}`, []string{"response.output_item.added", "response.output_item.done"}},
		{"detailed, tools", `{"model":"mock-reasoning","input":"Weather in Paris?","reasoning":{"summary":"detailed"},"tools":[` + flatWeatherTool + `]}`,
			[]string{"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
				"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done"}},
		{"budget eaten", `{"model":"mock-reasoning","input":"Plan a trip","max_output_tokens":100}`, []string{"response.output_item.added", "response.output_item.done"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr := h.do("POST", "/v1/responses", c.body)
			resp := validateOfficial(t, "answer", responseSchema, rr.Body.Bytes())
			streamed := h.do("POST", "/v1/responses", `{"stream":true,`+c.body[1:])
			events := readEvents(t, streamed.Body.Bytes())
			final, _, _ := checkEvents(t, "stream", events)
			got := names(events)[2 : 2+len(c.events)]
			if strings.Join(got, " ") != strings.Join(c.events, " ") {
				t.Errorf("reasoning events %v, want %v", got, c.events)
			}
			if final == nil {
				t.Fatal("the stream did not end with a response")
			}
			// The ids derive from the request, whose stream member differs: the items' types,
			// the message's text and the status are the same.
			if itemTypes(final) != itemTypes(resp) || outputText(final) != outputText(resp) || final["status"] != resp["status"] {
				t.Errorf("the stream's output differs from the JSON answer's:\n%v\n%v", final["output"], resp["output"])
			}
			// The item each output_item.done carries is the one the final response holds.
			done := 0
			for _, e := range events {
				if e.name == "response.output_item.done" {
					a, _ := json.Marshal(e.data["item"])
					b, _ := json.Marshal(final["output"].([]any)[int(e.data["output_index"].(float64))])
					if string(a) != string(b) {
						t.Errorf("output_item.done %s, final %s", a, b)
					}
					done++
				}
			}
			if done != len(final["output"].([]any)) {
				t.Errorf("%d output_item.done events for %d items", done, len(final["output"].([]any)))
			}
			if c.name == "budget eaten" && (resp["status"] != "incomplete" || len(resp["output"].([]any)) != 1) {
				t.Errorf("a budget the reasoning eats whole: %s", rr.Body)
			}
		})
	}
}

// TestReasoningTelemetry: the reasoning tokens reach the chat span
// (gen_ai.usage.reasoning.output_tokens), the access line (reasoning_tokens), the token metric
// (type reasoning, also counted in output) and the journal, for a JSON call and a stream.
func TestReasoningTelemetry(t *testing.T) {
	h := newHarness(t, journaled)
	h.do("POST", chatPath, `{"model":"mock-reasoning","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low"}`)
	h.do("POST", "/v1/responses", `{"model":"mock-reasoning","input":"hi","stream":true,"reasoning":{"effort":"high","summary":"auto"}}`)
	if got := metricValue(t, h.metrics, "mockgateway_tokens_total", map[string]string{"model": "mock-reasoning", "type": "reasoning"}); got != 64+512 {
		t.Errorf("reasoning tokens metric = %v, want %d", got, 64+512)
	}
	if got := metricValue(t, h.metrics, "mockgateway_tokens_total", map[string]string{"model": "mock-reasoning", "type": "output"}); got <= 64+512 {
		t.Errorf("output tokens metric = %v, want the reasoning and more", got)
	}
	var spans []int64
	for _, s := range h.spans.GetSpans() {
		if v, ok := attributeKeys(s.Attributes)["gen_ai.usage.reasoning.output_tokens"]; ok {
			spans = append(spans, v.AsInt64())
		}
	}
	if len(spans) != 2 || spans[0] != 64 || spans[1] != 512 {
		t.Errorf("spans' reasoning tokens: %v", spans)
	}
	var lines []float64
	for _, rec := range h.logs.records(t) {
		if n, ok := rec["reasoning_tokens"].(float64); ok {
			lines = append(lines, n)
		}
	}
	if len(lines) != 2 || lines[0] != 64 || lines[1] != 512 {
		t.Errorf("access lines' reasoning tokens: %v", lines)
	}
	journal := h.do("GET", "/_mock/journal?limit=10", "").Body.String()
	if !strings.Contains(journal, `"reasoning_tokens":512`) || !strings.Contains(journal, `"reasoning_tokens":64`) {
		t.Errorf("journal: %s", journal)
	}
	// Another model reports none.
	h.do("POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"high"}`)
	if got := metricValue(t, h.metrics, "mockgateway_tokens_total", map[string]string{"model": "mock-chat", "type": "reasoning"}); got != 0 {
		t.Errorf("mock-chat reasoning tokens = %v", got)
	}
}

// TestFixtureScriptsReasoning: a fixture's reasoning sets the tokens and the summary's text of
// a reasoning model's answer; tokens the budget cannot hold give the budget-exhausted answer.
func TestFixtureScriptsReasoning(t *testing.T) {
	h := newHarness(t)
	addFixtures(t, h, "reasoning-fixtures", `{"fixtures":[
		{"name":"thought","match":{"last_user":{"contains":"think"}},"reply":{"content":"Forty-two.","reasoning":{"tokens":40,"summary":"**Counting** to forty-two."}}},
		{"name":"exhausted","match":{"last_user":{"contains":"long"}},"reply":{"content":"Never shown.","reasoning":{"tokens":5000}}}]}`)
	rr := h.do("POST", "/v1/responses", `{"model":"mock-reasoning","input":"think","reasoning":{"summary":"auto"}}`, HeaderScope, "reasoning-fixtures")
	body := rr.Body.String()
	if !strings.Contains(body, `"summary":[{"type":"summary_text","text":"**Counting** to forty-two."}]`) ||
		!strings.Contains(body, `"reasoning_tokens":40`) || !strings.Contains(body, `"text":"Forty-two."`) {
		t.Errorf("scripted reasoning: %s", body)
	}
	rr = h.do("POST", chatPath, `{"model":"mock-reasoning","messages":[{"role":"user","content":"a long one"}],"max_completion_tokens":1000}`, HeaderScope, "reasoning-fixtures")
	a := decodeChatReasoning(t, rr.Body)
	if a.Choices[0].FinishReason != "length" || *a.Choices[0].Message.Content != "" || a.Usage.CompletionTokensDetails.ReasoningTokens != 1000 {
		t.Errorf("budget exhausted by scripted reasoning: %s", rr.Body)
	}
}
