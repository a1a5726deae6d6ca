package protocol

import (
	"strings"

	"mockgateway/internal/apierr"
)

// Google's Gemini API (generateContent, streamGenerateContent, countTokens) is a dialect of
// the same service, decoded as the others: as strictly, into the Request it stands for, with
// the GenerateContentRequest of google-genai (the JS and Go SDKs) and what Gemini CLI sends.
// The model is the path's, not the body's; streaming is the method's.
//
// Google's API reads its members in camelCase and in snake_case alike (its curl examples use
// snake_case): every table here is written in camelCase and a snake_case key is read as its
// camelCase twin (googleKey); an error names the key as it was sent.
//
// The translation:
//
//	systemInstruction (parts' text)       → a system message before the others
//	contents[i] user, text parts          → a user message (the parts' text, concatenated)
//	contents[i] user, functionResponse    → a tool message per response (response, compacted)
//	contents[i] model, text parts         → an assistant message's content (thought parts dropped)
//	contents[i] model, functionCall       → its tool calls (args → arguments, compacted)
//	tools[].functionDeclarations          → tools (parametersJsonSchema, or parameters made JSON Schema)
//	toolConfig.functionCallingConfig      → tool_choice (ANY → required, or the one allowed name)
//	generationConfig.maxOutputTokens      → the budget (at most the ceiling); stopSequences → stop
//	generationConfig.candidateCount       → n; responseJsonSchema / responseSchema → json_schema
//	generationConfig.thinkingConfig       → Reasoning (a thinking model's budget, level, thoughts)
//
// inlineData and fileData parts go to Attachments, which only the estimator reads; safety
// settings, sampling and the bookkeeping members are accepted and add nothing.

// googleState is a Gemini request being decoded. count is a countTokens request's
// (generateContentRequest's members without its model).
type googleState struct {
	req    *Request
	lim    Limits
	count  bool
	system []Message
	fields FieldSet // the chat request's members the Gemini members stand for (Request.Fields)
	// mimeJSON: responseMimeType is application/json.
	mimeJSON bool
}

// GoogleCall is what a Gemini route gives the decoder beside the body: the model of its path
// and whether the method streams.
type GoogleCall struct {
	Model  string
	Stream bool
}

// DecodeGoogleRequest strictly decodes a generateContent (or streamGenerateContent) body into
// the chat request it stands for. The rules are DecodeChatRequest's.
func DecodeGoogleRequest(call GoogleCall, body []byte, lim Limits) (*Request, *apierr.Error) {
	return decodeGoogle(call, body, lim, false)
}

// DecodeGoogleCount decodes a countTokens body: {contents} (and what the API counts beside
// them: systemInstruction, tools), or {generateContentRequest}, a whole request.
func DecodeGoogleCount(call GoogleCall, body []byte, lim Limits) (*Request, *apierr.Error) {
	return decodeGoogle(call, body, lim, true)
}

func decodeGoogle(call GoogleCall, body []byte, lim Limits, count bool) (*Request, *apierr.Error) {
	if !validObjectBody(body) {
		return nil, errInvalidJSON()
	}
	doc := string(body)
	lim = lim.withDefaults()
	return decodeWithPathsOnError(func(root string) (*Request, *apierr.Error) {
		return decodeGoogleDoc(call, doc, lim, root, count)
	})
}

func decodeGoogleDoc(call GoogleCall, doc string, lim Limits, root string, count bool) (*Request, *apierr.Error) {
	var room stackRequestMembers
	top, ok := appendMembers(room[:0], doc, doc)
	if !ok {
		return nil, errInvalidJSON()
	}
	c := &googleState{req: &Request{N: 1, ParallelToolCalls: true, Model: call.Model, Stream: call.Stream}, lim: lim, count: count}
	spec := &googleObject
	if count {
		spec = &googleCountObject
	}
	if e := spec.walk(c, root, top); e != nil {
		return nil, e
	}
	if e := c.finish(); e != nil {
		return nil, e
	}
	c.req.Fields = c.fields &^ requiredFields
	c.req.IncludeUsage = c.req.Stream // the last event always carries usageMetadata
	return c.req, nil
}

var (
	googleObject      = objectSpec[*googleState]{fields: googleTopField, required: []string{"contents"}}
	googleCountObject = objectSpec[*googleState]{fields: googleCountField}
)

