package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"mockgateway/internal/apierr"
)

// Limits are the configurable bounds the decoder enforces. A zero field means the contract's
// default (DefaultMaxTokensCeiling, DefaultMaxChoices).
type Limits struct {
	MaxTokensCeiling int // budget above this: invalid_value whose message names the ceiling
	MaxChoices       int // n above this: invalid_value
}

// The contract's default limits.
const (
	DefaultMaxTokensCeiling = 4096
	DefaultMaxChoices       = 128
)

func (l Limits) withDefaults() Limits {
	if l.MaxTokensCeiling <= 0 {
		l.MaxTokensCeiling = DefaultMaxTokensCeiling
	}
	if l.MaxChoices <= 0 {
		l.MaxChoices = DefaultMaxChoices
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
func DecodeChatRequest(body []byte, lim Limits) (*ChatRequest, *apierr.Error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errInvalidJSON()
	}
	if !json.Valid(body) {
		return nil, errInvalidJSON()
	}
	top, ok := splitObject(body)
	if !ok { // cannot happen for a valid body starting with '{'; answered as what it would be
		return nil, errInvalidJSON()
	}

	d := &chatDecoder{
		lim: lim.withDefaults(),
		req: &ChatRequest{N: 1, ParallelToolCalls: true},
	}
	for k, v := range top.all() {
		if e := d.topField(k, v); e != nil {
			return nil, e
		}
	}
	if e := d.finish(); e != nil {
		return nil, e
	}
	return d.req, nil
}

// chatDecoder carries the request being built and the facts that cross-field rules need.
type chatDecoder struct {
	lim Limits
	req *ChatRequest

	hasModel, hasMessages bool
	hasStreamOptions      bool
	hasToolChoice         bool

	maxTokens, maxCompletionTokens       int
	hasMaxTokens, hasMaxCompletionTokens bool
}

// topField classifies and validates one top-level key. The list of known-but-unsupported
// fields is the rest of ChatCompletionNewParams in openai-go v3.96.0 (and the
// CompletionCreateParams of openai-python / ChatCompletionCreateParamsBase of openai-node):
// audio, function_call, functions, moderation, prediction, web_search_options.
func (d *chatDecoder) topField(k string, v json.RawMessage) *apierr.Error {
	r := d.req
	var e *apierr.Error
	switch k {
	case "model":
		var s string
		if s, e = asString(k, v); e == nil {
			if s == "" {
				return errValue(k, "must be a non-empty model id")
			}
			r.Model, d.hasModel = s, true
		}
	case "messages":
		e = d.messages(v)
		d.hasMessages = e == nil
	case "stream":
		r.Stream, e = asBool(k, v)
	case "stream_options":
		d.hasStreamOptions = true
		e = d.streamOptions(v)
	case "max_tokens":
		var n int64
		if n, e = asBoundedInt(k, v, 1, int64(d.lim.MaxTokensCeiling)); e == nil {
			d.maxTokens, d.hasMaxTokens = int(n), true
		}
	case "max_completion_tokens":
		var n int64
		if n, e = asBoundedInt(k, v, 1, int64(d.lim.MaxTokensCeiling)); e == nil {
			d.maxCompletionTokens, d.hasMaxCompletionTokens = int(n), true
		}
	case "n":
		var n int64
		if n, e = asBoundedInt(k, v, 1, int64(d.lim.MaxChoices)); e == nil {
			r.N = int(n)
		}
	case "stop":
		r.Stop, e = decodeStop(v)
	case "seed":
		var n int64
		if n, e = asInt64(k, v); e == nil {
			r.Seed = &n
		}
	case "tools":
		r.Tools, e = decodeTools(v)
	case "tool_choice":
		d.hasToolChoice = true
		r.ToolChoice, e = decodeToolChoice(v)
	case "parallel_tool_calls":
		r.ParallelToolCalls, e = asBool(k, v)
	case "response_format":
		r.ResponseFormat, e = decodeResponseFormat(v)
	case "temperature":
		var f float64
		if f, e = asRangedNumber(k, v, 0, 2); e == nil {
			r.Temperature = &f
		}
	case "top_p":
		_, e = asRangedNumber(k, v, 0, 1)
	case "presence_penalty", "frequency_penalty":
		_, e = asRangedNumber(k, v, -2, 2)
	case "logit_bias":
		e = checkLogitBias(v)
	case "user", "prompt_cache_key":
		_, e = asString(k, v)
	case "safety_identifier":
		var s string
		if s, e = asString(k, v); e == nil && utf8.RuneCountInString(s) > maxSafetyIdentifierChar {
			e = errValue(k, fmt.Sprintf("must be at most %d characters long", maxSafetyIdentifierChar))
		}
	case "metadata":
		e = checkMetadata(v)
	case "store":
		_, e = asBool(k, v)
	case "service_tier":
		// "fast" is in openai-go v3.96.0's enum (it is served as "priority").
		_, e = asEnum(k, v, "auto", "default", "flex", "scale", "priority", "fast")
	case "reasoning_effort":
		// "max" is in openai-go v3.96.0's shared.ReasoningEffort.
		_, e = asEnum(k, v, "none", "minimal", "low", "medium", "high", "xhigh", "max")
	case "verbosity":
		_, e = asEnum(k, v, "low", "medium", "high")
	case "prompt_cache_retention":
		// Current SDKs (openai-go v3.96.0) spell it "in_memory"; earlier openai-python and
		// openai-node releases sent "in-memory". Both are clients' values, so both are accepted.
		_, e = asEnum(k, v, "in_memory", "in-memory", "24h")
	case "prompt_cache_options":
		e = checkPromptCacheOptions(v)
	case "logprobs":
		var b bool
		if b, e = asBool(k, v); e == nil && b {
			e = errUnsupported(k, "log probabilities are not produced by the mock")
		}
	case "top_logprobs":
		e = errUnsupported(k, "log probabilities are not produced by the mock")
	case "modalities":
		e = checkModalities(v)
	case "audio", "function_call", "functions", "moderation", "prediction", "web_search_options":
		e = errUnsupported(k, "the mock does not offer this feature")
	default:
		e = errUnknown(joinPath("", k))
	}
	return e
}

// finish checks required fields and cross-field rules, then settles the token budget.
func (d *chatDecoder) finish() *apierr.Error {
	r := d.req
	if !d.hasModel {
		return errMissing("model")
	}
	if !d.hasMessages {
		return errMissing("messages")
	}
	if d.hasStreamOptions && !r.Stream {
		// The OpenAI API answers 400 (param stream_options) in this case, and the SDKs only
		// send stream_options on streaming calls.
		return errValue("stream_options", "only allowed when stream is true")
	}
	if d.hasToolChoice {
		switch r.ToolChoice.Mode {
		case ToolChoiceRequired, ToolChoiceFunction:
			if len(r.Tools) == 0 {
				return errValue("tool_choice", "only allowed when tools are specified")
			}
		}
		if r.ToolChoice.Mode == ToolChoiceFunction &&
			!slices.ContainsFunc(r.Tools, func(t Tool) bool { return t.Name == r.ToolChoice.Function }) {
			return errValue("tool_choice.function.name", "must name a function defined in tools")
		}
	}
	switch {
	case d.hasMaxCompletionTokens:
		r.MaxTokens, r.MaxTokensParam = d.maxCompletionTokens, "max_completion_tokens"
	case d.hasMaxTokens:
		r.MaxTokens, r.MaxTokensParam = d.maxTokens, "max_tokens"
	}
	return nil
}

func (d *chatDecoder) streamOptions(v json.RawMessage) *apierr.Error {
	const path = "stream_options"
	o, e := asObject(path, v)
	if e != nil {
		return e
	}
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "include_usage":
			d.req.IncludeUsage, e = asBool(p, raw)
		case "include_obfuscation":
			_, e = asBool(p, raw) // accepted, no effect: the mock never obfuscates
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return e
		}
	}
	return nil
}

