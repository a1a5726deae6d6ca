package protocol

import (
	"strings"

	"mockgateway/internal/apierr"
)

// The Responses API's input items, and the messages they become.

// decodeInput decodes an input (or instructions): a string is one message of stringRole; an
// array holds items, each becoming at most one message, except that the function_call items an
// answer carried join the assistant message before them, as one chat assistant message carries
// its tool calls.
//
// unanswered is a function_call_output that answers no call of the input: a cross-field rule,
// which the caller reports only once the other members have been checked.
func decodeInput(path, v, stringRole string) (msgs []Message, unanswered, e *apierr.Error) {
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		if e != nil {
			return nil, nil, e
		}
		return []Message{{Role: stringRole, Content: s}}, nil, nil
	case '[':
	default:
		return nil, nil, errType(path, "a string or an array of input items")
	}
	items, e := decodeEach(path, v, readInputItem)
	if e != nil {
		return nil, nil, e
	}
	unanswered = checkOutputsAnswerCalls(path, items)
	msgs = make([]Message, 0, len(items))
	for i := range items {
		it := &items[i]
		switch it.kind {
		case itemFunctionCall:
			// An answer's calls follow its text, or each other.
			if n := len(msgs); n > 0 && msgs[n-1].Role == roleAssistant {
				msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, it.call)
			} else {
				msgs = append(msgs, Message{Role: roleAssistant, ToolCalls: []ToolCall{it.call}})
			}
		case itemMessage, itemFunctionCallOutput:
			msgs = append(msgs, it.msg)
		}
	}
	return msgs, unanswered, nil
}

// checkOutputsAnswerCalls refuses a function_call_output whose call_id no function_call of the
// input carries, as OpenAI does. An item_reference may stand for the call, which the mock
// cannot look up: then nothing is refused.
func checkOutputsAnswerCalls(path string, items []inputItem) *apierr.Error {
	calls := map[string]bool{}
	for i := range items {
		switch items[i].kind {
		case itemFunctionCall:
			calls[items[i].call.ID] = true
		case itemReference:
			return nil
		}
	}
	for i := range items {
		if it := &items[i]; it.kind == itemFunctionCallOutput && !calls[it.msg.ToolCallID] {
			return errValue(joinPath(indexPath(path, i), "call_id"),
				"no function_call in input has this call_id; send back the function_call item each output answers")
		}
	}
	return nil
}

// Item kinds the mock reads; the others it accepts add nothing.
const (
	itemMessage = iota + 1
	itemFunctionCall
	itemFunctionCallOutput
	itemReference
	itemReasoning
)

// inputItem is one decoded input item.
type inputItem struct {
	kind int
	msg  Message  // a message, or a function_call_output's tool message
	call ToolCall // a function_call
}

// The input item objects, by type (a message may leave its type out).
var (
	inputMessageObject       = objectSpec[*Message]{fields: decodeInputMessage, required: []string{"content"}}
	functionCallItemObject   = objectSpec[*ToolCall]{fields: decodeFunctionCallItem, required: []string{"call_id", "name", "arguments"}}
	functionCallOutputObject = objectSpec[*Message]{fields: decodeFunctionCallOutput, required: []string{"call_id", "output"}}
	itemReferenceObject      = objectSpec[none]{fields: decodeItemReference, required: []string{"id"}}
	reasoningItemObject      = objectSpec[none]{fields: decodeReasoningItem}
)

func readInputItem(it *inputItem, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ := "message" // EasyInputMessage: a role and content, no type
	if !hasMember(o, "role") && hasMember(o, "id") {
		typ = "item_reference" // whose type is optional too
	}
	typePath := joinPath(path, "type")
	if hasMember(o, "type") {
		if typ, typePath, e = readDiscriminator(path, o, "type"); e != nil {
			return e
		}
	}
	switch typ {
	case "message":
		it.kind = itemMessage
		return readInputMessage(&it.msg, path, o)
	case "function_call":
		it.kind = itemFunctionCall
		return functionCallItemObject.walk(&it.call, path, o)
	case "function_call_output":
		it.kind, it.msg.Role = itemFunctionCallOutput, roleTool
		return functionCallOutputObject.walk(&it.msg, path, o)
	case "item_reference":
		it.kind = itemReference
		return itemReferenceObject.walk(none{}, path, o)
	case "reasoning":
		it.kind = itemReasoning
		return reasoningItemObject.walk(none{}, path, o)
	case "file_search_call", "computer_call", "computer_call_output", "web_search_call", "image_generation_call",
		"code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
		"apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
		"mcp_call", "custom_tool_call", "custom_tool_call_output", "compaction", "compaction_trigger", "tool_search_call",
		"tool_search_output", "program", "program_output", "additional_tools":
		return errUnsupported(typePath, typ+" items are not supported by the mock: it offers function tools only")
	}
	return errValue(typePath, "must be one of message, function_call, function_call_output, item_reference, reasoning")
}

