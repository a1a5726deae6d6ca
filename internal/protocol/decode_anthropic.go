package protocol

import (
	"fmt"
	"unicode/utf8"

	"mockgateway/internal/apierr"
)

// Anthropic's Messages API (POST /v1/messages, version 2023-06-01) is a dialect of the
// same service, built as the Responses API was: its request decodes into the Request it
// stands for, so the models, simulation, fixtures, generator, limits and journal serve it
// unchanged, and only the answer is written in the dialect's shape (internal/server). The
// decoder is as strict as the others — the same walk, the same errors, the same order — with
// Anthropic's fields (the MessageCreateParams of anthropic-sdk-go and @anthropic-ai/sdk), and
// with what Claude Code sends beyond them (docs/protocol.md, "Where the client won").
//
// The translation:
//
//	system (string or text blocks)   → a system message before the others
//	messages[i] user, text blocks    → a user message (the blocks' text, concatenated)
//	messages[i] user, tool_result    → a tool message per result, after the turn's text
//	messages[i] assistant, text      → an assistant message's content
//	messages[i] assistant, tool_use  → its tool calls (input → arguments, compacted)
//	messages[i] system (Claude Code) → a system message where it stands
//	stop_sequences                   → stop; max_tokens → the budget (at most the ceiling)
//	tools (custom) / tool_choice     → tools / tool_choice (any → required, tool → function)
//	output_config.format json_schema → response_format json_schema
//
// thinking (and output_config.effort) and the thinking blocks sent back go to Reasoning, which
// only a reasoning model reads. image, document and search_result blocks go to Attachments,
// which only the estimator reads (decode_anthropic_media.go). cache_control, context
// management, server tools and the bookkeeping fields are accepted and add nothing to the chat
// request.

// anthropicState is a Messages request being decoded: the chat request it becomes, its limits,
// and the server tools it offers (which a tool_choice may not require). count is a
// count_tokens request, which has no answer: no budget, no stream, no sampling.
type anthropicState struct {
	req         *Request
	lim         Limits
	count       bool
	serverTools []string
	system      []Message
	// lastAssistant is the last assistant turn when it calls tools: a reasoning model's
	// thinking rules read it (finish).
	lastAssistant *AssistantTurn
}

// DecodeAnthropicRequest strictly decodes and validates an Anthropic Messages request body into
// the chat request it stands for. The rules are DecodeChatRequest's: every key is supported,
// known but unsupported, or unknown; null is absent; keys are examined in sorted order and the
// first problem is reported.
func DecodeAnthropicRequest(body []byte, lim Limits) (*Request, *apierr.Error) {
	return decodeAnthropic(body, lim, false)
}

// DecodeCountTokensRequest decodes a POST /v1/messages/count_tokens body: a Messages request
// without what only an answer needs (max_tokens, stream, stop_sequences, sampling, metadata).
func DecodeCountTokensRequest(body []byte, lim Limits) (*Request, *apierr.Error) {
	return decodeAnthropic(body, lim, true)
}

func decodeAnthropic(body []byte, lim Limits, count bool) (*Request, *apierr.Error) {
	if !validObjectBody(body) {
		return nil, errInvalidJSON()
	}
	doc := string(body) // as in DecodeChatRequest, the one copy every string is cut from
	lim = lim.withDefaults()
	return decodeWithPathsOnError(func(root string) (*Request, *apierr.Error) { return decodeAnthropicDoc(doc, lim, root, count) })
}

// decodeAnthropicDoc decodes the valid JSON object doc, naming paths from root (decode_path.go).
func decodeAnthropicDoc(doc string, lim Limits, root string, count bool) (*Request, *apierr.Error) {
	var room stackRequestMembers
	top, ok := appendMembers(room[:0], doc, doc)
	if !ok {
		return nil, errInvalidJSON()
	}
	c := &anthropicState{req: &Request{N: 1, ParallelToolCalls: true}, lim: lim, count: count}
	spec := &anthropicObject
	if count {
		spec = &countTokensObject
	}
	if e := spec.walk(c, root, top); e != nil {
		return nil, e
	}
	if e := c.finish(top); e != nil {
		return nil, e
	}
	c.req.Fields = anthropicFieldSetOf(top)
	c.req.IncludeUsage = c.req.Stream // message_delta always carries the output tokens
	return c.req, nil
}

var (
	anthropicObject   = objectSpec[*anthropicState]{fields: anthropicTopField, required: []string{"max_tokens", "messages", "model"}}
	countTokensObject = objectSpec[*anthropicState]{fields: anthropicTopField, required: []string{"messages", "model"}}
)

const noServerTools = "the mock runs no server tools: offer custom tools and run them yourself"

