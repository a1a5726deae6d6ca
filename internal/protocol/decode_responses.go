package protocol

import (
	"strings"
	"unicode/utf8"

	"mockgateway/internal/apierr"
)

// The Responses API (POST /v1/responses) is a second dialect of the same service: its request
// decodes into the Request it stands for, so the models, simulation, fixtures, generator,
// limits and journal serve both alike, and only the answer is written in the dialect's shape.
// Its decoder is as strict as the chat one, with the same walk, the same errors and the same
// order; the fields are OpenAI's CreateResponse (openapi 2.3.0) and openai-go's
// responses.ResponseNewParams.

// ResponseEcho is what a Response repeats of its request: the request-echo members OpenAI
// returns (instructions, tools, tool_choice, text, temperature, …), encoded once at decode as
// the JSON members ("name":value pairs, comma-separated, no braces) that every Response object
// of the call — a JSON answer, or a stream's created, in_progress and final events — carries
// (Response.AppendJSON). They are the client's own values sent back to it: they never reach
// telemetry.
type ResponseEcho struct {
	members []byte // never written once made: many calls may share one echo (echoOf)
}

// responsesState is a Responses request being decoded: the chat request it becomes, its limits,
// and a cross-field error of the input that waits for finish. The table's functions share it by
// pointer; it is allocated with the request (newResponsesState).
type responsesState struct {
	req        *Request
	lim        Limits
	unanswered *apierr.Error
	// hostedTools counts the tools of other types than function that the request offers: they
	// are accepted and never called (readResponsesTools).
	hostedTools int
}

// newResponsesState allocates the state and the request it builds as one object, so that the
// state costs the request no allocation of its own (TestResponsesDecodeAllocations); the request
// keeps the state's few words alive with it.
func newResponsesState(lim Limits) *responsesState {
	both := &struct {
		state responsesState
		req   Request
	}{req: Request{N: 1, ParallelToolCalls: true}}
	both.state = responsesState{req: &both.req, lim: lim}
	return &both.state
}

// DecodeResponsesRequest strictly decodes and validates a Responses API request body into the
// chat request it stands for, and the members its answer echoes. The rules are
// DecodeChatRequest's: every key is supported, known but unsupported, or unknown; null is
// absent; keys are examined in sorted order and the first problem is reported.
//
// The translation: instructions become a system message before the input; a string input is
// one user message; input items become messages in order — a message item by its role, the
// function_call items an earlier answer carried an assistant message's tool calls, a
// function_call_output a tool message. item_reference and reasoning items are accepted and add
// no message: the mock keeps no responses to look them up in (docs/protocol.md); a reasoning
// item's encrypted_content is kept (Reasoning.SentBack) for a reasoning model to verify.
func DecodeResponsesRequest(body []byte, lim Limits) (*Request, *ResponseEcho, *apierr.Error) {
	if !validObjectBody(body) {
		return nil, nil, errInvalidJSON()
	}
	doc := string(body) // as in DecodeChatRequest, the one copy every string is cut from
	lim = lim.withDefaults()
	d, e := decodeWithPathsOnError(func(root string) (echoedRequest, *apierr.Error) { return decodeResponsesEchoed(doc, lim, root) })
	if e != nil {
		return nil, nil, e
	}
	return d.req, d.echo, nil
}

// echoedRequest is a decoded Responses request and the members its answer echoes.
type echoedRequest struct {
	req  *Request
	echo *ResponseEcho
}

// decodeResponsesEchoed decodes the valid JSON object doc, naming paths from root
// (decode_path.go), and encodes the echo of a request it accepts from the same split of the top
// level.
func decodeResponsesEchoed(doc string, lim Limits, root string) (echoedRequest, *apierr.Error) {
	var room stackRequestMembers
	top, ok := appendMembers(room[:0], doc, doc)
	if !ok {
		return echoedRequest{}, errInvalidJSON()
	}
	c := newResponsesState(lim)
	if e := responsesObject.walk(c, root, top); e != nil {
		return echoedRequest{}, e
	}
	if e := c.finish(top); e != nil {
		return echoedRequest{}, e
	}
	c.req.Fields = responsesFieldSetOf(top)
	// A stream always ends with the usage (in response.completed): the same work as chat's
	// include_usage, so the same flag.
	c.req.IncludeUsage = c.req.Stream
	return echoedRequest{c.req, echoOf(top, c.req, c.hostedTools > 0)}, nil
}

var responsesObject = objectSpec[*responsesState]{fields: responsesTopField, required: []string{"model", "input"}}

