package chat

import (
	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// usageOf is a chat answer's usage: the reasoning tokens are part of the completion's.
func usageOf(res *generate.Result) protocol.Usage {
	u := protocol.NewUsage(res.PromptTokens, res.CompletionTokens)
	u.CompletionTokensDetails.ReasoningTokens = res.ReasoningTokens
	return u
}

// completionBody is the chat.completion of a call; its contents and arguments are the generated
// text itself, not copies.
func completionBody(c *dialect.Call) protocol.Completion {
	body := protocol.Completion{
		ID: c.ID, Object: "chat.completion", Created: c.Created, Model: c.Model.ID,
		Choices:           make([]protocol.CompletionChoice, len(c.Result.Choices)),
		Usage:             usageOf(&c.Result),
		SystemFingerprint: protocol.SystemFingerprint, ServiceTier: protocol.ServiceTier,
	}
	for i, ch := range c.Result.Choices {
		msg := protocol.AssistantMessage{Role: "assistant", Annotations: []struct{}{}}
		if len(ch.ToolCalls) > 0 {
			for _, tc := range ch.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, protocol.ToolCallJSON{
					ID: tc.ID, Type: "function",
					Function: protocol.FunctionCall{Name: tc.Name, Arguments: tc.Arguments.Text()},
				})
			}
		} else if !ch.Refusal.IsNil() {
			text := ch.Refusal.Text()
			msg.Refusal = &text
		} else {
			text := ch.Text()
			msg.Content = &text
		}
		body.Choices[i] = protocol.CompletionChoice{Index: ch.Index, Message: msg, FinishReason: ch.FinishReason}
	}
	return body
}