// anthropicTopField is the top level of a Messages request: MessageCreateParams (and
// MessageCountTokensParams for count_tokens), and the beta fields Claude Code sends.
func anthropicTopField(c *anthropicState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	// What to answer.
	case "model":
		return supported, chatState{req: c.req}.model(p, v)
	case "messages":
		return supported, c.messages(p, v)
	case "system":
		return supported, c.readSystem(p, v)

	// Tools and structured output.
	case "tools":
		return supported, c.tools(p, v)
	case "tool_choice":
		return supported, anthropicToolChoiceObject.decode(c.req, p, v)
	case "output_config":
		return supported, outputConfigObject.decode(c, p, v)

	// Thinking: a reasoning model thinks (docs/protocol.md); other models ignore it. Context
	// management is accepted with no effect.
	case "thinking":
		return supported, c.readThinking(p, v)
	case "context_management":
		return noEffect, contextManagementObject.decode(none{}, p, v)
	case "mcp_servers":
		// Claude Code and the SDKs' beta MCP connector: the mock connects to none.
		return noEffect, isArray(p, v)
	case "container":
		return unsupported, errUnsupported(p, noServerTools)

	// Prompt caching and where and how fast to infer: the mock caches nothing and answers
	// alike everywhere (anthropic-sdk-go v2.15.0's MessageNewParams).
	case "cache_control":
		return noEffect, cacheControlObject.decode(none{}, p, v)
	case "inference_geo":
		return noEffect, valid(asString(p, v))
	case "speed":
		return noEffect, valid(asEnum(p, v, "standard", "fast"))
	case "diagnostics":
		return noEffect, diagnosticsObject.decode(none{}, p, v)
	}
	if c.count {
		return unknown, nil // count_tokens has none of what follows
	}
	switch k {
	// How the answer is delivered.
	case "max_tokens":
		return supported, c.maxTokens(p, v)
	case "stream":
		return supported, into(&c.req.Stream)(asBool(p, v))
	case "stop_sequences":
		return supported, into(&c.req.Stop)(decodeStopSequences(p, v))

	// Sampling: a deterministic mock answers the same whatever it is; temperature is kept only
	// for telemetry. Anthropic's temperature is 0–1.
	case "temperature":
		f, e := asRangedNumber(p, v, 0, 1)
		if e == nil {
			c.req.Temperature = &f
		}
		return supported, e
	case "top_p":
		return noEffect, valid(asRangedNumber(p, v, 0, 1))
	case "top_k":
		return noEffect, valid(asBoundedInt(p, v, 0, 1<<31-1))

	// Bookkeeping.
	case "metadata":
		return noEffect, anthropicMetadataObject.decode(none{}, p, v)
	case "service_tier":
		return noEffect, valid(asEnum(p, v, "auto", "standard_only"))
	}
	return unknown, nil
}

// finish puts the system prompt first and checks the cross-field rules, after the key pass.
func (c *anthropicState) finish(top members[string]) *apierr.Error {
	r := c.req
	if len(c.system) > 0 {
		r.Messages = append(c.system, r.Messages...)
	}
	if th := r.Reasoning; th != nil && th.Thinking != "" {
		th.ThinkingMaxTokens, th.FinalAssistant = r.MaxTokens, c.lastAssistant
	}
	if hasMember(top, "tool_choice") {
		if e := c.checkToolChoice(); e != nil {
			return e
		}
	}
	if r.ResponseFormat.Type == FormatJSONSchema {
		return CheckSchemaPatterns("output_config.format.schema", r.ResponseFormat.Schema, c.lim.MaxRegexProgram)
	}
	return nil
}

// maxTokens is the budget of the answer, required by Anthropic, kept as sent as chat's is:
// Claude Code asks for a large budget on every call, the model's output limit decides whether
// that is accepted, and an answer stops at --max-tokens below it (docs/protocol.md).
func (c *anthropicState) maxTokens(path, v string) *apierr.Error {
	n, e := asBoundedInt(path, v, 1, MaxBudget)
	if e != nil {
		return e
	}
	c.req.MaxTokens, c.req.MaxTokensParam = int(n), "max_tokens"
	return nil
}

// maxAnthropicStopSequences bounds stop_sequences: Anthropic documents no count, and each one is
// looked for in the whole answer.
const maxAnthropicStopSequences = 64

