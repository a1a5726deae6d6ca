// Package anthropic is Anthropic's Messages dialect (POST /v1/messages, POST
// /v1/messages/count_tokens, version 2023-06-01): its decoder's entry (the anthropic-version
// header, then protocol.DecodeAnthropicRequest), its answer (a message: a reasoning model's
// thinking block, then text or tool_use blocks), its stream of Anthropic's events, its error
// envelope and statuses (errors.go), its model list, and Anthropic's extended thinking
// (thinking.go). Its requests carry anthropic-version on every call, which chooses it on the
// routes the dialects share (the model list, an unknown path).
package anthropic

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
	"mockgateway/observability"
)

// Dialect is Anthropic's Messages API.
type Dialect struct {
	sealer *seal.Sealer // signs thinking blocks and checks those sent back (thinking.go)
}

// New is the dialect; sealer signs the thinking blocks and opens those sent back.
func New(sealer *seal.Sealer) *Dialect { return &Dialect{sealer: sealer} }

// versionHeader is the header every Anthropic request carries (the SDKs always send
// 2023-06-01). It is required on the Messages routes, and marks the dialect elsewhere.
const versionHeader = "Anthropic-Version"

// Name is the console's name for the dialect.
func (*Dialect) Name() string { return "Anthropic Messages" }

// Marker is anthropic-version, which every Anthropic client sends on every call.
func (*Dialect) Marker() string { return versionHeader }

// Key is x-api-key's, where Anthropic's clients send the key (Claude Code, the SDKs). Only on a
// request of this dialect: an OpenAI client's stray x-api-key is not its key.
func (*Dialect) Key(r *http.Request) string { return r.Header.Get("X-Api-Key") }

// Headers gives an Anthropic answer request-id, Anthropic's name for the request id, beside
// x-request-id: the same value (the SDKs read it into their errors and messages).
func (*Dialect) Headers(h http.Header) { h["Request-Id"] = h[observability.RequestIDHeader] }

// AnswerHeaders: Anthropic's answers carry no more.
func (*Dialect) AnswerHeaders(http.Header) {}

// ProcessingHeader: Anthropic sends no processing time.
func (*Dialect) ProcessingHeader() string { return "" }

// Admit: Anthropic answers 400 to a Messages request without anthropic-version. Any value is
// taken: the mock speaks 2023-06-01, the only version there is.
func (*Dialect) Admit(r *http.Request) *apierr.Error {
	if v := r.Header[versionHeader]; len(v) == 0 || v[0] == "" {
		return apierr.New(apierr.MissingRequiredParameter, "anthropic-version", "The anthropic-version header is required (the mock speaks 2023-06-01).")
	}
	return nil
}

// Decode decodes a Messages request.
func (*Dialect) Decode(_ *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error) {
	return protocol.DecodeAnthropicRequest(body, lim)
}

// DecodeCount decodes a count_tokens request.
func (*Dialect) DecodeCount(_ *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error) {
	return protocol.DecodeCountTokensRequest(body, lim)
}

// AppendCount is count_tokens' answer: {"input_tokens":n}.
func (*Dialect) AppendCount(buf []byte, tokens int) []byte {
	buf = append(buf, `{"input_tokens":`...)
	return append(strconv.AppendInt(buf, int64(tokens), 10), "}\n"...)
}

// Check refuses a max_tokens over the model's output limit in Anthropic's words, a prompt
// beyond the context window with at most --max-tokens beside it — the context error is not in
// Anthropic's words, so that the large budget Claude Code asks for on a long conversation is not
// refused in words it cannot read to recover — and, on a reasoning model, what Anthropic refuses
// of a thinking request (thinking.go).
func (d *Dialect) Check(model *catalog.Model, req *protocol.Request, promptTokens, ceiling int) *apierr.Error {
	if aerr := generate.CheckAnthropicBudget(req.MaxTokens, model.MaxOutputTokens, model.ID); aerr != nil {
		return aerr
	}
	if aerr := generate.CheckContext(promptTokens, min(req.MaxTokens, ceiling), model.ContextWindow); aerr != nil || !model.Capabilities.Reasoning {
		return aerr
	}
	return d.checkThinking(model, req)
}

// OffersToolsOnly reports whether a Messages request's tools are only offered — tool_choice is
// auto or none — which a model without tools may take and never call: Claude Code offers its
// tools on every call, whatever the model (docs/protocol.md, "Where the client won").
func (*Dialect) OffersToolsOnly(req *protocol.Request) bool {
	return dialect.ToolsOnlyOffered(req)
}

