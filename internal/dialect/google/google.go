// Package google is Google's Gemini API dialect (models/{model}:generateContent,
// :streamGenerateContent, :countTokens and the model list, under /v1beta and /v1): its
// decoder's entry (the model of the path, then protocol.DecodeGoogleRequest), its answer (a
// GenerateContentResponse: a thinking model's thought part, then text or functionCall parts),
// its stream of data: lines, its error envelope and statuses (errors.go), its model list
// (models.go) and Gemini's thinking (thinking.go). Its clients send the key in x-goog-api-key on
// every call, which chooses it on the routes the dialects share (the model list, an unknown path);
// Google's REST examples send it in the key query parameter, which it reads too (Key).
package google

import (
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// Method is the Gemini method a route serves: a Dialect is built for one.
type Method int

// The answering methods (countTokens is either's: Counter).
const (
	Generate Method = iota // :generateContent, a JSON answer
	Stream                 // :streamGenerateContent: ?alt=sse events, else the JSON array of them
)

// Dialect is Google's Gemini API, for one of its methods.
type Dialect struct {
	sealer *seal.Sealer // seals thought signatures and opens those sent back (thinking.go)
	method Method
}

// New is the dialect of method; sealer seals the thought signatures and opens those sent back.
func New(sealer *seal.Sealer, method Method) *Dialect {
	return &Dialect{sealer: sealer, method: method}
}

// keyHeader is where every Gemini client sends its key (Gemini CLI, the google-genai SDKs).
const keyHeader = "X-Goog-Api-Key"

// Name is the console's name for the dialect, a stream's or not.
func (*Dialect) Name() string { return "Google Gemini" }

// Marker is x-goog-api-key, which every Gemini client sends on every call.
func (*Dialect) Marker() string { return keyHeader }

// Key is x-goog-api-key's, where the SDKs and Gemini CLI send it, else the key query
// parameter's, where Google's REST examples and many tools put it (?key=API_KEY).
func (*Dialect) Key(r *http.Request) string {
	if k := r.Header.Get(keyHeader); k != "" {
		return k
	}
	return r.URL.Query().Get("key")
}

// Headers: Google's answers carry no request id of their own beside x-request-id.
func (*Dialect) Headers(http.Header) {}

// AnswerHeaders: nor does an answer.
func (*Dialect) AnswerHeaders(http.Header) {}

// ProcessingHeader: Google's processing time is in Server-Timing, in a form of its own; the
// mock sends none.
func (*Dialect) ProcessingHeader() string { return "" }

// Admit: Google requires nothing beyond the body.
func (*Dialect) Admit(*http.Request) *apierr.Error { return nil }

// call is what the route gives the decoder: the model of its path, and whether it streams
// (streamGenerateContent with alt=sse; without it, the answer is a JSON array, made whole).
func (d *Dialect) call(r *http.Request) protocol.GoogleCall {
	return protocol.GoogleCall{Model: mux.Vars(r)["model"], Stream: d.method == Stream && r.URL.Query().Get("alt") == "sse"}
}

// Decode decodes a generateContent or streamGenerateContent request.
func (d *Dialect) Decode(r *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error) {
	return protocol.DecodeGoogleRequest(d.call(r), body, lim)
}

// DecodeCount decodes a countTokens request.
func (d *Dialect) DecodeCount(r *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error) {
	return protocol.DecodeGoogleCount(d.call(r), body, lim)
}

// AppendCount is countTokens' answer: {"totalTokens":n}, the answer's promptTokenCount.
func (*Dialect) AppendCount(buf []byte, tokens int) []byte {
	buf = append(buf, `{"totalTokens":`...)
	return append(strconv.AppendInt(buf, int64(tokens), 10), "}\n"...)
}

// Check refuses, in Google's words, a maxOutputTokens over the model's output limit, a prompt
// that with its budget (as --max-tokens cuts it: ceiling) overflows the model's context window,
// and on a thinking model a thought signature it did not seal.
func (d *Dialect) Check(model *catalog.Model, req *protocol.Request, promptTokens, ceiling int) *apierr.Error {
	if limit := model.MaxOutputTokens; limit > 0 && req.MaxTokens > limit {
		// Google's sentence, without the value sent: the client's figure is not echoed.
		return apierr.New(apierr.InvalidValue, "generationConfig.maxOutputTokens", "Unable to submit request because its maxOutputTokens value is outside the supported range, from 1 (inclusive) to "+
			strconv.Itoa(limit+1)+" (exclusive). Update the value and try again.")
	}
	if aerr := generate.CheckContext(promptTokens, min(req.MaxTokens, ceiling), model.ContextWindow); aerr != nil || !model.Capabilities.Reasoning {
		return aerr
	}
	return d.checkSignatures(model, req)
}

// OffersToolsOnly: function declarations are only offered unless toolConfig requires a call
// (ANY). Gemini CLI declares its tools to every model.
func (*Dialect) OffersToolsOnly(req *protocol.Request) bool {
	return dialect.ToolsOnlyOffered(req)
}

// Reply is the call's GenerateContentResponse, its responseId derived from the request, with a
// thinking model's thought part and signature.
func (d *Dialect) Reply(c *dialect.Call, req *protocol.Request, hit *fixtures.Hit, seed uint64) dialect.Reply {
	c.ID = responseID(seed, c.Model.ID)
	r := reply{c: c, array: d.method == Stream && !c.Stream}
	if c.Model.Capabilities.Reasoning && c.Result.ReasoningTokens > 0 {
		r.thought = d.thought(seed, req, hit)
		r.signature = d.signature(seed, c)
	}
	return r
}

// Models is the model list in Google's shape.
func (*Dialect) Models(c *catalog.Catalog) dialect.Models { return newModels(c) }

// reply is a Gemini answer: the call, a thinking model's thought text ("" when none is shown)
// and the signature of its first function call. array is a streamGenerateContent answer
// without alt=sse: the JSON array of the stream's responses, here the one whole response.
type reply struct {
	c         *dialect.Call
	thought   string
	signature string
	array     bool
}

func (r reply) JSON() dialect.Body { return &body{r: r} }

func (r reply) Events(http.Header) dialect.Events { return newEvents(r) }

// responseID is the answer's responseId, derived from the request and the model that answers
// it, in the URL-safe base64 of Google's ids.
func responseID(seed uint64, model string) string {
	h := dialect.HashString(seed, model)
	var b [12]byte
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
	}
	for i := range 4 {
		b[8+i] = byte(h >> (8 * i))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

var (
	_ dialect.Dialect = (*Dialect)(nil)
	_ dialect.Counter = (*Dialect)(nil)
)