func readInputMessage(m *Message, path string, o members[string]) *apierr.Error {
	role, rolePath, e := readDiscriminator(path, o, "role")
	if e != nil {
		return e
	}
	switch role {
	case roleUser, roleSystem, roleDeveloper, roleAssistant:
	default:
		return errValue(rolePath, "must be one of user, assistant, system, developer")
	}
	m.Role = role
	return inputMessageObject.walk(m, path, o)
}

func decodeInputMessage(m *Message, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type", "role":
		return discriminator, nil
	case "content":
		return supported, into(&m.Content)(decodeItemContent(p, m.Role, v))
	case "id":
		return noEffect, valid(asString(p, v)) // an earlier answer's item, sent back as it came
	case "status":
		return noEffect, valid(asEnum(p, v, "in_progress", "completed", "incomplete"))
	case "phase":
		if m.Role != roleAssistant {
			return unknown, nil
		}
		return noEffect, valid(asEnum(p, v, "commentary", "final_answer"))
	}
	return unknown, nil
}

// decodeItemContent is a message item's content: a string, or its text parts concatenated in order.
func decodeItemContent(path, role string, v string) (string, *apierr.Error) {
	switch jsonKind(v) {
	case '"':
		return asString(path, v)
	case '[':
	default:
		return "", errType(path, "a string or an array of content parts")
	}
	texts, e := decodeEach(path, v, func(text *string, p, it string) *apierr.Error {
		return readItemPart(text, p, role, it)
	})
	return strings.Join(texts, ""), e
}

// The content part objects of input items, by type.
var (
	inputTextPartObject  = objectSpec[partState]{fields: decodeItemPart, required: []string{"text"}}
	outputTextPartObject = objectSpec[partState]{fields: decodeItemPart, required: []string{"text"}}
	refusalItemPart      = objectSpec[partState]{fields: decodeItemPart, required: []string{"refusal"}}
)

func readItemPart(text *string, path, role string, v string) *apierr.Error {
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
	case "input_text":
		spec = &inputTextPartObject
	case "output_text", "refusal":
		if role != roleAssistant {
			return errValue(typePath, "output_text and refusal parts are only allowed in assistant messages")
		}
		spec = &outputTextPartObject
		if typ == "refusal" {
			spec = &refusalItemPart
		}
	case "input_image", "input_file", "input_audio":
		return errUnsupported(typePath, "only text content parts are supported by the mock")
	default:
		return errValue(typePath, "must be one of input_text, output_text, refusal, input_image, input_file, input_audio")
	}
	return spec.walk(partState{typ: typ, text: text}, path, o)
}

func decodeItemPart(part partState, k, p, v string) (fieldClass, *apierr.Error) {
	switch {
	case k == "type":
		return discriminator, nil
	case k == "text" && part.typ != "refusal", k == "refusal" && part.typ == "refusal":
		return supported, into(part.text)(asString(p, v))
	case k == "prompt_cache_breakpoint" && part.typ == "input_text":
		return noEffect, promptCacheBreakpointObject.decode(none{}, p, v)
	case (k == "annotations" || k == "logprobs") && part.typ == "output_text":
		return noEffect, isArray(p, v) // an earlier answer's, sent back; not used
	}
	return unknown, nil
}

func decodeFunctionCallItem(c *ToolCall, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "call_id":
		return supported, into(&c.ID)(asString(p, v))
	case "name":
		return supported, into(&c.Name)(asString(p, v))
	case "arguments":
		return supported, into(&c.Arguments)(asString(p, v))
	case "id", "namespace":
		return noEffect, valid(asString(p, v))
	case "caller":
		return noEffect, isObject(p, v) // who ran the call (openai-go's ToolCallCaller)
	case "status":
		return noEffect, valid(asEnum(p, v, "in_progress", "completed", "incomplete"))
	}
	return unknown, nil
}

func decodeFunctionCallOutput(m *Message, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "call_id":
		return supported, messageToolCallID(m, p, v)
	case "output":
		// A string, or content parts, of which the mock reads text only.
		return supported, into(&m.Content)(decodeItemContent(p, roleTool, v))
	case "id", "name", "namespace":
		return noEffect, valid(asString(p, v))
	case "caller":
		return noEffect, isObject(p, v)
	case "status":
		return noEffect, valid(asEnum(p, v, "in_progress", "completed", "incomplete"))
	}
	return unknown, nil
}

func decodeItemReference(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "id":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

// decodeReasoningItem is a reasoning item a client sends back from a real model's answer. The
// mock never makes one, and reads none.
func decodeReasoningItem(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "id", "encrypted_content":
		return noEffect, valid(asString(p, v))
	case "summary", "content":
		return noEffect, isArray(p, v)
	case "status":
		return noEffect, valid(asEnum(p, v, "in_progress", "completed", "incomplete"))
	}
	return unknown, nil
}
