package protocol

import (
	"strings"

	"mockgateway/internal/apierr"
)

// Message roles.
const (
	roleSystem    = "system"
	roleDeveloper = "developer"
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
)

// The message objects, by role. An assistant message may go without content when it carries
// tool calls, a refusal or audio: readMessage checks that after the key pass.
var (
	instructionMessageObject = objectSpec[*Message]{fields: decodeMessage, required: []string{"content"}} // system, developer, user
	toolMessageObject        = objectSpec[*Message]{fields: decodeMessage, required: []string{"content", "tool_call_id"}}
	assistantMessageObject   = objectSpec[*Message]{fields: decodeMessage}
)

func readMessage(m *Message, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	role, rolePath, e := readDiscriminator(path, o, "role")
	if e != nil {
		return e
	}
	var spec *objectSpec[*Message]
	switch role {
	case roleSystem, roleDeveloper, roleUser:
		spec = &instructionMessageObject
	case roleAssistant:
		spec = &assistantMessageObject
	case roleTool:
		spec = &toolMessageObject
	case "function":
		return errUnsupported(rolePath, "function messages are deprecated in favor of tool messages and not supported by the mock")
	default:
		return errValue(rolePath, "must be one of system, developer, user, assistant, tool")
	}
	m.Role = role // before the key pass: which members and content parts are allowed depends on it
	if e := spec.walk(m, path, o); e != nil {
		return e
	}
	if role == roleAssistant && len(m.ToolCalls) == 0 &&
		!hasMember(o, "content") && !hasMember(o, "refusal") && !hasMember(o, "audio") {
		return errMissing(joinPath(path, "content"))
	}
	return nil
}

func messageContent(m *Message, path string, v string) (e *apierr.Error) {
	m.Content, e = decodeContent(path, m.Role, v)
	return e
}

func messageToolCallID(m *Message, path string, v string) (e *apierr.Error) {
	if m.ToolCallID, e = asString(path, v); e == nil && m.ToolCallID == "" {
		e = errValue(path, "must not be empty")
	}
	return e
}

func messageToolCalls(m *Message, path string, v string) (e *apierr.Error) {
	m.ToolCalls, e = decodeEach(path, v, readToolCall)
	return e
}

// decodeContent returns the text of a string content, or the text of its parts concatenated in order
// (no separator is added: a client that split its text into parts gets it back as it wrote it).
func decodeContent(path, role string, v string) (string, *apierr.Error) {
	switch jsonKind(v) {
	case '"':
		return asString(path, v)
	case '[':
		texts, e := decodeEach(path, v, func(text *string, p, it string) *apierr.Error {
			return readContentPart(text, p, role, it)
		})
		if e != nil {
			return "", e
		}
		return strings.Join(texts, ""), nil
	default:
		return "", errType(path, "a string or an array of content parts")
	}
}

// partState is a content part being decoded: its type, and where its text goes. It is passed by
// value, so that it costs no allocation.
type partState struct {
	typ  string
	text *string
}

// The content part objects, by type and role. A part's required member is named like its type:
// the text of a "text" part, the refusal of a "refusal" part (an assistant's only).
var (
	textPartObject             = objectSpec[partState]{fields: decodeContentPart, required: []string{"text"}}
	assistantTextPartObject    = objectSpec[partState]{fields: decodeAssistantContentPart, required: []string{"text"}}
	assistantRefusalPartObject = objectSpec[partState]{fields: decodeAssistantContentPart, required: []string{"refusal"}}
)

func readContentPart(text *string, path, role string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	var spec *objectSpec[partState]
	switch typ {
	case "text":
		spec = &textPartObject
		if role == roleAssistant {
			spec = &assistantTextPartObject
		}
	case "refusal":
		if role != roleAssistant {
			return errValue(typePath, "refusal parts are only allowed in assistant messages")
		}
		spec = &assistantRefusalPartObject
	case "image_url", "input_audio", "file":
		if role == roleUser {
			return errUnsupported(typePath, "only text content parts are supported by the mock")
		}
		return errValue(typePath, "this content part type is only allowed in user messages")
	default:
		return errValue(typePath, "unknown content part type")
	}
	return spec.walk(partState{typ: typ, text: text}, path, o)
}

// decodeAssistantContentPart is a content part of an assistant message. Besides a part's own
// members it takes those of the answer's message that the Agents SDK (JS) copies into each part
// when it sends an earlier answer back — its role, refusal and annotations (the chat model's
// MemorySession does so on every turn after the first) — as sent-back fields, not used.
func decodeAssistantContentPart(part partState, k, p, v string) (fieldClass, *apierr.Error) {
	switch {
	case k == "type":
		return discriminator, nil
	case k == "text" && part.typ == "text", k == "refusal" && part.typ == "refusal":
		return supported, into(part.text)(asString(p, v))
	case k == "prompt_cache_breakpoint" && part.typ == "text":
		return noEffect, promptCacheBreakpointObject.decode(none{}, p, v)
	case k == "role":
		return noEffect, valid(asEnum(p, v, "assistant"))
	case k == "refusal":
		return noEffect, valid(asString(p, v))
	case k == "annotations":
		return noEffect, isArray(p, v)
	}
	return unknown, nil
}

func readToolCall(c *ToolCall, path string, v string) *apierr.Error {
	return readFunctionTyped(&toolCallObject, c, path, v)
}
