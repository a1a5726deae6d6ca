package protocol

import (
	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonscan"
	"mockgateway/internal/regexcost"
)

// How a request is decoded: the rooms of the decoder, in the order a body goes through them.
//
//	DecodeChatRequest / DecodeResponsesRequest / DecodeAnthropicRequest / DecodeGoogleRequest
//	(decode.go, decode_responses.go, decode_anthropic.go, decode_google.go)
//	  │ validObjectBody: one valid JSON object, or invalid_json (jsonscan.Valid)
//	  │ doc := string(body): the one copy every key and string is cut from
//	  ▼
//	decodeWithPathsOnError (decode_path.go)
//	  │ run 1: root unnamedRoot ("\x00"): paths are not built ─────────► no problem: the request
//	  │ run 2, only after a problem: root "", paths named ──────────────► the same problem,
//	  ▼                                                                    with its param
//	decodeChat / decodeResponsesEchoed / decodeAnthropicDoc
//	  │ appendMembers: the top level's members, sorted, nulls dropped (scan.go),
//	  │   into room on the stack (stackRequestMembers)
//	  ▼
//	chatObject.walk / responsesObject.walk / anthropicObject.walk: the generic walk
//	(decode_walk.go)
//	  │ for each member in key order: the object's table (topField, decodeMessage, …)
//	  │   classifies it (fieldClass) and decodes its value with the as… checks
//	  │   (decode_values.go); a nested object is another objectSpec's decode → walk
//	  │ then the object's required members
//	  ▼
//	finish: cross-field rules (stream_options needs stream, tool_choice needs tools)
//	fieldSetOf: the top-level members sent, for the journal (decode_fields.go)
//
// Where to go: a field's class, range or enum is one case in its object's table (this file for
// chat, decode_messages.go and decode_tools.go for chat's messages and tools,
// decode_responses*.go and decode_items.go for the Responses API, decode_anthropic*.go for
// Anthropic's Messages, decode_google*.go for Google's Gemini API); a rule across fields is that object's finish; a new
// value shape is an as… function in decode_values.go. The walk, the paths and the scanner are
// shared by every object and rarely need a change.
//
// What every table may rely on, and must keep:
//
//   - Members arrive sorted by key, each once, never null; the first problem found is the one
//     reported, so the same body always gets the same error.
//   - Paths go into errors, never into decisions: the two runs of decodeWithPathsOnError must
//     take the same steps to the same problem (FuzzDecodeChatRequest,
//     FuzzDecodeResponsesRequest compare them; TestDecodeAllocations holds what the unnamed run
//     saves).
//   - Values are substrings of doc, never of body, which the server reuses once decoding returns.
//   - No table allocates for a member it only checks: room for an object's members and an
//     array's elements is a caller's stack array (stackMembers, stackElements).
//   - Decoding costs the body's bytes, whatever its nesting: each split reads a whole value, so
//     a table descends only into its protocol's fixed shapes, and refuses a type that cannot
//     nest where it is read (a tool_result's blocks); the one walk as deep as a client nests,
//     a schema's patterns, reads its text once (TestDecodeCostIsLinearInDepth).

// Limits are the configurable bounds the decoder enforces. A zero field means the contract's
// default (DefaultMaxChoices, regexcost.DefaultMaxProgram). A budget is not one of them: the
// model's output limit decides it, once the model is known (generate.CheckBudget), and
// --max-tokens only bounds the answer (generate.Input.TokenCeiling).
type Limits struct {
	MaxChoices      int // n above this: invalid_value
	MaxRegexProgram int // a schema pattern compiling to more: invalid_value (CheckSchemaPatterns)
}

// The contract's default limits.
const (
	DefaultMaxTokensCeiling = 4096 // --max-tokens: the most tokens of any answer
	DefaultMaxChoices       = 128
)

// MaxBudget is the largest budget (max_tokens, max_completion_tokens, max_output_tokens) the
// decoders read as a number; every model's output limit is below it.
const MaxBudget = 1<<31 - 1

func (l Limits) withDefaults() Limits {
	if l.MaxChoices <= 0 {
		l.MaxChoices = DefaultMaxChoices
	}
	if l.MaxRegexProgram <= 0 {
		l.MaxRegexProgram = regexcost.DefaultMaxProgram
	}
	return l
}

// Protocol limits that are not configurable (they are the protocol's own).
const (
	maxStopSequences        = 4
	maxMetadataPairs        = 16
	maxMetadataKeyChars     = 64
	maxMetadataValueChars   = 512
	maxSafetyIdentifierChar = 128
	maxKeyCharsInPath       = 64
)

