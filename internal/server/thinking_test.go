package server

import (
	"encoding/json"
	"strings"
	"testing"

	"mockgateway/internal/dialect/anthropic"
)

// sharedSealKey makes signatures the same in every run, for the golden files.
func sharedSealKey(d *Deps) { d.Config.SealKey = "a key every replica shares" }

// thinkingAnswer is a Messages answer's blocks as a client decodes them, thinking included.
type thinkingAnswer struct {
	Content []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  *string         `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func decodeThinking(t *testing.T, body []byte) thinkingAnswer {
	t.Helper()
	var a thinkingAnswer
	if err := json.Unmarshal(body, &a); err != nil || len(a.Content) == 0 {
		t.Fatalf("not a message: %s", body)
	}
	return a
}

const thinkingOn = `"thinking":{"type":"enabled","budget_tokens":1024}`

// TestThinkingGolden: a reasoning model's thinking block, in a JSON answer and in a stream
// (content_block_start, thinking_delta, signature_delta, content_block_stop before the text or
// tool_use blocks), byte for byte.
func TestThinkingGolden(t *testing.T) {
	h := newHarness(t, sharedSealKey)
	for _, c := range []struct{ name, body string }{
		{"messages_thinking_json.golden", `{"model":"mock-reasoning","max_tokens":2048,` + thinkingOn + `,"messages":[{"role":"user","content":"Plan a trip"}]}`},
		{"messages_thinking_stream.golden", `{"model":"mock-reasoning","max_tokens":2048,"stream":true,` + thinkingOn + `,"messages":[{"role":"user","content":"Plan a trip"}]}`},
		{"messages_thinking_tools_stream.golden", `{"model":"mock-reasoning","max_tokens":4096,"stream":true,"thinking":{"type":"adaptive"},"tools":[` + anthropicWeatherTool + `],"tool_choice":{"type":"auto"},"messages":[{"role":"user","content":"weather?"}]}`},
		{"messages_thinking_omitted_stream.golden", `{"model":"mock-reasoning","max_tokens":2048,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024,"display":"omitted"},"messages":[{"role":"user","content":"Plan a trip"}]}`},
		{"messages_thinking_redacted_json.golden", `{"model":"mock-reasoning","max_tokens":2048,` + thinkingOn + `,"messages":[{"role":"user","content":"` + anthropic.RedactedTrigger + `_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr := h.anthropic(messagesPath, c.body)
			if rr.Code != 200 {
				t.Fatalf("%d %s", rr.Code, rr.Body)
			}
			golden(t, c.name, rr.Body.Bytes())
		})
	}
}