const stateless = "the mock is stateless so that every replica answers alike: send the whole input instead"

// responsesTopField is the top level of a Responses request: the properties of CreateResponse.
func responsesTopField(c *responsesState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	// What to answer.
	case "model":
		return supported, chatState{req: c.req}.model(p, v)
	case "input":
		return supported, c.input(p, v)
	case "instructions":
		return supported, c.readInstructions(p, v)

	// How the answer is delivered.
	case "stream":
		return supported, into(&c.req.Stream)(asBool(p, v))
	case "stream_options":
		return noEffect, responsesStreamOptionsObject.decode(none{}, p, v)
	case "max_output_tokens":
		return supported, c.maxOutputTokens(p, v)

	// Tools and structured output.
	case "tools":
		return supported, c.readTools(p, v)
	case "tool_choice":
		return supported, readResponsesToolChoice(&c.req.ToolChoice, p, v)
	case "parallel_tool_calls":
		return supported, into(&c.req.ParallelToolCalls)(asBool(p, v))
	case "max_tool_calls":
		return noEffect, valid(asBoundedInt(p, v, 0, 1<<31-1))
	case "text":
		return supported, c.text(p, v)

	// Sampling and reasoning: a deterministic mock answers the same whatever they are.
	case "temperature":
		return supported, chatState{req: c.req}.temperature(p, v)
	case "top_p":
		return noEffect, chatState{req: c.req}.topP(p, v)
	case "top_logprobs":
		return noEffect, checkTopLogprobs(p, v)
	case "reasoning":
		return supported, reasoningObject.decode(c.req, p, v)
	case "truncation":
		return noEffect, valid(asEnum(p, v, "auto", "disabled"))
	case "include":
		return supported, checkInclude(c.req, p, v)

	// Bookkeeping for the client and the platform.
	case "user", "prompt_cache_key":
		return noEffect, valid(asString(p, v))
	case "client_metadata":
		// The Codex CLI's, on every turn: its thread, turn and session ids, and its turn
		// metadata as a JSON string (longer than metadata's values may be).
		return noEffect, checkClientMetadata(p, v)
	case "safety_identifier":
		return noEffect, checkResponsesSafetyIdentifier(p, v)
	case "metadata":
		return noEffect, checkMetadata(p, v)
	case "store":
		// Accepted, and nothing is stored: the mock keeps no responses (docs/protocol.md).
		return noEffect, valid(asBool(p, v))
	case "background":
		return noEffect, checkBackground(p, v)
	case "service_tier":
		return noEffect, valid(asEnum(p, v, "auto", "default", "flex", "scale", "priority", "fast", "ultrafast"))
	case "prompt_cache_retention":
		return noEffect, valid(asEnum(p, v, "in_memory", "in-memory", "24h"))
	case "prompt_cache_options":
		return noEffect, promptCacheOptionsObject.decode(none{}, p, v)

	// State the mock does not keep, and features it does not offer.
	case "previous_response_id", "conversation":
		return unsupported, errUnsupported(p, stateless)
	case "prompt":
		return unsupported, errUnsupported(p, "the mock keeps no reusable prompts: send instructions and input")
	case "context_management", "moderation":
		return unsupported, errUnsupported(p, "the mock does not offer this feature")
	}
	return unknown, nil
}

// finish checks the cross-field rules, after the key pass.
func (c *responsesState) finish(top members[string]) *apierr.Error {
	r := c.req
	if hasMember(top, "stream_options") && !r.Stream {
		return errValue("stream_options", "only allowed when stream is true")
	}
	if hasMember(top, "tool_choice") {
		if r.ToolChoice.Mode == ToolChoiceRequired && len(r.Tools) == 0 && c.hostedTools > 0 {
			return errUnsupported("tool_choice", "the mock calls function tools only, and none is offered")
		}
		if e := checkToolChoice(r, "tool_choice.name"); e != nil {
			return e
		}
	}
	if len(r.Messages) == 0 { // the instructions' and the input's
		return errValue("input", "must contain at least one message or function_call_output item")
	}
	return c.unanswered
}

// input is a string (one user message) or an array of items.
func (c *responsesState) input(path, v string) *apierr.Error {
	msgs, unanswered, e := decodeInput(path, v, roleUser, nil)
	c.req.Messages, c.unanswered = msgs, unanswered
	if e == nil && strings.Contains(v, `"encrypted_content"`) { // nearly every input has none
		c.req.collectSentBack(v)
	}
	return e
}

