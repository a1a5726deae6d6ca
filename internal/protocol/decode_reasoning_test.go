package protocol

import "testing"

// TestDecodeReasoning: what a reasoning model reads of a request — the effort (chat's
// reasoning_effort, the Responses API's reasoning.effort), the summary, include's encrypted
// content, a top_p other than 1, and the encrypted content of the reasoning items sent back with
// their place in input — and nothing allocated for a request that sends none of it.
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
		`{"type":"reasoning","id":"rs_2","summary":[]},{"role":"user","content":"b"},{"type":"reasoning","id":"rs_3","summary":[],"encrypted_content":"sealed-3"}]}`), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	r := resp.Reasoning
	if r == nil || r.Effort != "low" || r.Summary != "detailed" || !r.Encrypted || len(r.SentBack) != 2 ||
		r.SentBack[0] != (SentReasoning{Item: 1, EncryptedContent: "sealed-1"}) || r.SentBack[1] != (SentReasoning{Item: 4, EncryptedContent: "sealed-3"}) {
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