func (d *chatDecoder) messages(v json.RawMessage) *apierr.Error {
	msgs, e := decodeEach("messages", v, decodeMessage)
	if e != nil {
		return e
	}
	if len(msgs) == 0 {
		return errValue("messages", "must contain at least one message")
	}
	d.req.Messages = msgs
	return nil
}

// Message roles.
const (
	roleSystem    = "system"
	roleDeveloper = "developer"
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
)

func decodeMessage(path string, v json.RawMessage) (Message, *apierr.Error) {
	var m Message
	o, e := asObject(path, v)
	if e != nil {
		return m, e
	}
	role, rolePath, e := discriminator(path, o, "role")
	if e != nil {
		return m, e
	}
	switch role {
	case roleSystem, roleDeveloper, roleUser, roleAssistant, roleTool:
	case "function":
		return m, errUnsupported(rolePath, "function messages are deprecated in favor of tool messages and not supported by the mock")
	default:
		return m, errValue(rolePath, "must be one of system, developer, user, assistant, tool")
	}
	m.Role = role

	var hasContent, hasToolCallID, hasRefusal, hasAudio bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		assistant := role == roleAssistant
		switch {
		case k == "role":
		case k == "content":
			m.Content, e = decodeContent(p, role, raw)
			hasContent = true
		case k == "name":
			// Accepted on every role, tool included: the API ignores it on tool messages, and
			// LangChain (JS and Python) and go-openai's tool example set it on every tool result.
			m.Name, e = asString(p, raw)
		case k == "tool_call_id" && role == roleTool:
			if m.ToolCallID, e = asString(p, raw); e == nil && m.ToolCallID == "" {
				e = errValue(p, "must not be empty")
			}
			hasToolCallID = true
		case assistant && k == "refusal":
			_, e = asString(p, raw)
			hasRefusal = true
		case assistant && k == "annotations":
			_, e = asArray(p, raw) // sent back from an earlier response; entries are not used
		case assistant && k == "audio":
			e = decodeAssistantAudio(p, raw)
			hasAudio = true
		case assistant && k == "tool_calls":
			m.ToolCalls, e = decodeToolCalls(p, raw)
		case assistant && k == "function_call":
			e = errUnsupported(p, "function calls are deprecated in favor of tool_calls and not supported by the mock")
		case assistant && k == "parsed":
			// Added by the SDKs' parse helpers (openai-node's runTools and parse, openai-python's
			// parse) to the assistant message they keep and send back. Ignored.
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return m, e
		}
	}
	if !hasContent {
		if role != roleAssistant || (len(m.ToolCalls) == 0 && !hasRefusal && !hasAudio) {
			return m, errMissing(joinPath(path, "content"))
		}
	}
	if role == roleTool && !hasToolCallID {
		return m, errMissing(joinPath(path, "tool_call_id"))
	}
	return m, nil
}

