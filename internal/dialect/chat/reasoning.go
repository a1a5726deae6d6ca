package chat

import (
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// Reasoning models (docs/protocol.md, Reasoning models): mock-reasoning and the catalog's
// reasoning: true. On OpenAI's dialects they refuse what OpenAI refuses of a reasoning model,
// verify the reasoning items a client sends back and spend reasoning tokens from the budget
// first; the Responses API answers with a reasoning item before the message
// (dialect/responses). Other models ignore every reasoning parameter.

// CheckReasoning refuses, for a reasoning model, what both OpenAI dialects refuse of one — a
// temperature or top_p other than 1, refused by sampling in the dialect's words — and the
// reasoning items sent back whose encrypted content this mock (any replica with the same key)
// did not seal for this model and the item's id. The messages are OpenAI's, without the value
// sent.
func CheckReasoning(model *catalog.Model, req *protocol.Request, sealer *seal.Sealer, sampling func(param string) *apierr.Error) *apierr.Error {
	if t := req.Temperature; t != nil && *t != 1 {
		return sampling("temperature")
	}
	r := req.Reasoning
	if r == nil {
		return nil
	}
	if r.TopP != nil {
		return sampling("top_p")
	}
	for i := range r.SentBack {
		if reason := unsealedReason(sealer, model, &r.SentBack[i]); reason != "" {
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
func unsealedReason(sealer *seal.Sealer, model *catalog.Model, sent *protocol.SentReasoning) string {
	const undecryptable = "Encrypted content could not be decrypted or parsed."
	plain, err := sealer.Open(seal.ReasoningItem, sent.EncryptedContent)
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

// ReasoningTokens is what a reasoning model spends reasoning per choice on OpenAI's dialects: a
// fixture's count, or the effort's (generate.ReasoningTokens).
func ReasoningTokens(req *protocol.Request, hit *fixtures.Hit) int {
	if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Tokens != nil {
		return *hit.Reply.Reasoning.Tokens
	}
	effort := ""
	if req.Reasoning != nil {
		effort = req.Reasoning.Effort
	}
	return generate.ReasoningTokens(effort)
}
