// Package responses is OpenAI's Responses API dialect (POST /v1/responses): its decoder's entry,
// its answer (a response, with a reasoning model's reasoning item first), and its stream of
// named events. Its errors, model list and reasoning rules are OpenAI's (dialect/chat).
package responses

import (
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/dialect/chat"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
)

// Dialect is the Responses API: OpenAI's, so chat's in all but the request, the answer and
// the stream.
type Dialect struct {
	*chat.Dialect
	sealer *seal.Sealer // seals a reasoning item's encrypted content (reasoning.go)
}

// New is the dialect; sealer seals the reasoning items' encrypted content and opens those sent
// back.
func New(sealer *seal.Sealer) *Dialect { return &Dialect{Dialect: chat.New(sealer), sealer: sealer} }

// Decode decodes a Responses API request; what its answer repeats of it is its Echo.
func (*Dialect) Decode(_ *http.Request, body []byte, lim protocol.Limits) (*protocol.Request, *apierr.Error) {
	req, echo, aerr := protocol.DecodeResponsesRequest(body, lim)
	if aerr != nil {
		return nil, aerr
	}
	req.Echo = echo
	return req, nil
}

// Check holds the request to OpenAI's limits (chat.CheckLimits) and, on a reasoning model, to
// OpenAI's rules for one (chat.CheckReasoning), a sampling value refused as the Responses API
// refuses it: "Unsupported parameter".
func (d *Dialect) Check(model *catalog.Model, req *protocol.Request, promptTokens, _ int) *apierr.Error {
	if aerr := chat.CheckLimits(model, req, promptTokens); aerr != nil || !model.Capabilities.Reasoning {
		return aerr
	}
	return chat.CheckReasoning(model, req, d.sealer, func(param string) *apierr.Error {
		return apierr.New(apierr.UnsupportedParameter, param, "Unsupported parameter: '"+param+"' is not supported with this model.")
	})
}

// Reply is the call's response, its id derived from the request (responseID), with a reasoning
// model's reasoning item.
func (d *Dialect) Reply(c *dialect.Call, req *protocol.Request, hit *fixtures.Hit, seed uint64) dialect.Reply {
	c.ID = responseID(seed, c.Model.ID)
	return &reply{c: c, echo: req.Echo, reasoning: d.reasoningItem(c, seed, req, hit)}
}

// reply is a Responses API answer: the call, what it repeats of the request, and a reasoning
// model's reasoning item, first in its output (nil when the model does not reason).
type reply struct {
	c         *dialect.Call
	echo      *protocol.ResponseEcho
	reasoning *protocol.OutputItem
	// body is the answer, JSON or the stream's response, and events the stream: made in the
	// reply's own allocation rather than each in one of theirs.
	body   protocol.Response
	events respEvents
}

func (r *reply) JSON() dialect.Body {
	r.body = responseBody(r)
	return &r.body
}

func (r *reply) Events(http.Header) dialect.Events {
	initEvents(&r.events, r)
	return &r.events
}

var _ dialect.Dialect = (*Dialect)(nil)