// TestThinkingTokens: thinking tokens are output_config.effort's (high when absent), at most
// budget_tokens, within output_tokens; without thinking, or on a model that does not reason,
// there is no thinking block and no thinking token.
func TestThinkingTokens(t *testing.T) {
	h := newHarness(t)
	plain := decodeThinking(t, h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":4096,"messages":[{"role":"user","content":"Plan a trip"}]}`).Body.Bytes())
	if len(plain.Content) != 1 || plain.Content[0].Type != "text" {
		t.Fatalf("no thinking asked, got %+v", plain.Content)
	}
	text := plain.Usage.OutputTokens
	for _, c := range []struct {
		name, fields string
		want         int
	}{
		{"enabled, default effort", thinkingOn, 512},
		{"adaptive, low effort", `"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}`, 64},
		{"adaptive, max effort", `"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}`, 2048},
		{"max effort within the budget", `"thinking":{"type":"enabled","budget_tokens":1500},"output_config":{"effort":"max"}`, 1500},
		{"disabled", `"thinking":{"type":"disabled"}`, 0},
	} {
		a := decodeThinking(t, h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":4096,`+c.fields+`,"messages":[{"role":"user","content":"Plan a trip"}]}`).Body.Bytes())
		if a.Usage.OutputTokens != text+c.want {
			t.Errorf("%s: output_tokens %d, want %d (text) + %d (thinking)", c.name, a.Usage.OutputTokens, text, c.want)
		}
		if thinks := a.Content[0].Type == "thinking"; thinks != (c.want > 0) || a.Content[len(a.Content)-1].Text != plain.Content[0].Text {
			t.Errorf("%s: blocks %+v", c.name, a.Content)
		}
	}
	other := decodeThinking(t, h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":4096,"temperature":0.5,`+thinkingOn+`,"messages":[{"role":"user","content":"Plan a trip"}]}`).Body.Bytes())
	if len(other.Content) != 1 || other.Content[0].Type != "text" {
		t.Errorf("mock-chat thought: %+v", other.Content)
	}
}

// TestThinkingCutByCeiling: a max_tokens the mock's ceiling cuts below the thinking leaves the
// thinking block alone, stopped by max_tokens, as Anthropic's answer cut mid-thought.
func TestThinkingCutByCeiling(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Config.MaxTokens = 100 })
	a := decodeThinking(t, h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":2048,`+thinkingOn+`,"messages":[{"role":"user","content":"Plan a trip"}]}`).Body.Bytes())
	if len(a.Content) != 1 || a.Content[0].Type != "thinking" || a.StopReason != "max_tokens" || a.Usage.OutputTokens != 100 {
		t.Errorf("got %+v", a)
	}
}

// thinkingLoop is a tool loop's second request: the first answer's assistant turn (as given) and
// the tool's result.
func thinkingLoop(assistant, thinking string) string {
	return `{"model":"mock-reasoning","max_tokens":4096,` + thinking + `,"tools":[` + anthropicWeatherTool + `],"messages":[` +
		`{"role":"user","content":"weather?"},{"role":"assistant","content":` + assistant + `},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}]}]}`
}

// firstTurn is a tool loop's first answer on mock-reasoning: its content, as JSON, and its
// thinking block's text and signature.
func firstTurn(t *testing.T, h *harness) (content string, thinking, signature string) {
	t.Helper()
	rr := h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":4096,`+thinkingOn+`,"tools":[`+anthropicWeatherTool+`],"messages":[{"role":"user","content":"weather?"}]}`)
	a := decodeThinking(t, rr.Body.Bytes())
	if len(a.Content) != 2 || a.Content[0].Type != "thinking" || a.Content[1].Type != "tool_use" || a.Content[0].Signature == "" || *a.Content[0].Thinking == "" {
		t.Fatalf("first turn: %s", rr.Body)
	}
	var raw struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(rr.Body.Bytes(), &raw)
	// The tool result names the call: give it the id the test's second turn uses.
	content = strings.Replace(string(raw.Content), `"id":"`+a.Content[1].ID+`"`, `"id":"toolu_1"`, 1)
	return content, *a.Content[0].Thinking, a.Content[0].Signature
}

// TestThinkingToolLoop: the thinking block passed back unchanged before its tool_use is taken;
// with thinking off, the turn may come back without it.
func TestThinkingToolLoop(t *testing.T) {
	h := newHarness(t)
	content, _, _ := firstTurn(t, h)
	for name, body := range map[string]string{
		"passed back":           thinkingLoop(content, thinkingOn),
		"adaptive":              thinkingLoop(content, `"thinking":{"type":"adaptive"}`),
		"thinking off, kept":    thinkingLoop(content, `"thinking":{"type":"disabled"}`),
		"thinking off, dropped": thinkingLoop(`[`+dropThinking(t, content)+`]`, `"thinking":{"type":"disabled"}`),
	} {
		if rr := h.anthropic(messagesPath, body); rr.Code != 200 {
			t.Errorf("%s: %d %s", name, rr.Code, rr.Body)
		}
	}
	// A replica with the same key takes the block as well; one with another key does not.
	if rr := newHarness(t, sharedSealKey).anthropic(messagesPath, thinkingLoop(content, thinkingOn)); rr.Code != 400 {
		t.Errorf("another key took the signature: %d", rr.Code)
	}
	shared := newHarness(t, sharedSealKey)
	c2, _, _ := firstTurn(t, shared)
	if rr := newHarness(t, sharedSealKey).anthropic(messagesPath, thinkingLoop(c2, thinkingOn)); rr.Code != 200 {
		t.Errorf("a replica with the same key refused: %d %s", rr.Code, rr.Body)
	}
}

// dropThinking is an answer's content without its first (thinking) block, as the bare list of
// the blocks left.
func dropThinking(t *testing.T, content string) string {
	t.Helper()
	var blocks []json.RawMessage
	if err := json.Unmarshal([]byte(content), &blocks); err != nil {
		t.Fatal(err)
	}
	parts := make([]string, 0, len(blocks)-1)
	for _, b := range blocks[1:] {
		parts = append(parts, string(b))
	}
	return strings.Join(parts, ",")
}

// TestThinkingRefusals: what Anthropic refuses of a thinking request, refused in its words
// (docs/protocol.md cites where each was seen), with the closed set's code in the access log.
func TestThinkingRefusals(t *testing.T) {
	h := newHarness(t)
	content, thinking, signature := firstTurn(t, h)
	toolUse := dropThinking(t, content)
	block := func(text, sig string) string {
		b, _ := json.Marshal(map[string]string{"type": "thinking", "thinking": text, "signature": sig})
		return string(b)
	}
	flipped := []byte(signature)
	flipped[len(flipped)/2] ^= 1
	if flipped[len(flipped)/2] == '-' || flipped[len(flipped)/2] == '_' {
		flipped[len(flipped)/2] = 'A'
	}
	const invalidSignature = "messages.1.content.0: Invalid `signature` in `thinking` block"
	plan := `,"messages":[{"role":"user","content":"Plan a trip"}]}`
	for _, c := range []struct {
		name, body, code, message string
	}{
		{"budget not below max_tokens", `{"model":"mock-reasoning","max_tokens":1024,` + thinkingOn + plan, "invalid_value",
			"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"},
		{"budget above the ceiling's cut", `{"model":"mock-reasoning","max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":32001}` + plan, "invalid_value",
			"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"},
		{"temperature", `{"model":"mock-reasoning","max_tokens":2048,"temperature":0.7,` + thinkingOn + plan, "unsupported_value",
			"`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking"},
		{"temperature, adaptive", `{"model":"mock-reasoning","max_tokens":2048,"temperature":0,"thinking":{"type":"adaptive"}` + plan, "unsupported_value",
			"`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking"},
		{"top_k", `{"model":"mock-reasoning","max_tokens":2048,"top_k":40,` + thinkingOn + plan, "unsupported_value",
			"`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking"},
		{"thinking block dropped", thinkingLoop(`[`+toolUse+`]`, thinkingOn), "invalid_value",
			"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"},
		{"text before the tool_use, no thinking", thinkingLoop(`[{"type":"text","text":"Let me look."},`+toolUse+`]`, `"thinking":{"type":"adaptive"}`), "invalid_value",
			"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"},
		{"forged signature", thinkingLoop(`[`+block(thinking, "EqQBCkgIBhABGAIiQL7Forged")+`,`+toolUse+`]`, thinkingOn), "invalid_encrypted_content", invalidSignature},
		{"tampered signature", thinkingLoop(`[`+block(thinking, string(flipped))+`,`+toolUse+`]`, thinkingOn), "invalid_encrypted_content", invalidSignature},
		{"changed thinking", thinkingLoop(`[`+block(thinking+" And more.", signature)+`,`+toolUse+`]`, thinkingOn), "invalid_encrypted_content", invalidSignature},
		{"empty signature", thinkingLoop(`[`+block(thinking, "")+`,`+toolUse+`]`, thinkingOn), "invalid_encrypted_content", invalidSignature},
		{"forged, thinking off", thinkingLoop(`[`+block(thinking, "forged")+`,`+toolUse+`]`, `"thinking":{"type":"disabled"}`), "invalid_encrypted_content", invalidSignature},
		{"forged redacted data", thinkingLoop(`[{"type":"redacted_thinking","data":"`+signature+`"},`+toolUse+`]`, thinkingOn), "invalid_encrypted_content",
			"messages.1.content.0: Invalid `data` in `redacted_thinking` block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr := h.anthropic(messagesPath, c.body)
			var e struct {
				Error struct{ Type, Message string } `json:"error"`
			}
			if err := json.Unmarshal(rr.Body.Bytes(), &e); err != nil || rr.Code != 400 || e.Error.Type != "invalid_request_error" || e.Error.Message != c.message {
				t.Fatalf("%d %s\nwant message %s", rr.Code, rr.Body, c.message)
			}
			recs := h.logs.records(t)
			if last := recs[len(recs)-1]; last["error_code"] != c.code {
				t.Errorf("error_code %v, want %s", last["error_code"], c.code)
			}
		})
	}
	// The same requests on a model that does not reason are answered.
	for _, body := range []string{
		`{"model":"mock-tools","max_tokens":1024,"temperature":0.7,"top_k":5,` + thinkingOn + plan,
		strings.Replace(thinkingLoop(`[`+block(thinking, "forged")+`,`+toolUse+`]`, thinkingOn), "mock-reasoning", "mock-tools", 1),
	} {
		if rr := h.anthropic(messagesPath, body); rr.Code != 200 {
			t.Errorf("mock-tools: %d %s", rr.Code, rr.Body)
		}
	}
}

// TestThinkingTelemetry: thinking tokens are reasoning tokens in every signal — the span's
// gen_ai.usage.reasoning.output_tokens, the access line's reasoning_tokens, the token metric's
// type reasoning — for a JSON call and a stream; the thinking text and signature in none.
func TestThinkingTelemetry(t *testing.T) {
	h := newHarness(t, journaled)
	first := h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":2048,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"},"messages":[{"role":"user","content":"hi"}]}`)
	a := decodeThinking(t, first.Body.Bytes())
	h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":2048,"stream":true,`+thinkingOn+`,"messages":[{"role":"user","content":"hi"}]}`)
	if got := metricValue(t, h.metrics, "mockgateway_tokens_total", map[string]string{"model": "mock-reasoning", "type": "reasoning"}); got != 64+512 {
		t.Errorf("reasoning tokens metric = %v, want %d", got, 64+512)
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
	if !strings.Contains(journal, `"reasoning_tokens":512`) || strings.Contains(journal, a.Content[0].Signature) || strings.Contains(journal, *a.Content[0].Thinking) {
		t.Errorf("journal: %s", journal)
	}
}

