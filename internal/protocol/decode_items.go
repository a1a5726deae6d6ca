package protocol

import (
	"strings"

	"mockgateway/internal/apierr"
)

// The Responses API's input items, and the messages they become.

// decodeInput decodes an input (or instructions) into messages, followed by rest (the input's,
// after the instructions') in the same slice: a string is one message of stringRole; an array
// holds items, each becoming at most one message, except that the function_call items an answer
// carried join the assistant message before them, as one chat assistant message carries its tool
// calls. Each item is decoded where its message stays (nextMessage, nextCall), not into an item
// that is copied after.
//
// unanswered is a function_call_output that answers no call of the input: a cross-field rule,
// which the caller reports only once the other members have been checked.
func decodeInput(path, v, stringRole string, rest []Message) (msgs []Message, unanswered, e *apierr.Error) {
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		if e != nil {
			return nil, nil, e
		}
		msgs = append(make([]Message, 0, 1+len(rest)), Message{Role: stringRole, Content: s})
		return append(msgs, rest...), nil, nil
	case '[':
	default:
		return nil, nil, errType(path, "a string or an array of input items")
	}
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return nil, nil, e
	}
	msgs = make([]Message, 0, len(items)+len(rest)) // room for one message per item (nextMessage)
	outputs, referenced := 0, false
	for i, it := range items {
		kind, e := readInputItem(&msgs, indexPath(path, i), it)
		if e != nil {
			return nil, nil, e
		}
		switch kind {
		case itemFunctionCallOutput:
			outputs++
		case itemReference:
			referenced = true
		}
	}
	// An item_reference may stand for the call an output answers, which the mock cannot look up:
	// then no output is refused.
	if outputs > 0 && !referenced {
		unanswered = checkOutputsAnswerCalls(path, items, msgs)
	}
	return append(msgs, rest...), unanswered, nil
}

// nextMessage adds a message of role to msgs, whose capacity holds one message per item, and
// returns it, for its item to be decoded into.
func nextMessage(msgs *[]Message, role string) *Message {
	n := len(*msgs)
	*msgs = (*msgs)[:n+1]
	m := &(*msgs)[n]
	m.Role = role
	return m
}

// nextCall adds a tool call to the assistant message that ends msgs — an answer's calls follow
// its text, or each other — or to a new one, and returns it.
func nextCall(msgs *[]Message) *ToolCall {
	var m *Message
	if n := len(*msgs); n > 0 && (*msgs)[n-1].Role == roleAssistant {
		m = &(*msgs)[n-1]
	} else {
		m = nextMessage(msgs, roleAssistant)
	}
	m.ToolCalls = append(m.ToolCalls, ToolCall{})
	return &m.ToolCalls[len(m.ToolCalls)-1]
}

// checkOutputsAnswerCalls refuses a function_call_output whose call_id no function_call of the
// input carries, as OpenAI does. msgs are the input's: its calls are their tool calls, and its
// outputs their tool messages, in the order of the items.
func checkOutputsAnswerCalls(path string, items []string, msgs []Message) *apierr.Error {
	calls := map[string]bool{}
	for i := range msgs {
		for _, c := range msgs[i].ToolCalls {
			calls[c.ID] = true
		}
	}
	k := 0 // the outputs before msgs[i]
	for i := range msgs {
		if msgs[i].Role != roleTool {
			continue
		}
		if !calls[msgs[i].ToolCallID] {
			return errValue(joinPath(indexPath(path, outputItemIndex(items, k)), "call_id"),
				"no function_call in input has this call_id; send back the function_call item each output answers")
		}
		k++
	}
	return nil
}

// outputItemIndex is the index among the decoded items of the k-th function_call_output, for the
// path of an error about it.
func outputItemIndex(items []string, k int) int {
	for i, it := range items {
		var room stackMembers
		o, _ := appendMembers(room[:0], it, it)
		if raw, ok := o.get("type"); ok {
			if typ, _ := asString("type", raw); typ == "function_call_output" {
				if k == 0 {
					return i
				}
				k--
			}
		}
	}
	return -1 // cannot happen: every tool message is an output's
}

// Item kinds the mock reads; the others it accepts add nothing.
const (
	itemMessage = iota + 1
	itemFunctionCall
	itemFunctionCallOutput
	itemReference
	itemReasoning
)

// The input item objects, by type (a message may leave its type out).
var (
	inputMessageObject       = objectSpec[*Message]{fields: decodeInputMessage, required: []string{"content"}}
	functionCallItemObject   = objectSpec[*ToolCall]{fields: decodeFunctionCallItem, required: []string{"call_id", "name", "arguments"}}
	functionCallOutputObject = objectSpec[*Message]{fields: decodeFunctionCallOutput, required: []string{"call_id", "output"}}
	itemReferenceObject      = objectSpec[none]{fields: decodeItemReference, required: []string{"id"}}
	reasoningItemObject      = objectSpec[none]{fields: decodeReasoningItem}
)

// readInputItem decodes the item v into what it adds to msgs, and tells its kind.
func readInputItem(msgs *[]Message, path string, v string) (int, *apierr.Error) {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return 0, e
	}
	typ := "message" // EasyInputMessage: a role and content, no type
	if !hasMember(o, "role") && hasMember(o, "id") {
		typ = "item_reference" // whose type is optional too
	}
	typePath := joinPath(path, "type")
	if hasMember(o, "type") {
		if typ, typePath, e = readDiscriminator(path, o, "type"); e != nil {
			return 0, e
		}
	}
	switch typ {
	case "message":
		return itemMessage, readInputMessage(nextMessage(msgs, ""), path, o) // which reads its role
	case "function_call":
		return itemFunctionCall, functionCallItemObject.walk(nextCall(msgs), path, o)
	case "function_call_output":
		return itemFunctionCallOutput, functionCallOutputObject.walk(nextMessage(msgs, roleTool), path, o)
	case "item_reference":
		return itemReference, itemReferenceObject.walk(none{}, path, o)
	case "reasoning":
		return itemReasoning, reasoningItemObject.walk(none{}, path, o)
	case "file_search_call", "computer_call", "computer_call_output", "web_search_call", "image_generation_call",
		"code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
		"apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
		"mcp_call", "custom_tool_call", "custom_tool_call_output", "compaction", "compaction_trigger", "tool_search_call",
		"tool_search_output", "program", "program_output", "additional_tools":
		return 0, errUnsupported(typePath, typ+" items are not supported by the mock: it offers function tools only")
	}
	return 0, errValue(typePath, "must be one of message, function_call, function_call_output, item_reference, reasoning")
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
		return supported, readItemContent(&m.Content, p, m.Role, v)
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

// readItemContent is a message item's content, into text: a string, or its text parts
// concatenated in order.
func readItemContent(text *string, path, role string, v string) *apierr.Error {
	switch jsonKind(v) {
	case '"':
		return into(text)(asString(path, v))
	case '[':
	default:
		return errType(path, "a string or an array of content parts")
	}
	var room stackElements
	parts, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	if len(parts) == 1 { // what the SDKs send: the one part's text is the content, with nothing to join
		return readItemPart(text, indexPath(path, 0), role, parts[0])
	}
	texts := make([]string, len(parts))
	for i, part := range parts {
		if e := readItemPart(&texts[i], indexPath(path, i), role, part); e != nil {
			return e
		}
	}
	*text = strings.Join(texts, "")
	return nil
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
		return supported, readItemContent(&m.Content, p, roleTool, v)
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

// decodeReasoningItem is a reasoning item a client sends back from an earlier answer: validated
// here; its encrypted_content is kept by collectSentBack, for a reasoning model to verify.
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