// DecodeChatRequest strictly decodes and validates a chat completion request body.
//
// Every key at every level is either supported, known to the protocol but unsupported by the
// mock (unsupported_parameter), or unknown (unknown_parameter). A JSON null means the key is
// absent. Keys are examined in sorted order at each level and the first problem is reported,
// so the same body always yields the same error. Objects whose keys depend on a discriminator
// (a message's role, a part's or tool's type) have the discriminator checked first, because
// the other keys cannot be classified without it. Required fields of an object are checked
// after its key pass; cross-field rules (stream_options needs stream, tool_choice needs tools)
// last.
//
// It does not check that the model exists (the server does, with the catalog). Error
// messages are fixed prose naming the field path (and configured limits), never a value the
// client sent.
//
// The request does not alias body, which the caller may reuse once DecodeChatRequest returns:
// its strings are cut from one copy of body, made here.
func DecodeChatRequest(body []byte, lim Limits) (*Request, *apierr.Error) {
	if !validObjectBody(body) {
		return nil, errInvalidJSON()
	}
	doc := string(body) // the one copy: every key, value and plain string is cut from it (scan.go)
	lim = lim.withDefaults()
	return decodeWithPathsOnError(func(root string) (*Request, *apierr.Error) { return decodeChat(doc, lim, root) })
}

// validObjectBody reports whether body is one valid JSON value that is an object: what
// DecodeChatRequest and DecodeResponsesRequest check before any member.
func validObjectBody(body []byte) bool {
	i := jsonscan.SkipSpace(body, 0)
	return i < len(body) && body[i] == '{' && jsonscan.Valid(body)
}

// decodeChat decodes the valid JSON object doc, naming paths from root (decode_path.go).
func decodeChat(doc string, lim Limits, root string) (*Request, *apierr.Error) {
	var room stackRequestMembers
	top, ok := appendMembers(room[:0], doc, doc)
	if !ok { // cannot happen for a valid body starting with '{'; answered as what it would be
		return nil, errInvalidJSON()
	}
	c := chatState{req: &Request{N: 1, ParallelToolCalls: true}, lim: lim}
	if e := chatObject.walk(c, root, top); e != nil {
		return nil, e
	}
	if e := c.finish(top); e != nil {
		return nil, e
	}
	c.req.Fields = fieldSetOf(top)
	return c.req, nil
}

// ---- the protocol's objects, one field per case ----
//
// Each function below is one object's table: a case per field, giving its class and, for a
// field the mock reads, its decoding. walk runs the same key pass over every object with them.
// They are switches, not slices, so that a key finds its row as fast as the compiler's string
// switch allows. internal/openapi's tests read this file's switches and hold the OpenAPI
// document to their keys, enums and ranges: keep the tables here and their literals inline.

// chatObject is a chat completion request.
var chatObject = objectSpec[chatState]{fields: topField, required: []string{"model", "messages"}}