// decodeContent returns the text of a string content, or the text of its parts concatenated in order
// (no separator is added: a client that split its text into parts gets it back as it wrote it).
func decodeContent(path, role string, v json.RawMessage) (string, *apierr.Error) {
	switch jsonKind(v) {
	case '"':
		return asString(path, v)
	case '[':
		texts, e := decodeEach(path, v, func(p string, it json.RawMessage) (string, *apierr.Error) {
			return decodeContentPart(p, role, it)
		})
		if e != nil {
			return "", e
		}
		return strings.Join(texts, ""), nil
	default:
		return "", errType(path, "a string or an array of content parts")
	}
}

func decodeContentPart(path, role string, v json.RawMessage) (string, *apierr.Error) {
	o, e := asObject(path, v)
	if e != nil {
		return "", e
	}
	typ, typePath, e := discriminator(path, o, "type")
	if e != nil {
		return "", e
	}
	switch typ {
	case "text":
	case "refusal":
		if role != roleAssistant {
			return "", errValue(typePath, "refusal parts are only allowed in assistant messages")
		}
	case "image_url", "input_audio", "file":
		if role == roleUser {
			return "", errUnsupported(typePath, "only text content parts are supported by the mock")
		}
		return "", errValue(typePath, "this content part type is only allowed in user messages")
	default:
		return "", errValue(typePath, "unknown content part type")
	}

	var text string
	var hasText bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch {
		case k == "type":
		case typ == "text" && k == "text", typ == "refusal" && k == "refusal":
			text, e = asString(p, raw)
			hasText = true
		case typ == "text" && k == "prompt_cache_breakpoint":
			e = decodePromptCacheBreakpoint(p, raw)
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return "", e
		}
	}
	if !hasText {
		return "", errMissing(joinPath(path, typ)) // the text of a "text" part, the refusal of a "refusal" part
	}
	return text, nil
}

