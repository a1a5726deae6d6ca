package server

import (
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/config"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// Reasoning models (docs/protocol.md, Reasoning models): mock-reasoning and the catalog's
// reasoning: true. They refuse what OpenAI refuses of a reasoning model, verify the reasoning
// items a client sends back, spend reasoning tokens from the budget first and, on the Responses
// API, answer with a reasoning item before the message (Anthropic's thinking: thinking.go).
// Other models ignore every reasoning parameter.

// NewSealer is the sealer of --seal-key, or of a random key when it is unset.
func NewSealer(cfg config.Config) *seal.Sealer {
	if cfg.SealKey == "" {
		return seal.Random()
	}
	return seal.New(cfg.SealKey)
}

// checkReasoning refuses, for a reasoning model, what OpenAI refuses of one — max_tokens, and a
// temperature or top_p other than 1 — and the reasoning items sent back whose encrypted content
// this mock (any replica with the same key) did not seal for this model and the item's id. The
// messages are OpenAI's, without the value sent. A Messages request is held to Anthropic's thinking rules instead (thinking.go).
func (h *chatHandler) checkReasoning(model *catalog.Model, req *protocol.ChatRequest) *apierr.Error {
	if !model.Capabilities.Reasoning {
		return nil
	}
	if h.dialect == anthropicMessages {
		return h.checkThinking(model, req)
	}
	if h.dialect == chatCompletions && req.Fields.Has("max_tokens") {
		return apierr.New(apierr.UnsupportedParameter, "max_tokens",
			"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
	}
	if t := req.Temperature; t != nil && *t != 1 {
		return h.unsupportedSampling("temperature")
	}
	r := req.Reasoning
	if r == nil {
		return nil
	}
	if r.TopP != nil {
		return h.unsupportedSampling("top_p")
	}
	for i := range r.SentBack {
		if reason := h.unsealedReason(model, &r.SentBack[i]); reason != "" {
			// OpenAI names the item by its id, which is the client's text; the mock names its
			// place. param is null, as OpenAI's.
			return apierr.New(apierr.InvalidEncryptedContent, "",
				"The encrypted content for the reasoning item at input["+strconv.Itoa(r.SentBack[i].Item)+"] could not be verified. Reason: "+reason)
		}
	}
	return nil
}

// unsealedReason is why a reasoning item sent back does not verify, in OpenAI's words, or ""
// when it does: its encrypted content opens, was sealed for the model it is sent to — another
// model's reads as content that does not decrypt, as it does for OpenAI — and for the id sent
// beside it, when one is (the Codex CLI sends its items without one).
func (h *chatHandler) unsealedReason(model *catalog.Model, sent *protocol.SentReasoning) string {
	const undecryptable = "Encrypted content could not be decrypted or parsed."
	plain, err := h.sealer.Open(seal.ReasoningItem, sent.EncryptedContent)
	if err != nil {
		return undecryptable
	}
	id, rest, _ := strings.Cut(string(plain), "\x00")
	sealedModel, _, _ := strings.Cut(rest, "\x00")
	if sealedModel != model.ID {
		return undecryptable
	}
	if sent.ID != "" && sent.ID != id {
		return "Encrypted content item_id did not match the target item id."
	}
	return ""
}

// unsupportedSampling refuses a temperature or top_p other than 1 in each dialect's words:
// Chat Completions' unsupported_value (its message names the value sent, which the mock's
// never does), the Responses API's "Unsupported parameter" (docs/protocol.md, Reasoning models).
func (h *chatHandler) unsupportedSampling(param string) *apierr.Error {
	if h.dialect == responsesAPI {
		return apierr.New(apierr.UnsupportedParameter, param, "Unsupported parameter: '"+param+"' is not supported with this model.")
	}
	return apierr.New(apierr.UnsupportedValue, param,
		"Unsupported value: '"+param+"' does not support this value with this model. Only the default (1) value is supported.")
}

// reasoningTokens is what a reasoning model spends reasoning per choice: a fixture's count, or
// the effort's (generate.ReasoningTokens) — a Messages request's only with thinking on
// (thinkingTokens); 0 for other models.
func reasoningTokens(model *catalog.Model, req *protocol.ChatRequest, hit *fixtures.Hit) int {
	if !model.Capabilities.Reasoning {
		return 0
	}
	if req.Fields.Anthropic() {
		return thinkingTokens(req, hit)
	}
	if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Tokens != nil {
		return *hit.Reply.Reasoning.Tokens
	}
	effort := ""
	if req.Reasoning != nil {
		effort = req.Reasoning.Effort
	}
	return generate.ReasoningTokens(effort)
}

// reasoningItem is a Responses answer's reasoning item, or nil when the model reasons not (or
// not at this effort): its id from the response's, its summary when the request asks for one
// (a fixture's, or generated prose), and its encrypted content, sealed, when include asks for
// it. The sealed plaintext names the item, the model and the tokens — nothing of the request's
// text — and is the same in every replica, so the seal is too.
func (h *chatHandler) reasoningItem(respID string, seed uint64, model *catalog.Model, req *protocol.ChatRequest, res *generate.Result, hit *fixtures.Hit) *protocol.OutputItem {
	if !model.Capabilities.Reasoning || res.ReasoningTokens == 0 {
		return nil
	}
	it := &protocol.OutputItem{Reasoning: true, ID: itemID(respID, "rs_", 0), Status: "completed"}
	r := req.Reasoning
	if r != nil && r.Summary != "" {
		if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Summary != nil {
			it.Summary = *hit.Reply.Reasoning.Summary
		} else {
			it.Summary = generate.ReasoningSummary(seed, r.Summary)
		}
	}
	if r != nil && r.Encrypted {
		plain := it.ID + "\x00" + model.ID + "\x00" + strconv.Itoa(res.ReasoningTokens)
		it.EncryptedContent = h.sealer.Seal(seal.ReasoningItem, []byte(plain))
	}
	return it
}