// topField is the top level of a request. The unsupported fields are the rest of
// ChatCompletionNewParams in openai-go v3.96.0 (and the CompletionCreateParams of openai-python /
// ChatCompletionCreateParamsBase of openai-node).
func topField(c chatState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	// What to answer.
	case "model":
		return supported, c.model(p, v)
	case "messages":
		return supported, c.messages(p, v)

	// How the answer is delivered: streamed or not, its length, its count, where it stops.
	case "stream":
		return supported, into(&c.req.Stream)(asBool(p, v))
	case "stream_options":
		return supported, c.streamOptions(p, v)
	case "max_completion_tokens":
		return supported, c.maxCompletionTokens(p, v)
	case "max_tokens":
		return supported, c.maxTokens(p, v)
	case "n":
		return supported, c.n(p, v)
	case "stop":
		return supported, c.stop(p, v)
	case "seed":
		return supported, c.seed(p, v)

	// Tools and structured output.
	case "tools":
		return supported, c.tools(p, v)
	case "tool_choice":
		return supported, c.toolChoice(p, v)
	case "parallel_tool_calls":
		return supported, into(&c.req.ParallelToolCalls)(asBool(p, v))
	case "response_format":
		return supported, c.responseFormat(p, v)

	// Sampling. A deterministic mock answers the same whatever it is; temperature is kept only
	// for telemetry.
	case "temperature":
		return supported, c.temperature(p, v)
	case "top_p":
		return noEffect, c.topP(p, v)
	case "presence_penalty", "frequency_penalty":
		return noEffect, valid(asRangedNumber(p, v, -2, 2))
	case "logit_bias":
		return noEffect, checkLogitBias(p, v)
	case "reasoning_effort":
		// "max" is in openai-go v3.96.0's shared.ReasoningEffort. It sets a reasoning model's
		// reasoning tokens; other models ignore it.
		return supported, c.reasoningEffort(p, v)
	case "verbosity":
		return noEffect, valid(asEnum(p, v, "low", "medium", "high"))

	// Bookkeeping for the client and the platform.
	case "user", "prompt_cache_key":
		return noEffect, valid(asString(p, v))
	case "safety_identifier":
		return noEffect, checkSafetyIdentifier(p, v)
	case "metadata":
		return noEffect, checkMetadata(p, v)
	case "store":
		return noEffect, valid(asBool(p, v))
	case "service_tier":
		// "fast" is in openai-go v3.96.0's enum (it is served as "priority").
		return noEffect, valid(asEnum(p, v, "auto", "default", "flex", "scale", "priority", "fast"))
	case "prompt_cache_retention":
		// Current SDKs (openai-go v3.96.0) spell it "in_memory"; earlier openai-python and
		// openai-node releases sent "in-memory". Both are clients' values, so both are accepted.
		return noEffect, valid(asEnum(p, v, "in_memory", "in-memory", "24h"))
	case "prompt_cache_options":
		return noEffect, promptCacheOptionsObject.decode(none{}, p, v)

	// Features the mock does not offer. logprobs: false and text-only modalities ask for
	// nothing the mock lacks, so they are accepted.
	case "logprobs":
		return noEffect, checkLogprobs(p, v)
	case "modalities":
		return noEffect, checkModalities(p, v)
	case "top_logprobs":
		return unsupported, errUnsupported(p, noLogprobs)
	case "audio", "function_call", "functions", "moderation", "prediction", "web_search_options":
		return unsupported, errUnsupported(p, "the mock does not offer this feature")
	}
	return unknown, nil
}

var streamOptionsObject = objectSpec[chatState]{fields: streamOptions}

func streamOptions(c chatState, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "include_usage":
		return supported, into(&c.req.IncludeUsage)(asBool(p, v))
	case "include_obfuscation":
		return noEffect, valid(asBool(p, v)) // the mock never obfuscates
	}
	return unknown, nil
}

var promptCacheOptionsObject = objectSpec[none]{fields: checkPromptCacheOptions}

func checkPromptCacheOptions(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "mode":
		return noEffect, valid(asEnum(p, v, "implicit", "explicit"))
	case "ttl":
		return noEffect, valid(asEnum(p, v, "30m"))
	}
	return unknown, nil
}

// decodeMessage is a message, whose role readMessage has set in m: most fields belong to one
// role only.
func decodeMessage(m *Message, k, p, v string) (fieldClass, *apierr.Error) {
	assistant := m.Role == roleAssistant
	switch {
	case k == "role":
		return discriminator, nil
	case k == "content":
		return supported, messageContent(m, p, v)
	case k == "name":
		// Accepted on every role, tool included: the API ignores it on tool messages, and
		// LangChain (JS and Python) and go-openai's tool example set it on every tool result.
		return supported, into(&m.Name)(asString(p, v))
	case k == "tool_call_id" && m.Role == roleTool:
		return supported, messageToolCallID(m, p, v)
	case assistant && k == "tool_calls":
		return supported, messageToolCalls(m, p, v)
	case assistant && k == "refusal":
		return noEffect, valid(asString(p, v))
	case assistant && k == "audio":
		return noEffect, assistantAudioObject.decode(none{}, p, v)
	case assistant && k == "annotations":
		return noEffect, isArray(p, v) // sent back from an earlier response; entries are not used
	case assistant && k == "function_call":
		return unsupported, errUnsupported(p, "function calls are deprecated in favor of tool_calls and not supported by the mock")
	case assistant && k == "parsed":
		// Added by the SDKs' parse helpers (openai-node's runTools and parse, openai-python's
		// parse) to the assistant message they keep and send back.
		return ignored, nil
	}
	return unknown, nil
}