// Reply is the call's message, its id derived from the request (messageID), with a reasoning
// model's thinking block.
func (d *Dialect) Reply(c *dialect.Call, req *protocol.Request, hit *fixtures.Hit, seed uint64) dialect.Reply {
	c.ID = messageID(seed, c.Model.ID)
	if th := d.thinkingBlock(seed, c, req, hit); th != nil {
		return reply{c: c, thinking: th}
	}
	return plain{c}
}

// Models is the model list in Anthropic's shape.
func (*Dialect) Models(c *catalog.Catalog) dialect.Models { return newModels(c) }

// reply is a Messages answer: the call, and a reasoning model's thinking block, first in its
// content (nil when the model does not think).
type reply struct {
	c        *dialect.Call
	thinking *protocol.ContentBlock
}

func (r reply) JSON() dialect.Body {
	body := messageBody(r)
	return &body
}

func (r reply) Events(http.Header) dialect.Events { return newEvents(r) }

// plain is the answer of a model that does not think: one pointer, which an interface holds
// without an allocation (most answers are these).
type plain struct{ c *dialect.Call }

func (p plain) JSON() dialect.Body { return reply{c: p.c}.JSON() }

func (p plain) Events(h http.Header) dialect.Events { return reply{c: p.c}.Events(h) }

// messageID is the answer's id, derived from the request and the model that answers it like a
// Responses answer's (responseID): msg_ and 24 hex digits.
func messageID(seed uint64, model string) string {
	h := dialect.HashString(seed, model)
	var b [12]byte
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
	}
	for i := range 4 {
		b[8+i] = byte(h >> (8 * i))
	}
	var out [len("msg_") + 24]byte
	copy(out[:], "msg_")
	hex.Encode(out[len("msg_"):], b[:])
	return string(out[:])
}

// toolUseID is a tool call's id in Anthropic's form: the generated call_… id's derived part
// after toolu_, so the same request gets the same ids.
func toolUseID(callID string) string {
	if rest, ok := strings.CutPrefix(callID, "call_"); ok {
		return "toolu_" + rest
	}
	return callID // a fixture's own id is kept as it is
}

// stopReason is a settled answer's stop_reason: the finish reason in Anthropic's words. A
// fixture's content_filter is a refusal.
func stopReason(ch *generate.Choice) string {
	switch ch.FinishReason {
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	if ch.StopSequence != "" {
		return "stop_sequence"
	}
	if !ch.Refusal.IsNil() {
		return "refusal"
	}
	return "end_turn"
}

// messageBody is the JSON answer of a Messages call: a reasoning model's thinking block, then
// the first (only) choice as a text block or as tool_use blocks, the stop reason and the usage
// (the thinking tokens within the output tokens, as Anthropic counts).
func messageBody(r reply) protocol.AnthropicMessage {
	c := r.c
	ch := &c.Result.Choices[0]
	body := protocol.AnthropicMessage{
		ID: c.ID, Model: c.Model.ID, StopReason: stopReason(ch), StopSequence: ch.StopSequence,
		Usage: protocol.AnthropicUsage{Input: c.Result.PromptTokens, Output: c.Result.CompletionTokens},
	}
	if r.thinking != nil {
		body.Content = append(body.Content, *r.thinking)
		if dialect.EatenByReasoning(ch) {
			return body // max_tokens cut the answer before its text, as Anthropic's
		}
	}
	if len(ch.ToolCalls) > 0 {
		for _, tc := range ch.ToolCalls {
			body.Content = append(body.Content, protocol.ContentBlock{ToolUse: true, ID: toolUseID(tc.ID), Name: tc.Name, Input: toolInput(tc.Arguments.Text())})
		}
		return body
	}
	text := ch.Text()
	if !ch.Refusal.IsNil() {
		text = ch.Refusal.Text()
	}
	body.Content = append(body.Content, protocol.ContentBlock{Text: text})
	return body
}

// toolInput is a call's arguments as a tool_use block's input, which is a JSON object: arguments
// the ceiling cut mid-value are no object, and are sent as {} (a stream sends the fragments
// themselves, as Anthropic's does when max_tokens cuts a call).
func toolInput(args string) string {
	if protocol.ValidJSONObject(args) {
		return args
	}
	return "{}"
}

var _ dialect.Counter = (*Dialect)(nil)
