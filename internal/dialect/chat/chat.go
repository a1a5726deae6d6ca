// Package chat is OpenAI's Chat Completions dialect (POST /v1/chat/completions): its decoder's
// entry, its answer (a chat.completion), its stream (chat.completion.chunk frames and [DONE]),
// OpenAI's error envelope and model list, and OpenAI's rules for a reasoning model — the last
// three shared with the Responses API (dialect/responses), which is OpenAI's too.
package chat

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// Dialect is Chat Completions. It is also what a request speaks on the routes the dialects
// share when it carries no other dialect's marker: OpenAI's shapes.
type Dialect struct {
	sealer *seal.Sealer // checks the reasoning items sent back (checkReasoning)
}

// New is the dialect; sealer opens the reasoning items a client sends back.
func New(sealer *seal.Sealer) *Dialect { return &Dialect{sealer: sealer} }

// Name is the console's name for the dialect.
func (*Dialect) Name() string { return "OpenAI Chat Completions" }

// Marker: OpenAI's is the default dialect, chosen by no header.
func (*Dialect) Marker() string { return "" }

// Key: OpenAI's clients send the key as Authorization: Bearer only.
func (*Dialect) Key(*http.Request) string { return "" }

// Headers: OpenAI's answers name the request id x-request-id only, as the service does.
func (*Dialect) Headers(http.Header) {}

// AnswerHeaders sets Openai-Version, which OpenAI's answers carry.
func (*Dialect) AnswerHeaders(h http.Header) { h["Openai-Version"] = openAIVersion }

// ProcessingHeader: OpenAI's answers carry Openai-Processing-Ms.
func (*Dialect) ProcessingHeader() string { return "Openai-Processing-Ms" }

// openAIVersion is the Openai-Version header OpenAI's answers carry, one slice for every
// answer: net/http only reads a header's values.
var openAIVersion = []string{"2020-10-01"}

// Admit: a chat request needs nothing beyond its body.
func (*Dialect) Admit(*http.Request) *apierr.Error { return nil }

// Decode decodes a chat completion request.
func (*Dialect) Decode(_ *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error) {
	return protocol.DecodeChatRequest(body, lim)
}

// Check holds the request, on a reasoning model, to the rules for one, Chat Completions'
// (checkReasoning), and then to OpenAI's limits (CheckLimits).
func (d *Dialect) Check(model *catalog.Model, req *protocol.Request, promptTokens, _ int) *apierr.Error {
	// A reasoning model's own refusals come first: it refuses max_tokens whatever its value,
	// before any limit is weighed.
	if model.Capabilities.Reasoning {
		if aerr := d.checkReasoning(model, req); aerr != nil {
			return aerr
		}
	}
	return CheckLimits(model, req, promptTokens)
}

// CheckLimits refuses, in OpenAI's words, a budget over the model's output limit, and a prompt
// that with the budget sent overflows its context window, as OpenAI counts it.
func CheckLimits(model *catalog.Model, req *protocol.Request, promptTokens int) *apierr.Error {
	if aerr := generate.CheckBudget(req.MaxTokensParam, req.MaxTokens, model.MaxOutputTokens); aerr != nil {
		return aerr
	}
	return generate.CheckContext(promptTokens, req.MaxTokens, model.ContextWindow)
}

// OffersToolsOnly: OpenAI refuses tools to a model without them (tools_not_supported).
func (*Dialect) OffersToolsOnly(*protocol.Request) bool { return false }

// checkReasoning holds the request to OpenAI's rules for a reasoning model (reasoning.go): Chat
// Completions refuses max_tokens there, and a sampling value in its own words.
func (d *Dialect) checkReasoning(model *catalog.Model, req *protocol.Request) *apierr.Error {
	if req.Fields.Has("max_tokens") {
		return apierr.New(apierr.UnsupportedParameter, "max_tokens",
			"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
	}
	return CheckReasoning(model, req, d.sealer, unsupportedValue)
}

// unsupportedValue refuses a temperature or top_p other than 1 as Chat Completions does:
// unsupported_value (its message names the value sent, which the mock's never does).
func unsupportedValue(param string) *apierr.Error {
	return apierr.New(apierr.UnsupportedValue, param,
		"Unsupported value: '"+param+"' does not support this value with this model. Only the default (1) value is supported.")
}

// ReasoningTokens is the effort's reasoning (reasoning.go).
func (*Dialect) ReasoningTokens(req *protocol.Request, hit *fixtures.Hit) int {
	return ReasoningTokens(req, hit)
}

// Reply is the call's chat.completion, with a random id as OpenAI's.
func (*Dialect) Reply(c *dialect.Call, _ *protocol.Request, _ *fixtures.Hit, _ uint64) dialect.Reply {
	c.ID = newCompletionID()
	return reply{c}
}

// Error is OpenAI's error envelope with the code's status.
func (*Dialect) Error(buf []byte, e *apierr.Error, _ string) (int, []byte) {
	return e.Status, AppendError(buf, e)
}

// AppendStreamError appends the error frame and [DONE], as OpenAI ends a stream that failed.
func (*Dialect) AppendStreamError(buf []byte, e *apierr.Error, _ int) []byte {
	buf = append(buf, "data: "...)
	buf = AppendError(buf, e)
	buf = buf[:len(buf)-1] // the envelope's newline
	return append(buf, "\n\ndata: [DONE]\n\n"...)
}

// Models is OpenAI's model list (models.go).
func (*Dialect) Models(c *catalog.Catalog) dialect.Models { return NewModels(c) }

// reply is a chat completion's answer; one pointer, so an interface holds it without an
// allocation.
type reply struct{ c *dialect.Call }

func (r reply) JSON() dialect.Body {
	body := completionBody(r.c)
	return &body
}

func (r reply) Events(http.Header) dialect.Events { return newEvents(r.c) }

func newCompletionID() string {
	const prefix = "chatcmpl-"
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	var out [len(prefix) + 2*len(b)]byte
	copy(out[:], prefix)
	hex.Encode(out[len(prefix):], b[:])
	return string(out[:])
}

var _ dialect.Dialect = (*Dialect)(nil)