// decodeContentPart is a text part of a system, developer, user or tool message (an assistant's
// parts: decodeAssistantContentPart).
func decodeContentPart(part partState, k, p, v string) (fieldClass, *apierr.Error) {
	switch {
	case k == "type":
		return discriminator, nil
	case k == "text" && part.typ == "text":
		return supported, into(part.text)(asString(p, v))
	case k == "prompt_cache_breakpoint" && part.typ == "text":
		return noEffect, promptCacheBreakpointObject.decode(none{}, p, v)
	}
	return unknown, nil
}

// promptCacheBreakpointObject is a text part's prompt_cache_breakpoint (openai-go v3.96.0:
// {mode: "explicit", ttl: "30m" or "12h"}), accepted with no effect like prompt_cache_options.
var promptCacheBreakpointObject = objectSpec[none]{fields: decodePromptCacheBreakpoint}

func decodePromptCacheBreakpoint(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "mode":
		return noEffect, valid(asEnum(p, v, "explicit"))
	case "ttl":
		return noEffect, valid(asEnum(p, v, "30m", "12h"))
	}
	return unknown, nil
}

var assistantAudioObject = objectSpec[none]{fields: decodeAssistantAudio, required: []string{"id"}}

func decodeAssistantAudio(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "id":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

var toolCallObject = objectSpec[*ToolCall]{fields: decodeToolCall, required: []string{"id", "function"}}

// decodeToolCall is a tool call an assistant message carries back.
func decodeToolCall(c *ToolCall, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "id":
		return supported, into(&c.ID)(asString(p, v))
	case "function":
		return supported, toolCallFunctionObject.decode(c, p, v)
	case "index":
		// Left in by openai-python's streaming helper, whose accumulated message keeps the
		// chunk deltas' index.
		return ignored, nil
	}
	return unknown, nil
}

var toolCallFunctionObject = objectSpec[*ToolCall]{fields: decodeToolCallFunction, required: []string{"name", "arguments"}}

func decodeToolCallFunction(c *ToolCall, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "name":
		return supported, into(&c.Name)(asString(p, v))
	case "arguments":
		return supported, into(&c.Arguments)(asString(p, v))
	case "parsed_arguments":
		// Added by the SDKs' parse helpers (openai-node's runTools, openai-python's parse and
		// streaming helpers) to the tool calls they send back.
		return ignored, nil
	}
	return unknown, nil
}

var toolObject = objectSpec[*Tool]{fields: decodeTool, required: []string{"function"}}

func decodeTool(t *Tool, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "function":
		return supported, readFunctionDefinition(t, p, v)
	}
	return unknown, nil
}

var functionDefinitionObject = objectSpec[*Tool]{fields: decodeFunctionDefinition, required: []string{"name"}}

func decodeFunctionDefinition(t *Tool, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "name":
		return supported, into(&t.Name)(asName(p, v))
	case "description":
		return supported, into(&t.Description)(asString(p, v))
	case "parameters":
		return supported, into(&t.Parameters)(asCompactObject(p, v))
	case "strict":
		return supported, into(&t.Strict)(asBool(p, v))
	}
	return unknown, nil
}

var toolChoiceObject = objectSpec[*ToolChoice]{fields: decodeToolChoice, required: []string{"function"}}

// decodeToolChoice is the object form of tool_choice, naming a function.
func decodeToolChoice(tc *ToolChoice, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "function":
		return supported, namedFunctionObject.decode(tc, p, v)
	}
	return unknown, nil
}

var namedFunctionObject = objectSpec[*ToolChoice]{fields: decodeNamedFunction, required: []string{"name"}}

func decodeNamedFunction(tc *ToolChoice, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "name":
		return supported, into(&tc.Function)(asString(p, v))
	}
	return unknown, nil
}

// decodeResponseFormat is a response_format of the type readResponseFormat has set in rf.
func decodeResponseFormat(rf *ResponseFormat, k, p, v string) (fieldClass, *apierr.Error) {
	switch {
	case k == "type":
		return discriminator, nil
	case k == "json_schema" && rf.Type == FormatJSONSchema:
		return supported, readJSONSchema(rf, p, v)
	}
	return unknown, nil
}

var jsonSchemaObject = objectSpec[*ResponseFormat]{fields: decodeJSONSchema, required: []string{"name"}}

func decodeJSONSchema(rf *ResponseFormat, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "name":
		return supported, into(&rf.Name)(asName(p, v))
	case "description":
		return noEffect, valid(asString(p, v))
	case "schema":
		return supported, into(&rf.Schema)(asCompactObject(p, v))
	case "strict":
		// Not kept: readJSONSchema reads it again once the schema is known.
		return supported, valid(asBool(p, v))
	}
	return unknown, nil
}