// decodePromptCacheBreakpoint checks a text part's prompt_cache_breakpoint (openai-go v3.96.0:
// {mode: "explicit", ttl: "30m" or "12h"}), accepted with no effect like prompt_cache_options.
func decodePromptCacheBreakpoint(path string, v json.RawMessage) *apierr.Error {
	o, e := asObject(path, v)
	if e != nil {
		return e
	}
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "mode":
			_, e = asEnum(p, raw, "explicit")
		case "ttl":
			_, e = asEnum(p, raw, "30m", "12h")
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return e
		}
	}
	return nil
}

func decodeAssistantAudio(path string, v json.RawMessage) *apierr.Error {
	o, e := asObject(path, v)
	if e != nil {
		return e
	}
	var hasID bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "id":
			_, e = asString(p, raw)
			hasID = true
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return e
		}
	}
	if !hasID {
		return errMissing(joinPath(path, "id"))
	}
	return nil
}

func decodeToolCalls(path string, v json.RawMessage) ([]ToolCall, *apierr.Error) {
	return decodeEach(path, v, decodeToolCall)
}

func decodeToolCall(path string, v json.RawMessage) (ToolCall, *apierr.Error) {
	var c ToolCall
	o, e := asObject(path, v)
	if e != nil {
		return c, e
	}
	if e := checkFunctionType(path, o); e != nil {
		return c, e
	}
	var hasID, hasFunction bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "type":
		case "id":
			c.ID, e = asString(p, raw)
			hasID = true
		case "function":
			c.Name, c.Arguments, e = decodeToolCallFunction(p, raw)
			hasFunction = true
		case "index":
			// Left in by openai-python's streaming helper, whose accumulated message keeps the
			// chunk deltas' index. Ignored.
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return c, e
		}
	}
	if !hasID {
		return c, errMissing(joinPath(path, "id"))
	}
	if !hasFunction {
		return c, errMissing(joinPath(path, "function"))
	}
	return c, nil
}

func decodeToolCallFunction(path string, v json.RawMessage) (name, args string, _ *apierr.Error) {
	o, e := asObject(path, v)
	if e != nil {
		return "", "", e
	}
	var hasName, hasArgs bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "name":
			name, e = asString(p, raw)
			hasName = true
		case "arguments":
			args, e = asString(p, raw)
			hasArgs = true
		case "parsed_arguments":
			// Added by the SDKs' parse helpers (openai-node's runTools, openai-python's parse
			// and streaming helpers) to the tool calls they send back. Ignored.
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return "", "", e
		}
	}
	if !hasName {
		return "", "", errMissing(joinPath(path, "name"))
	}
	if !hasArgs {
		return "", "", errMissing(joinPath(path, "arguments"))
	}
	return name, args, nil
}

// discriminator reads the required string member key of object o at path — a message's role, a
// part's, tool's or format's type — which the other members cannot be classified without. It
// returns the member's path too, for the errors about its value.
func discriminator(path string, o object, key string) (string, string, *apierr.Error) {
	p := joinPath(path, key)
	raw, ok := o.get(key)
	if !ok {
		return "", p, errMissing(p)
	}
	v, e := asString(p, raw)
	return v, p, e
}

// checkFunctionType checks the "type" discriminator of a tool or a tool call: "function" is
// supported, "custom" is known but unsupported.
func checkFunctionType(path string, o object) *apierr.Error {
	typ, p, e := discriminator(path, o, "type")
	if e != nil {
		return e
	}
	switch typ {
	case "function":
		return nil
	case "custom":
		return errUnsupported(p, "custom tools are not supported by the mock")
	default:
		return errValue(p, "must be function")
	}
}