// collectSentBack keeps the encrypted_content of the reasoning items of input, an array that
// decodeInput has validated, and the id beside it, for a reasoning model to verify.
func (r *Request) collectSentBack(input string) {
	var room stackElements
	items, _ := appendElements(room[:0], input)
	for i, it := range items {
		var room stackMembers
		o, _ := appendMembers(room[:0], it, it)
		typ, _ := o.get("type")
		enc, ok := o.get("encrypted_content")
		if t, _ := asString("type", typ); t != "reasoning" || !ok {
			continue
		}
		s, e := asString("encrypted_content", enc)
		if e != nil {
			continue
		}
		sent := SentReasoning{Item: i, EncryptedContent: s}
		if v, ok := o.get("id"); ok {
			sent.ID, _ = asString("id", v)
		}
		r.reasoning().SentBack = append(r.reasoning().SentBack, sent)
	}
}

// readInstructions is a string (a system message) or, as in CreateResponse, an array of items.
// Their messages go before the input's, which are decoded by then (input comes first in the key
// order).
func (c *responsesState) readInstructions(path, v string) *apierr.Error {
	msgs, _, e := decodeInput(path, v, roleSystem, c.req.Messages) // outputs answer the input's calls only
	c.req.Messages = msgs
	return e
}

// maxOutputTokens is the budget of the answer, kept as sent as chat's is. OpenAI's floor is 16.
func (c *responsesState) maxOutputTokens(path, v string) *apierr.Error {
	n, e := asBoundedInt(path, v, 16, MaxBudget)
	if e != nil {
		return e
	}
	c.req.MaxTokens, c.req.MaxTokensParam = int(n), "max_output_tokens"
	return nil
}

var responsesStreamOptionsObject = objectSpec[none]{fields: decodeResponsesStreamOptions}

func decodeResponsesStreamOptions(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "include_obfuscation":
		return noEffect, valid(asBool(p, v)) // the mock never obfuscates
	}
	return unknown, nil
}

var reasoningObject = objectSpec[*Request]{fields: decodeReasoning}

// decodeReasoning is the reasoning object: a reasoning model's effort and summary.
func decodeReasoning(req *Request, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "effort":
		return supported, chatState{req: req}.reasoningEffort(p, v)
	case "summary", "generate_summary": // generate_summary is the deprecated spelling
		s, e := asEnum(p, v, "auto", "concise", "detailed")
		if e == nil {
			req.reasoning().Summary = s
		}
		return supported, e
	case "mode", "context": // open-ended strings in OpenAI's document, with no effect
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

// checkResponsesSafetyIdentifier: the Responses API allows 64 characters (chat 128).
func checkResponsesSafetyIdentifier(path, v string) *apierr.Error {
	s, e := asString(path, v)
	if e == nil && utf8.RuneCountInString(s) > 64 {
		e = errValue(path, "must be at most 64 characters long")
	}
	return e
}

// checkInclude holds include to CreateResponse's Includable values. Only
// reasoning.encrypted_content adds to what the mock answers, and only a reasoning model's (it
// calls no hosted tools and keeps no logprobs), but a wrong one is the client's mistake all the
// same.
func checkInclude(req *Request, path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	for i, it := range items {
		if s, e := asEnum(indexPath(path, i), it, "file_search_call.results", "web_search_call.results",
			"web_search_call.action.sources", "message.input_image.image_url", "computer_call_output.output.image_url",
			"code_interpreter_call.outputs", "reasoning.encrypted_content", "message.output_text.logprobs"); e != nil {
			return e
		} else if s == "reasoning.encrypted_content" {
			req.reasoning().Encrypted = true
		}
	}
	return nil
}

// checkClientMetadata: an object of strings, which OpenAI's document leaves unbounded.
func checkClientMetadata(path, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	for _, raw := range o.all() { // keys and values are the client's: never in an error
		if jsonKind(raw) != '"' {
			return errType(path, "an object whose values are strings")
		}
	}
	return nil
}

func checkTopLogprobs(path, v string) *apierr.Error {
	n, e := asBoundedInt(path, v, 0, 20)
	if e == nil && n > 0 {
		e = errUnsupported(path, noLogprobs)
	}
	return e
}

// checkBackground: background: false asks for nothing; a background response would have to be
// stored and polled.
func checkBackground(path, v string) *apierr.Error {
	b, e := asBool(path, v)
	if e == nil && b {
		e = errUnsupported(path, stateless)
	}
	return e
}