// googleKey is a member's name in camelCase: snake_case read as Google's API reads it.
func googleKey(k string) string {
	if strings.IndexByte(k, '_') < 0 {
		return k
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(k); i++ {
		switch ch := k[i]; {
		case ch == '_' && i > 0:
			up = true
		case up && ch >= 'a' && ch <= 'z':
			b.WriteByte(ch - 'a' + 'A')
			up = false
		default:
			b.WriteByte(ch)
			up = false
		}
	}
	return b.String()
}

// note records that the request carried what the chat member name stands for.
func (c *googleState) note(name string) {
	if i := fieldIndex(name); i >= 0 {
		c.fields |= 1 << i
	}
}

const noGoogleServerTools = "the mock runs no server tools (search, code execution, URL context, maps): declare functions and run them yourself"

// googleTopField is GenerateContentRequest's top level.
func googleTopField(c *googleState, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "model":
		// The SDKs leave it to the path; a body that names one must name the path's.
		s, e := asString(p, v)
		if e == nil && strings.TrimPrefix(s, "models/") != c.req.Model {
			e = errValue(p, "must be the model of the request's path")
		}
		return noEffect, e
	case "contents":
		c.note("messages")
		return supported, c.contents(p, v)
	case "systemInstruction":
		return supported, c.readSystem(p, v)
	case "tools":
		return supported, c.tools(p, v)
	case "toolConfig":
		return supported, googleToolConfigObject.decode(c, p, v)
	case "generationConfig":
		return supported, googleGenerationConfigObject.decode(c, p, v)
	case "safetySettings":
		var room stackElements
		items, e := asArray(room[:0], p, v)
		for i := 0; e == nil && i < len(items); i++ {
			e = googleSafetySettingObject.decode(none{}, indexPath(p, i), items[i])
		}
		return noEffect, e
	case "labels":
		return noEffect, isObject(p, v)
	case "cachedContent":
		return unsupported, errUnsupported(p, "the mock caches no content: send the whole conversation")
	case "serviceTier":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

// googleCountField is countTokens' top level: contents, or a whole generateContentRequest, and
// what the SDKs send beside contents (systemInstruction, tools, generationConfig), counted as
// the answer counts them.
func googleCountField(c *googleState, k, p, v string) (fieldClass, *apierr.Error) {
	if googleKey(k) == "generateContentRequest" {
		return supported, googleObject.decode(c, p, v)
	}
	return googleTopField(c, k, p, v)
}

// finish puts the system instruction first and checks the cross-member rules.
func (c *googleState) finish() *apierr.Error {
	r := c.req
	if len(r.Messages) == 0 && !c.count {
		return errMissing("contents")
	}
	if len(c.system) > 0 {
		r.Messages = append(c.system, r.Messages...)
	}
	if r.ToolChoice.Mode != "" {
		if r.ToolChoice.Mode == ToolChoiceRequired && len(r.Tools) == 0 {
			return errValue("toolConfig.functionCallingConfig.mode", "ANY requires function declarations")
		}
		if e := checkToolChoice(r, "toolConfig.functionCallingConfig.allowedFunctionNames"); e != nil {
			return e
		}
	}
	if r.ResponseFormat.Type == FormatJSONSchema {
		if !c.mimeJSON {
			return errValue("generationConfig.responseMimeType", "must be application/json when a response schema is set")
		}
		return CheckSchemaPatterns("generationConfig.responseJsonSchema", r.ResponseFormat.Schema, c.lim.MaxRegexProgram)
	}
	if c.mimeJSON {
		r.ResponseFormat.Type = FormatJSONObject
	}
	return nil
}

var googleSafetySettingObject = objectSpec[none]{fields: decodeGoogleSafetySetting}

// decodeGoogleSafetySetting: the mock blocks nothing, whatever the thresholds.
func decodeGoogleSafetySetting(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "category", "threshold", "method":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

var googleToolConfigObject = objectSpec[*googleState]{fields: decodeGoogleToolConfig}

func decodeGoogleToolConfig(c *googleState, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "functionCallingConfig":
		c.note("tool_choice")
		return supported, googleFunctionCallingObject.decode(c.req, p, v)
	case "retrievalConfig":
		return noEffect, isObject(p, v)
	case "includeServerSideToolInvocations":
		return noEffect, valid(asBool(p, v))
	}
	return unknown, nil
}

var googleFunctionCallingObject = objectSpec[*Request]{fields: decodeGoogleFunctionCalling}

// decodeGoogleFunctionCalling: AUTO (and VALIDATED) call as the model likes, ANY must call (the
// one allowed function when it names one), NONE calls none.
func decodeGoogleFunctionCalling(r *Request, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "mode":
		mode, e := asEnum(p, v, "MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")
		switch mode {
		case "ANY":
			if r.ToolChoice.Function == "" {
				r.ToolChoice.Mode = ToolChoiceRequired
			}
		case "NONE":
			r.ToolChoice = ToolChoice{Mode: ToolChoiceNone}
		default:
			r.ToolChoice = ToolChoice{Mode: ToolChoiceAuto}
		}
		return supported, e
	case "allowedFunctionNames":
		var room stackElements
		items, e := asArray(room[:0], p, v)
		for i := 0; e == nil && i < len(items); i++ {
			var name string
			name, e = asString(indexPath(p, i), items[i])
			if len(items) == 1 && (r.ToolChoice.Mode == "" || r.ToolChoice.Mode == ToolChoiceRequired) {
				// One allowed function under ANY: that function is called (the names sort
				// before mode, which keeps it under ANY and drops it under AUTO or NONE).
				r.ToolChoice = ToolChoice{Mode: ToolChoiceFunction, Function: name}
			}
		}
		return supported, e
	}
	return unknown, nil
}