func decodeTools(v json.RawMessage) ([]Tool, *apierr.Error) {
	return decodeEach("tools", v, decodeTool) // an empty array is the same as no tools
}

// decodeEach decodes every element of an array at path with decode, naming each path[i]. An
// empty array gives nil, the same as an absent field.
func decodeEach[T any](path string, v json.RawMessage, decode func(string, json.RawMessage) (T, *apierr.Error)) ([]T, *apierr.Error) {
	items, e := asArray(path, v)
	if e != nil || len(items) == 0 {
		return nil, e
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		x, e := decode(indexPath(path, i), it)
		if e != nil {
			return nil, e
		}
		out = append(out, x)
	}
	return out, nil
}

func decodeTool(path string, v json.RawMessage) (Tool, *apierr.Error) {
	var t Tool
	o, e := asObject(path, v)
	if e != nil {
		return t, e
	}
	if e := checkFunctionType(path, o); e != nil {
		return t, e
	}
	var hasFunction bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "type":
		case "function":
			t, e = decodeFunctionDefinition(p, raw)
			hasFunction = true
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return t, e
		}
	}
	if !hasFunction {
		return t, errMissing(joinPath(path, "function"))
	}
	return t, nil
}

func decodeFunctionDefinition(path string, v json.RawMessage) (Tool, *apierr.Error) {
	var t Tool
	o, e := asObject(path, v)
	if e != nil {
		return t, e
	}
	var hasName bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "name":
			t.Name, e = asName(p, raw)
			hasName = true
		case "description":
			t.Description, e = asString(p, raw)
		case "parameters":
			t.Parameters, e = asCompactObject(p, raw)
		case "strict":
			t.Strict, e = asBool(p, raw)
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return t, e
		}
	}
	if !hasName {
		return t, errMissing(joinPath(path, "name"))
	}
	// OpenAI holds a strict schema to Structured Outputs' limits, and only a strict one.
	if t.Strict && t.Parameters != nil {
		if e := CheckSchemaLimits(joinPath(path, "parameters"), t.Parameters); e != nil {
			return t, e
		}
	}
	return t, nil
}

func decodeToolChoice(v json.RawMessage) (ToolChoice, *apierr.Error) {
	const path = "tool_choice"
	var tc ToolChoice
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		if e != nil {
			return tc, e
		}
		switch s {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			tc.Mode = s
			return tc, nil
		}
		return tc, errValue(path, "must be none, auto, required, or an object naming a function")
	case '{':
	default:
		return tc, errType(path, "a string or an object")
	}
	o, e := asObject(path, v)
	if e != nil {
		return tc, e
	}
	typ, typePath, e := discriminator(path, o, "type")
	if e != nil {
		return tc, e
	}
	switch typ {
	case "function":
	case "allowed_tools", "custom":
		return tc, errUnsupported(typePath, "only none, auto, required and a named function are supported by the mock")
	default:
		return tc, errValue(typePath, "must be function")
	}
	var hasFunction bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "type":
		case "function":
			tc.Function, e = decodeNamedFunction(p, raw)
			hasFunction = true
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return tc, e
		}
	}
	if !hasFunction {
		return tc, errMissing(joinPath(path, "function"))
	}
	tc.Mode = ToolChoiceFunction
	return tc, nil
}

func decodeNamedFunction(path string, v json.RawMessage) (string, *apierr.Error) {
	o, e := asObject(path, v)
	if e != nil {
		return "", e
	}
	var name string
	var hasName bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "name":
			name, e = asString(p, raw)
			hasName = true
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return "", e
		}
	}
	if !hasName {
		return "", errMissing(joinPath(path, "name"))
	}
	return name, nil
}

