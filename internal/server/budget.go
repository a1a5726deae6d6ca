package server

import (
	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// checkBudget refuses a budget over the model's output limit, in the dialect's words. A budget
// within it is accepted however far above --max-tokens: the answer stops at --max-tokens as the
// budget would stop it (docs/protocol.md, Output budgets).
func (h *chatHandler) checkBudget(model *catalog.Model, req *protocol.ChatRequest) *apierr.Error {
	if h.dialect == anthropicMessages {
		return generate.CheckAnthropicBudget(req.MaxTokens, model.MaxOutputTokens, model.ID)
	}
	return generate.CheckBudget(req.MaxTokensParam, req.MaxTokens, model.MaxOutputTokens)
}

// contextBudget is the budget the context-window check counts beside the prompt: the one sent,
// as OpenAI counts it; in the Messages dialect at most --max-tokens, whose context error is not
// in Anthropic's words, so that the large budget Claude Code asks for on a long conversation is
// not refused in words it cannot read to recover.
func (h *chatHandler) contextBudget(req *protocol.ChatRequest) int {
	if h.dialect == anthropicMessages {
		return min(req.MaxTokens, h.tokenCeiling)
	}
	return req.MaxTokens
}
