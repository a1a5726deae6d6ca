package anthropic

import (
	"encoding/binary"
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// Anthropic's extended thinking on a reasoning model (docs/protocol.md, Reasoning models and
// Anthropic's Messages API): thinking enabled or adaptive gives a thinking block first in the
// answer, its signature sealed like a Responses reasoning item's encrypted content (package
// seal, with a purpose of its own); the rules Anthropic holds a thinking request to are held
// here, in Anthropic's words. Other models accept thinking and ignore it.

// thinkingDocs is where Anthropic's messages send the reader.
const thinkingDocs = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

// defaultThinkingEffort is Anthropic's output_config.effort when a request sends none.
const defaultThinkingEffort = "high"

// RedactedTrigger is the test string Anthropic documents for redacted thinking: a prompt that
// holds it gets a redacted_thinking block instead of a thinking block.
const RedactedTrigger = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING"

// checkThinking refuses what Anthropic refuses of a thinking request — a budget not below
// max_tokens, a temperature other than 1, top_k — and thinking blocks sent back that this mock
// (any replica with the same key) did not sign for this model, or, thinking on, a final
// assistant turn that calls tools without the thinking block it was answered with.
//
// Only a reasoning model's request is held to them: other models accept thinking and ignore it.
func (d *Dialect) checkThinking(model *catalog.Model, req *protocol.Request) *apierr.Error {
	r := req.Reasoning
	if r == nil {
		return nil
	}
	if r.Thinking != "" {
		if r.Thinking == "enabled" && r.ThinkingBudget >= r.ThinkingMaxTokens {
			return apierr.New(apierr.InvalidValue, "thinking.budget_tokens",
				"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "+thinkingDocs+"#max-tokens-and-context-window-size")
		}
		if t := req.Temperature; t != nil && *t != 1 {
			return apierr.New(apierr.UnsupportedValue, "temperature",
				"`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at "+thinkingDocs+"#important-considerations-when-using-extended-thinking")
		}
		if req.Fields.Has("top_k") {
			return apierr.New(apierr.UnsupportedValue, "top_k",
				"`top_k` must be unset when thinking is enabled. Please consult our documentation at "+thinkingDocs+"#important-considerations-when-using-extended-thinking")
		}
	}
	for _, sent := range r.SentThinking {
		if !d.signed(model, &sent) {
			where := "messages." + strconv.Itoa(sent.Turn) + ".content." + strconv.Itoa(sent.Block)
			if sent.Redacted {
				return apierr.New(apierr.InvalidEncryptedContent, "", where+": Invalid `data` in `redacted_thinking` block")
			}
			return apierr.New(apierr.InvalidEncryptedContent, "", where+": Invalid `signature` in `thinking` block")
		}
	}
	if f := r.FinalAssistant; r.Thinking != "" && f != nil && f.FirstBlock != "thinking" && f.FirstBlock != "redacted_thinking" {
		return apierr.New(apierr.InvalidValue, "messages",
			"messages."+strconv.Itoa(f.Turn)+".content.0.type: Expected `thinking` or `redacted_thinking`, but found `"+f.FirstBlock+
				"`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "+thinkingDocs)
	}
	return nil
}

// signed reports whether a thinking block sent back is one this mock made for this model: its
// signature opens, binds the digest of the text sent with it and names the model — Anthropic's
// signatures are bound to the model that made them; a redacted block's data opens and names the
// model.
func (d *Dialect) signed(model *catalog.Model, sent *protocol.SentThinking) bool {
	if sent.Redacted {
		plain, err := d.sealer.Open(seal.RedactedThinking, sent.Seal)
		return err == nil && sealedModel(plain) == model.ID
	}
	plain, err := d.sealer.Open(seal.ThinkingSignature, sent.Seal)
	return err == nil && len(plain) >= len(sent.Digest) && string(plain[:len(sent.Digest)]) == string(sent.Digest[:]) &&
		sealedModel(plain) == model.ID
}

// ReasoningTokens is what a Messages request on a reasoning model spends thinking: none unless
// thinking is enabled or adaptive; else a fixture's count or output_config.effort's (Anthropic's
// default effort being high), at most budget_tokens.
func (*Dialect) ReasoningTokens(req *protocol.Request, hit *fixtures.Hit) int {
	r := req.Reasoning
	if r == nil || r.Thinking == "" {
		return 0
	}
	effort := r.Effort
	if effort == "" {
		effort = defaultThinkingEffort
	}
	n := generate.ReasoningTokens(effort)
	if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Tokens != nil {
		n = *hit.Reply.Reasoning.Tokens
	}
	if r.ThinkingBudget > 0 {
		n = min(n, r.ThinkingBudget)
	}
	return n
}

// thinkingBlock is a Messages answer's thinking block, or nil when the model thinks not: its
// text a fixture's reasoning summary or generated prose (empty with display: omitted), its
// signature the seal of the text's digest and the request's seed — so a changed text fails, and
// two answers never share a signature. A prompt holding Anthropic's test string gets a
// redacted_thinking block, whose data is sealed alike.
func (d *Dialect) thinkingBlock(seed uint64, c *dialect.Call, req *protocol.Request, hit *fixtures.Hit) *protocol.ContentBlock {
	model := c.Model
	if !model.Capabilities.Reasoning || c.Result.ReasoningTokens == 0 {
		return nil
	}
	text := ""
	if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Summary != nil {
		text = *hit.Reply.Reasoning.Summary
	} else {
		text = generate.ReasoningSummary(seed, "detailed")
	}
	if redactedAsked(req) {
		return &protocol.ContentBlock{Redacted: true, Signature: d.sealer.Seal(seal.RedactedThinking, thinkingSeal(text, seed, model))}
	}
	if req.Reasoning.ThinkingOmitted {
		text = ""
	}
	return &protocol.ContentBlock{Thinking: true, Text: text, Signature: d.sealer.Seal(seal.ThinkingSignature, thinkingSeal(text, seed, model))}
}

// thinkingSeal is the plaintext a signature seals: the text's digest and the model's id (which
// signed checks), with the seed between them.
func thinkingSeal(text string, seed uint64, model *catalog.Model) []byte {
	d := protocol.ThinkingDigest(text)
	return append(binary.LittleEndian.AppendUint64(d[:], seed), model.ID...)
}

// sealedModel is the model's id in a thinkingSeal plaintext, "" in a shorter one.
func sealedModel(plain []byte) string {
	const head = len(protocol.SentThinking{}.Digest) + 8 // the digest and the seed
	if len(plain) <= head {
		return ""
	}
	return string(plain[head:])
}

// redactedAsked reports whether the last user message holds Anthropic's redacted-thinking test
// string.
func redactedAsked(req *protocol.Request) bool {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := &req.Messages[i]; m.Role == "user" {
			return strings.Contains(m.Content, RedactedTrigger)
		}
	}
	return false
}