func decodeResponseFormat(v json.RawMessage) (ResponseFormat, *apierr.Error) {
	const path = "response_format"
	var rf ResponseFormat
	o, e := asObject(path, v)
	if e != nil {
		return rf, e
	}
	typ, typePath, e := discriminator(path, o, "type")
	if e != nil {
		return rf, e
	}
	switch typ {
	case FormatText, FormatJSONObject, FormatJSONSchema:
	default:
		return rf, errValue(typePath, "must be one of text, json_object, json_schema")
	}
	rf.Type = typ
	var hasSchema bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch {
		case k == "type":
		case k == "json_schema" && typ == FormatJSONSchema:
			rf.Name, rf.Schema, e = decodeJSONSchema(p, raw)
			hasSchema = true
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return rf, e
		}
	}
	if typ == FormatJSONSchema && !hasSchema {
		return rf, errMissing(joinPath(path, "json_schema"))
	}
	return rf, nil
}

func decodeJSONSchema(path string, v json.RawMessage) (name string, schema json.RawMessage, _ *apierr.Error) {
	o, e := asObject(path, v)
	if e != nil {
		return "", nil, e
	}
	var hasName, strict bool
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "name":
			name, e = asName(p, raw)
			hasName = true
		case "description":
			_, e = asString(p, raw)
		case "schema":
			schema, e = asCompactObject(p, raw)
		case "strict":
			strict, e = asBool(p, raw)
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return "", nil, e
		}
	}
	if !hasName {
		return "", nil, errMissing(joinPath(path, "name"))
	}
	if strict && schema != nil {
		if e := CheckSchemaLimits("response_format", schema); e != nil {
			return "", nil, e
		}
	}
	return name, schema, nil
}

func decodeStop(v json.RawMessage) ([]string, *apierr.Error) {
	const path = "stop"
	var out []string
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		if e != nil {
			return nil, e
		}
		if s != "" {
			out = append(out, s)
		}
		return out, nil
	case '[':
	default:
		return nil, errType(path, "a string or an array of strings")
	}
	items, e := asArray(path, v)
	if e != nil {
		return nil, e
	}
	if len(items) > maxStopSequences {
		return nil, errValue(path, fmt.Sprintf("must contain at most %d sequences", maxStopSequences))
	}
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

func checkLogitBias(v json.RawMessage) *apierr.Error {
	const path = "logit_bias"
	o, e := asObject(path, v)
	if e != nil {
		return e
	}
	// Keys are token ids chosen by the client: they never go into a param or a message.
	for _, raw := range o.all() {
		if _, e := asRangedNumber(path, raw, -100, 100); e != nil {
			return e
		}
	}
	return nil
}

func checkMetadata(v json.RawMessage) *apierr.Error {
	const path = "metadata"
	o, e := asObject(path, v)
	if e != nil {
		return e
	}
	if len(o) > maxMetadataPairs {
		return errValue(path, fmt.Sprintf("must have at most %d key-value pairs", maxMetadataPairs))
	}
	// Keys and values are the client's: they never go into a param or a message.
	for k, raw := range o.all() {
		if utf8.RuneCountInString(k) > maxMetadataKeyChars {
			return errValue(path, fmt.Sprintf("keys must be at most %d characters long", maxMetadataKeyChars))
		}
		if jsonKind(raw) != '"' {
			return errType(path, "an object whose values are strings")
		}
		s, e := asString(path, raw)
		if e != nil {
			return e
		}
		if utf8.RuneCountInString(s) > maxMetadataValueChars {
			return errValue(path, fmt.Sprintf("values must be at most %d characters long", maxMetadataValueChars))
		}
	}
	return nil
}

func checkPromptCacheOptions(v json.RawMessage) *apierr.Error {
	const path = "prompt_cache_options"
	o, e := asObject(path, v)
	if e != nil {
		return e
	}
	for k, raw := range o.all() {
		p := joinPath(path, k)
		switch k {
		case "mode":
			_, e = asEnum(p, raw, "implicit", "explicit")
		case "ttl":
			_, e = asEnum(p, raw, "30m")
		default:
			e = errUnknown(p)
		}
		if e != nil {
			return e
		}
	}
	return nil
}

