package google

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// Gemini's thinking on a reasoning model (docs/protocol.md, Google's Gemini API): the model
// thinks by default, as Gemini's thinking models do; thinkingBudget 0 turns it off, a positive
// budget bounds it, thinkingLevel LOW thinks less than HIGH; includeThoughts shows the thought
// as a thought part first. The first function call of an answer carries a thoughtSignature,
// sealed like the other dialects' signatures (package seal, with a purpose of its own) and
// sent in standard base64, which the Go SDK decodes as bytes; one sent back must open. Other
// models accept thinkingConfig and ignore it.

// signaturePurpose is the seal's purpose of a thought signature.
const signaturePurpose = "google.thought_signature"

// checkSignatures refuses a thought signature sent back that this mock (any replica with the
// same key) did not seal for that function call and this model. Gemini CLI's skip value is not
// checked.
func (d *Dialect) checkSignatures(model *catalog.Model, req *protocol.Request) *apierr.Error {
	r := req.Reasoning
	if r == nil {
		return nil
	}
	for _, sent := range r.SentThinking {
		if !d.signed(model, &sent) {
			return apierr.New(apierr.InvalidEncryptedContent, "contents["+strconv.Itoa(sent.Turn)+"].parts["+strconv.Itoa(sent.Block)+"].thoughtSignature",
				"Corrupted thought signature.")
		}
	}
	return nil
}

// signed reports whether a signature sent back opens, binds the call it came with and names the
// model.
func (d *Dialect) signed(model *catalog.Model, sent *protocol.SentThinking) bool {
	raw, err := base64.StdEncoding.DecodeString(sent.Seal)
	if err != nil {
		return false
	}
	plain, err := d.sealer.Open(signaturePurpose, base64.RawURLEncoding.EncodeToString(raw))
	head := len(sent.Digest) + 8 // the digest and the seed, then the model's id
	return err == nil && len(plain) > head && string(plain[:len(sent.Digest)]) == string(sent.Digest[:]) && string(plain[head:]) == model.ID
}

// ReasoningTokens is what a Gemini request on a reasoning model spends thinking: none with
// thinkingBudget 0; else a fixture's count or thinkingLevel's (the default effort when it names
// none), at most a positive thinkingBudget.
func (*Dialect) ReasoningTokens(req *protocol.Request, hit *fixtures.Hit) int {
	r := req.Reasoning
	if r != nil && r.Thinking == "disabled" {
		return 0
	}
	effort := ""
	if r != nil {
		effort = r.Effort
	}
	n := generate.ReasoningTokens(effort)
	if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Tokens != nil {
		n = *hit.Reply.Reasoning.Tokens
	}
	if r != nil && r.ThinkingBudget > 0 {
		n = min(n, r.ThinkingBudget)
	}
	return n
}

// thought is the thought part's text when includeThoughts asks for it ("" otherwise): a
// fixture's reasoning summary or generated prose.
func (*Dialect) thought(seed uint64, req *protocol.Request, hit *fixtures.Hit) string {
	if req.Reasoning == nil || req.Reasoning.Summary == "" {
		return ""
	}
	if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Summary != nil {
		return *hit.Reply.Reasoning.Summary
	}
	return generate.ReasoningSummary(seed, "detailed")
}

// signature is the thought signature of the answer's first function call ("" when it calls
// none): the seal of the call's name's digest, the request's seed and the model's id, in
// standard base64.
func (d *Dialect) signature(seed uint64, c *dialect.Call) string {
	ch := &c.Result.Choices[0]
	if len(ch.ToolCalls) == 0 {
		return ""
	}
	digest := protocol.ThinkingDigest(ch.ToolCalls[0].Name)
	sealed := d.sealer.Seal(signaturePurpose, append(binary.LittleEndian.AppendUint64(digest[:], seed), c.Model.ID...))
	raw, _ := base64.RawURLEncoding.DecodeString(sealed) // a seal is always URL-safe base64
	return base64.StdEncoding.EncodeToString(raw)
}