func decodeStopSequences(path, v string) ([]string, *apierr.Error) {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return nil, e
	}
	if len(items) > maxAnthropicStopSequences {
		return nil, errValue(path, fmt.Sprintf("must contain at most %d sequences", maxAnthropicStopSequences))
	}
	var out []string
	for i, it := range items {
		s, e := asString(indexPath(path, i), it)
		if e != nil {
			return nil, e
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

var anthropicMetadataObject = objectSpec[none]{fields: decodeAnthropicMetadata}

// decodeAnthropicMetadata: Anthropic's metadata has user_id only (at most 256 characters).
// Claude Code puts a JSON document in it, which is only a string here.
func decodeAnthropicMetadata(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "user_id":
		s, e := asString(p, v)
		if e == nil && utf8.RuneCountInString(s) > 256 {
			e = errValue(p, "must be at most 256 characters long")
		}
		return noEffect, e
	}
	return unknown, nil
}

// readThinking is extended thinking: enabled with a budget, disabled, or adaptive (Claude
// Code's), each with display. A reasoning model thinks when it is enabled or adaptive.
func (c *anthropicState) readThinking(path, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	var th thinkingState
	switch typ {
	case "enabled":
		e = thinkingEnabledObject.walk(&th, path, o)
	case "disabled":
		return thinkingOtherObject.walk(&th, path, o)
	case "adaptive":
		e = thinkingAdaptiveObject.walk(&th, path, o)
	default:
		return errValue(typePath, "must be one of enabled, disabled, adaptive")
	}
	if e == nil {
		r := c.req.reasoning()
		r.Thinking, r.ThinkingBudget, r.ThinkingOmitted = typ, th.budget, th.omitted
	}
	return e
}

// thinkingState is a thinking object being decoded.
type thinkingState struct {
	budget  int
	omitted bool
}

var (
	thinkingEnabledObject  = objectSpec[*thinkingState]{fields: decodeThinking, required: []string{"budget_tokens"}}
	thinkingOtherObject    = objectSpec[*thinkingState]{fields: decodeThinkingType}
	thinkingAdaptiveObject = objectSpec[*thinkingState]{fields: decodeThinkingAdaptive}
)

func decodeThinkingType(_ *thinkingState, k, _, _ string) (fieldClass, *apierr.Error) {
	if k == "type" {
		return discriminator, nil
	}
	return unknown, nil
}

func decodeThinking(th *thinkingState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "budget_tokens":
		n, e := asBoundedInt(p, v, 1024, 1<<31-1)
		th.budget = int(n)
		return supported, e
	case "display":
		return decodeThinkingAdaptive(th, k, p, v)
	}
	return decodeThinkingType(th, k, p, v)
}

// decodeThinkingAdaptive: display is summarized (the thinking's text) or omitted (an empty
// text, the signature still there), as Anthropic answers.
func decodeThinkingAdaptive(th *thinkingState, k, p, v string) (fieldClass, *apierr.Error) {
	if k == "display" {
		d, e := asEnum(p, v, "summarized", "omitted")
		th.omitted = d == "omitted"
		return supported, e
	}
	return decodeThinkingType(th, k, p, v)
}

// contextManagementObject is the context-management beta Claude Code sends: edits the API
// would make to a long conversation (clearing old thinking or tool results). The mock keeps no
// conversation to edit; each edit's members are Anthropic's to define and are not looked into.
var contextManagementObject = objectSpec[none]{fields: decodeContextManagement}

func decodeContextManagement(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "edits":
		var room stackElements
		items, e := asArray(room[:0], p, v)
		for i := 0; e == nil && i < len(items); i++ {
			e = isObject(indexPath(p, i), items[i])
		}
		return noEffect, e
	}
	return unknown, nil
}

var diagnosticsObject = objectSpec[none]{fields: decodeDiagnostics}

// decodeDiagnostics: the API compares the prompt with a previous message's to explain a cache
// miss; the mock caches nothing, so there is never a miss to explain.
func decodeDiagnostics(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "previous_message_id":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

var outputConfigObject = objectSpec[*anthropicState]{fields: decodeOutputConfig}

// decodeOutputConfig: effort (Claude Code's: a reasoning model's thinking tokens, as
// reasoning_effort's), and format, the structured output the answer's text must be an instance
// of.
func decodeOutputConfig(c *anthropicState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "effort":
		effort, e := asEnum(p, v, "low", "medium", "high", "xhigh", "max")
		if e == nil {
			c.req.reasoning().Effort = effort
		}
		return supported, e
	case "format":
		return supported, outputFormatObject.decode(&c.req.ResponseFormat, p, v)
	}
	return unknown, nil
}

var outputFormatObject = objectSpec[*ResponseFormat]{fields: decodeOutputFormat, required: []string{"type", "schema"}}

func decodeOutputFormat(rf *ResponseFormat, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		_, e := asEnum(p, v, "json_schema")
		rf.Type, rf.Name = FormatJSONSchema, "output"
		return supported, e
	case "schema":
		s, e := asCompactObject(p, v)
		if e == nil {
			e = CheckSchemaLimits(p, s)
		}
		rf.Schema = s
		return supported, e
	}
	return unknown, nil
}
