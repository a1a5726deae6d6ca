package protocol

import "testing"

// TestDecodeReasoning: what a reasoning model reads of a request — the effort (chat's
// reasoning_effort, the Responses API's reasoning.effort), the summary, include's encrypted
// content, a top_p other than 1, and the encrypted content of the reasoning items sent back with
// their place in input and their id when they have one — and nothing allocated for a request that sends none of it.
func TestDecodeReasoning(t *testing.T) {
	chat, e := DecodeChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"high","top_p":0.5}`), Limits{})
	if e != nil || chat.Reasoning == nil || chat.Reasoning.Effort != "high" || chat.Reasoning.TopP == nil || *chat.Reasoning.TopP != 0.5 {
		t.Fatalf("chat: %+v %v", chat.Reasoning, e)
	}
	plain, _ := DecodeChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":1}`), Limits{})
	if plain.Reasoning != nil {
		t.Errorf("top_p 1 kept: %+v", plain.Reasoning)
	}
	resp, _, e := DecodeResponsesRequest([]byte(`{"model":"m","reasoning":{"effort":"low","summary":"detailed"},"include":["reasoning.encrypted_content"],`+
		`"input":[{"role":"user","content":"a"},{"type":"reasoning","id":"rs_1","summary":[],"content":null,"encrypted_content":"sealed-1"},`+
		`{"type":"reasoning","id":"rs_2","summary":[]},{"role":"user","content":"b"},{"type":"reasoning","summary":[],"encrypted_content":"sealed-3"}]}`), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	r := resp.Reasoning
	if r == nil || r.Effort != "low" || r.Summary != "detailed" || !r.Encrypted || len(r.SentBack) != 2 ||
		r.SentBack[0] != (SentReasoning{Item: 1, ID: "rs_1", EncryptedContent: "sealed-1"}) || r.SentBack[1] != (SentReasoning{Item: 4, EncryptedContent: "sealed-3"}) {
		t.Errorf("responses: %+v", r)
	}
	if len(resp.Messages) != 2 {
		t.Errorf("reasoning items became messages: %+v", resp.Messages)
	}
	none, _, _ := DecodeResponsesRequest([]byte(`{"model":"m","input":"hi","include":["message.output_text.logprobs"]}`), Limits{})
	if none.Reasoning != nil {
		t.Errorf("a request without reasoning got %+v", none.Reasoning)
	}
}

// TestDecodeThinking: what a reasoning model reads of a Messages request — thinking's type,
// budget and display, max_tokens as sent (before the ceiling), output_config.effort, the
// thinking and redacted_thinking blocks sent back with their place and a digest of their text
// (never the text), and the last assistant turn when it calls tools — and nothing allocated for
// a request that sends none of it.
func TestDecodeThinking(t *testing.T) {
	req, e := DecodeAnthropicRequest([]byte(`{"model":"m","max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":2048,"display":"omitted"},
		"output_config":{"effort":"low"},"messages":[
		{"role":"user","content":"a"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"first","signature":"sig-1"},{"type":"text","text":"b"}]},
		{"role":"user","content":"c"},
		{"role":"assistant","content":[{"type":"text","text":"d"},{"type":"redacted_thinking","data":"data-2"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"e"}]}]}`), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	r := req.Reasoning
	if r == nil || r.Thinking != "enabled" || r.ThinkingBudget != 2048 || !r.ThinkingOmitted || r.ThinkingMaxTokens != 32000 || req.MaxTokens != 32000 || r.Effort != "low" {
		t.Fatalf("thinking: %+v (max_tokens %d)", r, req.MaxTokens)
	}
	want := []SentThinking{
		{Turn: 1, Block: 0, Digest: ThinkingDigest("first"), Seal: "sig-1"},
		{Turn: 3, Block: 1, Redacted: true, Seal: "data-2"},
	}
	if len(r.SentThinking) != 2 || r.SentThinking[0] != want[0] || r.SentThinking[1] != want[1] {
		t.Errorf("sent back: %+v", r.SentThinking)
	}
	if f := r.FinalAssistant; f == nil || *f != (AssistantTurn{Turn: 3, FirstBlock: "text"}) {
		t.Errorf("final assistant turn: %+v", f)
	}
	// A later assistant turn without tools clears it; adaptive has no budget.
	later, e := DecodeAnthropicRequest([]byte(`{"model":"m","max_tokens":8,"thinking":{"type":"adaptive"},"messages":[
		{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"e"}]},{"role":"assistant","content":"done"},{"role":"user","content":"more"}]}`), Limits{})
	if e != nil || later.Reasoning.Thinking != "adaptive" || later.Reasoning.FinalAssistant != nil || later.Reasoning.ThinkingBudget != 0 {
		t.Errorf("later: %+v %v", later.Reasoning, e)
	}
	for _, body := range []string{
		`{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"a"}]}`,
		`{"model":"m","max_tokens":8,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"a"}]}`,
	} {
		if none, e := DecodeAnthropicRequest([]byte(body), Limits{}); e != nil || none.Reasoning != nil {
			t.Errorf("%s: %+v %v", body, none.Reasoning, e)
		}
	}
}