func checkModalities(v json.RawMessage) *apierr.Error {
	const path = "modalities"
	items, e := asArray(path, v)
	if e != nil {
		return e
	}
	for i, it := range items {
		p := indexPath(path, i)
		s, e := asString(p, it)
		if e != nil {
			return e
		}
		switch s {
		case "text":
		case "audio":
			return errUnsupported(path, "the mock only produces text")
		default:
			return errValue(p, "must be text or audio")
		}
	}
	return nil
}

// ---- JSON value helpers. Each returns an invalid_value error naming path on a wrong type. ----

// jsonKind is the first byte of a JSON value: '{', '[', '"', 't', 'f', 'n', or a number's first
// character.
func jsonKind(v json.RawMessage) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

func isNumberKind(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

func isJSONNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func asObject(path string, v json.RawMessage) (object, *apierr.Error) {
	o, ok := splitObject(v)
	if !ok {
		return nil, errType(path, "an object")
	}
	return o, nil
}

func asArray(path string, v json.RawMessage) ([]json.RawMessage, *apierr.Error) {
	a, ok := splitArray(v)
	if !ok {
		return nil, errType(path, "an array")
	}
	return a, nil
}

func asString(path string, v json.RawMessage) (string, *apierr.Error) {
	s, ok := unquote(bytes.TrimSpace(v))
	if !ok {
		return "", errType(path, "a string")
	}
	return s, nil
}

func asBool(path string, v json.RawMessage) (bool, *apierr.Error) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errType(path, "a boolean")
}

func asEnum(path string, v json.RawMessage, allowed ...string) (string, *apierr.Error) {
	// A literal without escapes is compared in place, and the allowed value returned: no copy.
	if q := bytes.TrimSpace(v); len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' {
		for _, a := range allowed {
			if string(q[1:len(q)-1]) == a {
				return a, nil
			}
		}
	}
	s, e := asString(path, v)
	if e != nil {
		return "", e
	}
	if !slices.Contains(allowed, s) {
		return "", errValue(path, "must be one of "+strings.Join(allowed, ", "))
	}
	return s, nil
}

// asName is a string matching the protocol's name rule.
func asName(path string, v json.RawMessage) (string, *apierr.Error) {
	s, e := asString(path, v)
	if e != nil {
		return "", e
	}
	if !validName(s) {
		return "", errValue(path, "must be 1 to 64 characters of a-z, A-Z, 0-9, underscores and dashes")
	}
	return s, nil
}

// validName is the protocol's rule for function and json_schema names: ^[a-zA-Z0-9_-]{1,64}$.
func validName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// asCompactObject is a JSON object, kept compacted.
func asCompactObject(path string, v json.RawMessage) (json.RawMessage, *apierr.Error) {
	if jsonKind(v) != '{' {
		return nil, errType(path, "an object")
	}
	if !bytes.ContainsAny(v, " \t\r\n") {
		// No whitespace at all: compact already, and a scan is cheaper than Compact. Copied, as
		// Compact copies: v lies in the request's body buffer, which goes back to a pool.
		return bytes.Clone(v), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return nil, errType(path, "an object")
	}
	return json.RawMessage(buf.Bytes()), nil
}

func asRangedNumber(path string, v json.RawMessage, lo, hi float64) (float64, *apierr.Error) {
	raw := bytes.TrimSpace(v)
	if len(raw) == 0 || !isNumberKind(raw[0]) {
		return 0, errType(path, "a number")
	}
	// A value too large for a float64 parses as ±Inf (with ErrRange) and fails the range test.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, errType(path, "a number")
	}
	if f < lo || f > hi {
		return 0, errValue(path, fmt.Sprintf("must be between %s and %s", fmtNum(lo), fmtNum(hi)))
	}
	return f, nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// asInt64 is an integral JSON number (2 and 2.0 and 2e0 alike) that fits in an int64.
func asInt64(path string, v json.RawMessage) (int64, *apierr.Error) {
	raw := bytes.TrimSpace(v)
	if len(raw) == 0 || !isNumberKind(raw[0]) {
		return 0, errType(path, "an integer")
	}
	n, st := parseInteger(string(raw))
	switch st {
	case intOK:
		return n, nil
	case intTooLarge, intTooSmall:
		return 0, errValue(path, "must fit in a signed 64-bit integer")
	default:
		return 0, errValue(path, "must be an integer")
	}
}