// TestFixtureScriptsThinking: a fixture's reasoning — one syntax across the dialects — sets a
// thinking block's text (its summary) and its tokens, at most budget_tokens.
func TestFixtureScriptsThinking(t *testing.T) {
	h := newHarness(t)
	addFixtures(t, h, "thinking-fixtures", `{"fixtures":[
		{"name":"thought","match":{"last_user":{"contains":"think"}},"reply":{"content":"Forty-two.","reasoning":{"tokens":40,"summary":"Counting to forty-two."}}},
		{"name":"long","match":{"last_user":{"contains":"long"}},"reply":{"content":"Done.","reasoning":{"tokens":5000,"summary":"A long thought."}}}]}`)
	a := decodeThinking(t, h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":2048,`+thinkingOn+`,"messages":[{"role":"user","content":"think"}]}`, HeaderScope, "thinking-fixtures").Body.Bytes())
	if len(a.Content) != 2 || *a.Content[0].Thinking != "Counting to forty-two." || a.Content[1].Text != "Forty-two." || a.Usage.OutputTokens != 40+1 {
		t.Errorf("scripted thinking: %+v", a)
	}
	a = decodeThinking(t, h.anthropic(messagesPath, `{"model":"mock-reasoning","max_tokens":2048,`+thinkingOn+`,"messages":[{"role":"user","content":"a long one"}]}`, HeaderScope, "thinking-fixtures").Body.Bytes())
	if *a.Content[0].Thinking != "A long thought." || a.Usage.OutputTokens != 1024+1 {
		t.Errorf("scripted thinking beyond budget_tokens: %+v", a)
	}
}

// thinkingTurnOf is a tool loop's first answer on model: its content as JSON, the tool call's id
// set to toolu_1.
func thinkingTurnOf(t *testing.T, h *harness, model, prompt string) string {
	t.Helper()
	rr := h.anthropic(messagesPath, `{"model":"`+model+`","max_tokens":4096,`+thinkingOn+`,"tools":[`+anthropicWeatherTool+`],"messages":[{"role":"user","content":`+prompt+`}]}`)
	a := decodeThinking(t, rr.Body.Bytes())
	if len(a.Content) < 2 || (a.Content[0].Type != "thinking" && a.Content[0].Type != "redacted_thinking") || a.Content[1].Type != "tool_use" {
		t.Fatalf("first turn: %s", rr.Body)
	}
	var raw struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(rr.Body.Bytes(), &raw)
	return strings.Replace(string(raw.Content), `"id":"`+a.Content[1].ID+`"`, `"id":"toolu_1"`, 1)
}

// TestThinkingSealedForItsModel: in a catalog with two reasoning models, a thinking block's
// signature — or a redacted_thinking block's data — one model made is refused by the other, in
// Anthropic's words ("Invalid `signature` in `thinking` block": Anthropic's signatures are bound
// to the model that made them), thinking on or off, JSON or streamed; the model that made it
// takes it, and a model that does not reason ignores it.
func TestThinkingSealedForItsModel(t *testing.T) {
	h := newHarness(t, twoReasoners(t))
	thinking := thinkingTurnOf(t, h, "mock-reasoning", `"weather?"`)
	redacted := thinkingTurnOf(t, h, "mock-reasoning", `"weather? `+anthropic.RedactedTrigger+`"`)
	loop := func(model, content, thinkingField string, stream bool) string {
		body := strings.Replace(thinkingLoop(content, thinkingField), `"model":"mock-reasoning"`, `"model":"`+model+`"`, 1)
		if stream {
			body = `{"stream":true,` + body[1:]
		}
		return body
	}
	for _, stream := range []bool{false, true} {
		for _, turn := range []struct{ name, content, message string }{
			{"thinking", thinking, "messages.1.content.0: Invalid `signature` in `thinking` block"},
			{"redacted_thinking", redacted, "messages.1.content.0: Invalid `data` in `redacted_thinking` block"},
		} {
			if rr := h.anthropic(messagesPath, loop("mock-reasoning", turn.content, thinkingOn, stream)); rr.Code != 200 {
				t.Errorf("%s, stream %t, the model that made it: %d %s", turn.name, stream, rr.Code, rr.Body)
			}
			if rr := h.anthropic(messagesPath, loop("mock-tools", turn.content, thinkingOn, stream)); rr.Code != 200 {
				t.Errorf("%s, stream %t, a model that does not reason: %d %s", turn.name, stream, rr.Code, rr.Body)
			}
			for _, field := range []string{thinkingOn, `"thinking":{"type":"disabled"}`} {
				rr := h.anthropic(messagesPath, loop("mock-thinker", turn.content, field, stream))
				sealRefusal(t, h, turn.name+" on another reasoning model", rr.Code, rr.Body.Bytes(), turn.message)
			}
		}
	}
}
