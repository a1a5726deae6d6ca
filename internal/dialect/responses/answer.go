package responses

import (
	"encoding/hex"
	"strconv"
	"time"

	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// The Responses API's answer, made from the same generated result as a chat completion's.

// responseID is the response's id, derived from the request and the model that answers it: the
// same request gets the same id from every replica, as it gets the same answer. The items' ids
// share its suffix (itemID).
func responseID(seed uint64, model string) string {
	var b [16]byte
	h := dialect.HashString(seed, model)
	for i := range 8 {
		b[i], b[8+i] = byte(seed>>(8*i)), byte(h>>(8*i))
	}
	var out [len("resp_") + 32]byte
	copy(out[:], "resp_")
	hex.Encode(out[len("resp_"):], b[:])
	return string(out[:])
}

// itemID is the id of an answer's k-th item: msg_… for a message, fc_… for a function call.
func itemID(respID, prefix string, k int) string {
	return prefix + respID[len("resp_"):] + strconv.Itoa(k)
}

// responseStatus is a settled answer's status and incomplete reason: an answer cut by its
// budget (max_output_tokens, or the mock's --max-tokens) is incomplete, as OpenAI's is, and so is
// one a fixture ends with content_filter.
func responseStatus(finish string) (status, incomplete string) {
	switch finish {
	case "length":
		return "incomplete", "max_output_tokens"
	case "content_filter":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// responseBody is the JSON answer of a Responses API call: the first (only) choice as a message
// or as function calls, the usage, and what the request asked to be echoed.
func responseBody(r *reply) protocol.Response {
	c := r.c
	ch := &c.Result.Choices[0]
	status, incomplete := responseStatus(ch.FinishReason)
	body := protocol.Response{
		ID: c.ID, CreatedAt: c.Created, Status: status, Incomplete: incomplete, Model: c.Model.ID,
		Usage: responseUsage(&c.Result),
		Echo:  r.echo,
	}
	if status == "completed" {
		body.CompletedAt = time.Now().Unix()
	}
	body.Output = outputItems(c.ID, ch, status)
	if r.reasoning != nil {
		body.Output = withReasoning(r.reasoning, body.Output, ch)
	}
	return body
}

// responseUsage is an answer's usage in the Responses API's names.
func responseUsage(res *generate.Result) *protocol.ResponseUsage {
	return &protocol.ResponseUsage{Input: res.PromptTokens, Output: res.CompletionTokens, Reasoning: res.ReasoningTokens}
}

// withReasoning puts the reasoning item before the answer's items. An answer whose budget the
// reasoning ate whole has only the reasoning item, as OpenAI's has.
func withReasoning(rs *protocol.OutputItem, items []protocol.OutputItem, ch *generate.Choice) []protocol.OutputItem {
	if dialect.EatenByReasoning(ch) {
		return []protocol.OutputItem{*rs}
	}
	return append([]protocol.OutputItem{*rs}, items...)
}

// outputItems are a settled choice's items: one per function call, or the message.
func outputItems(respID string, ch *generate.Choice, status string) []protocol.OutputItem {
	if len(ch.ToolCalls) > 0 {
		items := make([]protocol.OutputItem, len(ch.ToolCalls))
		for k, tc := range ch.ToolCalls {
			items[k] = protocol.OutputItem{
				Function: true, ID: itemID(respID, "fc_", k), Status: "completed",
				CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments.Text(),
			}
		}
		return items
	}
	msg := protocol.OutputItem{ID: itemID(respID, "msg_", 0), Status: status, Text: ch.Text()}
	if !ch.Refusal.IsNil() {
		msg.Text, msg.Refusal = ch.Refusal.Text(), true
	}
	return []protocol.OutputItem{msg}
}