// asBoundedInt is an integral JSON number in [lo, hi]; the message names the bound.
func asBoundedInt(path string, v json.RawMessage, lo, hi int64) (int64, *apierr.Error) {
	raw := bytes.TrimSpace(v)
	if len(raw) == 0 || !isNumberKind(raw[0]) {
		return 0, errType(path, "an integer")
	}
	n, st := parseInteger(string(raw))
	switch {
	case st == intNotIntegral:
		return 0, errValue(path, "must be an integer")
	case st == intTooSmall || (st == intOK && n < lo):
		return 0, errValue(path, fmt.Sprintf("%s must be at least %d", path, lo))
	case st == intTooLarge || (st == intOK && n > hi):
		return 0, errValue(path, fmt.Sprintf("%s must be at most %d", path, hi))
	}
	return n, nil
}

type intStatus int

const (
	intOK intStatus = iota
	intNotIntegral
	intTooLarge
	intTooSmall
)

// parseInteger reads a syntactically valid JSON number exactly (no float rounding): it is an
// integer when its decimal value has no fractional part, whatever its notation.
func parseInteger(s string) (int64, intStatus) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, intOK
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	tooBig := intTooLarge
	if neg {
		tooBig = intTooSmall
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	// value = digits × 10^shift
	const expClamp = 1 << 30
	shift := 0
	if exp != "" {
		e, err := strconv.Atoi(exp)
		switch {
		case err != nil && strings.HasPrefix(exp, "-"), e < -expClamp:
			shift = -expClamp
		case err != nil, e > expClamp:
			shift = expClamp
		default:
			shift = e
		}
	}
	digits := intPart + frac
	shift -= len(frac)
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		shift++
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, intOK
	}
	if shift < 0 {
		return 0, intNotIntegral
	}
	if len(digits)+shift > 19 {
		return 0, tooBig
	}
	lit := digits + strings.Repeat("0", shift)
	if neg {
		lit = "-" + lit
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return 0, tooBig
	}
	return n, intOK
}

// ---- paths and errors ----

// joinPath appends a key to a path. Keys are cut to 64 characters and non-printable characters
// become '?', since an unknown key is the client's text.
// plainKey reports a key that is short printable ASCII, which joinPath can use as it is.
func plainKey(key string) bool {
	if key == "" || len(key) > maxKeyCharsInPath {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// indexPath names an array element: path[i]. It runs for every element of every request, so it
// avoids fmt.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

func joinPath(path, key string) string {
	if plainKey(key) {
		// The common case, a protocol field name: nothing to cut or replace.
		if path == "" {
			return key
		}
		return path + "." + key
	}
	var b strings.Builder
	n := 0
	for _, r := range key {
		if n == maxKeyCharsInPath {
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	k := b.String()
	if k == "" {
		k = `""`
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func errInvalidJSON() *apierr.Error {
	return apierr.New(apierr.InvalidJSON, "",
		"We could not parse the JSON body of your request. The body must be a single JSON object.")
}

func errUnknown(path string) *apierr.Error {
	return apierr.New(apierr.UnknownParameter, path, fmt.Sprintf("Unknown parameter: '%s'.", path))
}

func errUnsupported(path, why string) *apierr.Error {
	return apierr.New(apierr.UnsupportedParameter, path,
		fmt.Sprintf("Unsupported parameter: '%s' is part of the protocol but not supported by this mock gateway (%s).", path, why))
}

func errMissing(path string) *apierr.Error {
	return apierr.New(apierr.MissingRequiredParameter, path,
		fmt.Sprintf("Missing required parameter: '%s'.", path))
}

func errType(path, want string) *apierr.Error {
	return apierr.New(apierr.InvalidValue, path,
		fmt.Sprintf("Invalid type for '%s': expected %s.", path, want))
}

func errValue(path, rule string) *apierr.Error {
	return apierr.New(apierr.InvalidValue, path, fmt.Sprintf("Invalid value for '%s': %s.", path, rule))
}
