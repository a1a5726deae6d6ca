package generate

import (
	"testing"

	"mockgateway/internal/protocol"
)

// TestReason: the reasoning comes out of the budget first; what is left is the answer's, a
// prefix of the unbudgeted answer; a budget the reasoning eats whole is empty content cut by
// length, counting only the reasoning the budget held; n choices count it n times.
func TestReason(t *testing.T) {
	req := &protocol.Request{Messages: []protocol.Message{{Role: "user", Content: "Plan a trip"}}, N: 2}
	in := Input{Model: "m", Behavior: BehaviorChat, DefaultTokens: 32, Request: req}
	whole := Reason(in, 64, Generate)
	if whole.ReasoningTokens != 128 || whole.CompletionTokens != 128+whole.Choices[0].Tokens()+whole.Choices[1].Tokens() || whole.Choices[0].FinishReason != "stop" {
		t.Errorf("no budget: %+v", whole)
	}
	budgeted := *req
	budgeted.MaxTokens = 70
	in.Request = &budgeted
	cut := Reason(in, 64, Generate)
	if c := cut.Choices[0]; c.Tokens() != 6 || c.FinishReason != "length" || c.Text() != whole.Choices[0].Content.slice(0, 6).Text() {
		t.Errorf("budget 70: %q %s, want the first 6 tokens of %q", c.Text(), c.FinishReason, whole.Choices[0].Text())
	}
	if budgeted.MaxTokens != 70 {
		t.Error("Reason changed the caller's request")
	}
	budgeted.MaxTokens = 50
	eaten := Reason(in, 64, Generate)
	if c := eaten.Choices[1]; c.Text() != "" || c.Content.IsNil() || c.FinishReason != "length" || eaten.ReasoningTokens != 100 || eaten.CompletionTokens != 100 {
		t.Errorf("eaten: %+v", eaten)
	}
	if ReasoningTokens("") != 192 || ReasoningTokens("minimal") != 16 || ReasoningTokens("high") != 512 || ReasoningTokens("none") != 0 {
		t.Error("the effort table changed: docs/protocol.md documents it")
	}
}

// TestReasoningSummary: a title and one step, three when detailed, the same for the same seed.
func TestReasoningSummary(t *testing.T) {
	a, d := ReasoningSummary(7, "auto"), ReasoningSummary(7, "detailed")
	if a != ReasoningSummary(7, "auto") || len(d) <= len(a) || a[:2] != "**" {
		t.Errorf("auto %q, detailed %q", a, d)
	}
}
