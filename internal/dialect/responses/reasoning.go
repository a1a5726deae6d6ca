package responses

import (
	"strconv"

	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// reasoningItem is a Responses answer's reasoning item, or nil when the model reasons not (or
// not at this effort): its id from the response's, its summary when the request asks for one
// (a fixture's, or generated prose), and its encrypted content, sealed, when include asks for
// it. The sealed plaintext names the item, the model and the tokens — nothing of the request's
// text — and is the same in every replica, so the seal is too.
func (d *Dialect) reasoningItem(c *dialect.Call, seed uint64, req *protocol.Request, hit *fixtures.Hit) *protocol.OutputItem {
	if !c.Model.Capabilities.Reasoning || c.Result.ReasoningTokens == 0 {
		return nil
	}
	it := &protocol.OutputItem{Reasoning: true, ID: itemID(c.ID, "rs_", 0), Status: "completed"}
	r := req.Reasoning
	if r != nil && r.Summary != "" {
		if hit != nil && hit.Reply.Reasoning != nil && hit.Reply.Reasoning.Summary != nil {
			it.Summary = *hit.Reply.Reasoning.Summary
		} else {
			it.Summary = generate.ReasoningSummary(seed, r.Summary)
		}
	}
	if r != nil && r.Encrypted {
		plain := it.ID + "\x00" + c.Model.ID + "\x00" + strconv.Itoa(c.Result.ReasoningTokens)
		it.EncryptedContent = d.sealer.Seal(seal.ReasoningItem, []byte(plain))
	}
	return it
}
