package server

import (
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/observability"
)

// Anthropic's Messages API (POST /v1/messages, POST /v1/messages/count_tokens) is the chat
// path's third dialect (docs/protocol.md): its request decodes into a chat request
// (protocol.DecodeMessagesRequest), and its answer is made here from the same generated result
// as a chat completion's; its stream is stream_messages.go, its errors errors_anthropic.go.

// anthropicVersionHeader is the header every Anthropic request carries (the SDKs always send
// 2023-06-01). It is required on the Messages routes, and on /v1/models it selects Anthropic's
// shape.
const anthropicVersionHeader = "Anthropic-Version"

// anthropicRequest reports whether r is of the Anthropic dialect: on its routes, or carrying
// anthropic-version, as every Anthropic client does on every call (the models list, an unknown
// route). Its errors are written in Anthropic's envelope.
func anthropicRequest(r *http.Request) bool {
	if strings.HasPrefix(observability.RecordFrom(r.Context()).Route, "/v1/messages") {
		return true
	}
	return len(r.Header[anthropicVersionHeader]) > 0
}

// setRequestIDHeader gives an Anthropic answer request-id, Anthropic's name for the request id,
// beside x-request-id: the same value (the SDKs read it into their errors and messages).
func setRequestIDHeader(w http.ResponseWriter) {
	h := w.Header()
	h["Request-Id"] = h[observability.RequestIDHeader]
}

// checkAnthropicVersion: Anthropic answers 400 to a Messages request without the header. Any
// value is taken: the mock speaks 2023-06-01, the only version there is.
func checkAnthropicVersion(r *http.Request) *apierr.Error {
	if v := r.Header[anthropicVersionHeader]; len(v) == 0 || v[0] == "" {
		return apierr.New(apierr.MissingRequiredParameter, "anthropic-version", "The anthropic-version header is required (the mock speaks 2023-06-01).")
	}
	return nil
}

// messageID is the answer's id, derived from the request and the model that answers it like a
// Responses answer's (responseID): msg_ and 24 hex digits.
func messageID(seed uint64, model string) string {
	h := fnv64aString(seed, model)
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
func messageBody(c *chatCall) protocol.AnthropicMessage {
	ch := &c.Result.Choices[0]
	body := protocol.AnthropicMessage{
		ID: c.ID, Model: c.Model.ID, StopReason: stopReason(ch), StopSequence: ch.StopSequence,
		Usage: protocol.AnthropicUsage{Input: c.Result.PromptTokens, Output: c.Result.CompletionTokens},
	}
	if c.Thinking != nil {
		body.Content = append(body.Content, *c.Thinking)
		if eatenByReasoning(ch) {
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

// countTokensBody is POST /v1/messages/count_tokens' answer.
type countTokensBody struct {
	InputTokens int `json:"input_tokens"`
}

// handleCountTokens counts a Messages request's prompt with the estimator that gives an answer's
// input_tokens, so the two agree. The model must be one the mock executes, as for an answer.
func handleCountTokens(d Deps) http.Handler {
	limits := protocol.Limits{MaxChoices: d.Config.MaxChoices}
	return &takesBody{maxBody: d.Config.MaxBodyBytes, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setRequestIDHeader(w)
		if err := checkAnthropicVersion(r); err != nil {
			writeError(w, r, err)
			return
		}
		if err := readBody(w, r, d.Config.MaxBodyBytes); err != nil {
			writeError(w, r, err)
			return
		}
		buf := takeBody(r)
		req, aerr := protocol.DecodeCountTokensRequest(buf.Bytes(), limits)
		putBuffer(buf)
		if aerr != nil {
			writeError(w, r, aerr)
			return
		}
		if note, ok := observability.RecordFrom(r.Context()).Note.(*callNote); ok {
			note.noteShape(req)
		}
		m, ok := d.Catalog.Lookup(req.Model)
		if !ok || !m.Executable() {
			writeError(w, r, apierr.New(apierr.ModelNotFound, "model", "The model does not exist in this mock's catalog or is metadata only; GET /v1/models lists the executable models."))
			return
		}
		observability.RecordFrom(r.Context()).Model = m.ID
		encodeJSON(w, http.StatusOK, countTokensBody{InputTokens: generate.PromptTokens(req)})
	})}
}

// anthropicModel is a model in Anthropic's shape (anthropic-sdk-go's ModelInfo).
type anthropicModel struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

func anthropicModelOf(m *catalog.Model) anthropicModel {
	return anthropicModel{ID: m.ID, Type: "model", DisplayName: m.ID,
		CreatedAt: formatRFC3339(m.Created)}
}

// anthropicModelBodies are /v1/models and each /v1/models/{model} in Anthropic's shape, encoded
// once like the OpenAI ones: the list is one page, so has_more is false.
func anthropicModelBodies(c *catalog.Catalog) (list []byte, one map[string][]byte) {
	page := struct {
		Data    []anthropicModel `json:"data"`
		HasMore bool             `json:"has_more"`
		FirstID *string          `json:"first_id"`
		LastID  *string          `json:"last_id"`
	}{Data: []anthropicModel{}}
	one = map[string][]byte{}
	for _, m := range c.Executable() {
		page.Data = append(page.Data, anthropicModelOf(m))
		one[m.ID] = mustMarshal(anthropicModelOf(m))
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	return mustMarshal(page), one
}

// formatRFC3339 is a Unix time as Anthropic's created_at.
func formatRFC3339(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// offeredOnly reports whether a Messages request's tools are only offered — tool_choice is auto
// or none — which a model without tools may take and never call: Claude Code offers its tools
// on every call, whatever the model (docs/protocol.md, "Where the client won"). A chat or
// Responses request keeps OpenAI's rule (tools_not_supported).
func offeredOnly(req *protocol.ChatRequest) bool {
	if !req.Fields.Anthropic() {
		return false
	}
	m := req.ToolChoice.Mode
	return m == "" || m == protocol.ToolChoiceAuto || m == protocol.ToolChoiceNone
}

// anthropic reports whether the call is a Messages call, whose answer is Anthropic's.
func (c *chatCall) anthropic() bool { return c.h != nil && c.h.dialect == anthropicMessages }
