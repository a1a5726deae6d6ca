package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"

	"mockgateway/internal/jsonenc"
)

// The Responses API's answer and stream events, appended by hand like the chat ones (encode.go):
// a stream writes a dozen events per call and one per token, and every one of them is valid
// against the official OpenAPI document's Response and ResponseStreamEvent
// (internal/server's TestResponsesConformToOpenAI).

// Response is a Responses API answer: the body of a JSON call, and what a stream's
// response.created, response.in_progress and final event carry.
type Response struct {
	ID          string
	CreatedAt   int64
	Status      string // in_progress, completed, incomplete, failed
	CompletedAt int64  // 0: null (not completed)
	Incomplete  string // incomplete_details.reason; "": null
	Model       string
	Output      []OutputItem
	Usage       *ResponseUsage // nil: null (in progress)
	Echo        *ResponseEcho
}

// OutputItem is a message or a function call of an answer.
type OutputItem struct {
	Function bool   // a function_call item; else a message
	ID       string // msg_… or fc_…
	Status   string // in_progress, completed, incomplete
	// A message's one content part: its text, or its refusal. NoPart is a message just added,
	// whose content is still [].
	Text    string
	Refusal bool
	NoPart  bool
	// A function call's.
	CallID, Name, Arguments string
}

// ResponseUsage is the estimator's count, in the Responses API's names.
type ResponseUsage struct {
	Input, Output int
}

// AppendJSON appends the response object.
func (r *Response) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"id":`...)
	buf = jsonenc.AppendString(buf, r.ID)
	buf = append(buf, `,"object":"response","created_at":`...)
	buf = strconv.AppendInt(buf, r.CreatedAt, 10)
	buf = append(buf, `,"status":`...)
	buf = jsonenc.AppendString(buf, r.Status)
	buf = append(buf, `,"completed_at":`...)
	if r.CompletedAt > 0 {
		buf = strconv.AppendInt(buf, r.CompletedAt, 10)
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"error":null,"incomplete_details":`...)
	if r.Incomplete != "" {
		buf = append(buf, `{"reason":`...)
		buf = jsonenc.AppendString(buf, r.Incomplete)
		buf = append(buf, '}')
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"model":`...)
	buf = jsonenc.AppendString(buf, r.Model)
	buf = append(buf, `,"output":[`...)
	for i := range r.Output {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = r.Output[i].AppendJSON(buf)
	}
	buf = append(buf, ']')
	if u := r.Usage; u != nil { // absent while in progress: the document has no null usage
		buf = append(buf, `,"usage":{"input_tokens":`...)
		buf = strconv.AppendInt(buf, int64(u.Input), 10)
		buf = append(buf, `,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":`...)
		buf = strconv.AppendInt(buf, int64(u.Output), 10)
		buf = append(buf, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
		buf = strconv.AppendInt(buf, int64(u.Input+u.Output), 10)
		buf = append(buf, '}')
	}
	buf = append(buf, `,"background":false,"previous_response_id":null,"service_tier":"`+ServiceTier+`"`...)
	if r.Echo != nil && len(r.Echo.Members) > 0 {
		buf = append(buf, ',')
		buf = append(buf, r.Echo.Members...)
	}
	return append(buf, '}')
}

// SizeHint is about the length of the encoding.
func (r *Response) SizeHint() int {
	n := 512
	if r.Echo != nil {
		n += len(r.Echo.Members)
	}
	for i := range r.Output {
		it := &r.Output[i]
		n += 160 + len(it.Text) + len(it.Arguments) + len(it.Name)
	}
	return n
}

// AppendJSON appends the output item.
func (it *OutputItem) AppendJSON(buf []byte) []byte {
	if it.Function {
		buf = append(buf, `{"id":`...)
		buf = jsonenc.AppendString(buf, it.ID)
		buf = append(buf, `,"type":"function_call","status":`...)
		buf = jsonenc.AppendString(buf, it.Status)
		buf = append(buf, `,"call_id":`...)
		buf = jsonenc.AppendString(buf, it.CallID)
		buf = append(buf, `,"name":`...)
		buf = jsonenc.AppendString(buf, it.Name)
		buf = append(buf, `,"arguments":`...)
		buf = jsonenc.AppendString(buf, it.Arguments)
		return append(buf, '}')
	}
	buf = append(buf, `{"id":`...)
	buf = jsonenc.AppendString(buf, it.ID)
	buf = append(buf, `,"type":"message","status":`...)
	buf = jsonenc.AppendString(buf, it.Status)
	buf = append(buf, `,"role":"assistant","content":[`...)
	if !it.NoPart {
		buf = AppendContentPart(buf, it.Text, it.Refusal)
	}
	return append(buf, "]}"...)
}

// AppendContentPart appends a message's content part: output_text, or a refusal.
func AppendContentPart(buf []byte, text string, refusal bool) []byte {
	if refusal {
		buf = append(buf, `{"type":"refusal","refusal":`...)
		buf = jsonenc.AppendString(buf, text)
		return append(buf, '}')
	}
	buf = append(buf, `{"type":"output_text","text":`...)
	buf = jsonenc.AppendString(buf, text)
	return append(buf, `,"annotations":[],"logprobs":[]}`...)
}

// AppendEventStart opens a stream event: its SSE event line, and the data line's JSON up to
// its type and sequence number. The caller appends the event's other members, then
// AppendEventEnd.
func AppendEventStart(buf []byte, typ string, seq int) []byte {
	buf = append(buf, "event: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\ndata: {\"type\":\""...)
	buf = append(buf, typ...)
	buf = append(buf, `","sequence_number":`...)
	return strconv.AppendInt(buf, int64(seq), 10)
}

// AppendEventEnd closes what AppendEventStart opened: the JSON object, and the SSE frame.
func AppendEventEnd(buf []byte) []byte { return append(buf, "}\n\n"...) }

// AppendItemRef appends the members that place an event in an answer: its item, the item's
// index in output and, for a message's events, the content part's index (always 0: a message
// of the mock has one part).
func AppendItemRef(buf []byte, itemID string, output int, part bool) []byte {
	buf = append(buf, `,"item_id":`...)
	buf = jsonenc.AppendString(buf, itemID)
	buf = append(buf, `,"output_index":`...)
	buf = strconv.AppendInt(buf, int64(output), 10)
	if part {
		buf = append(buf, `,"content_index":0`...)
	}
	return buf
}

// AppendMember appends ,"key":"value".
func AppendMember(buf []byte, key, value string) []byte {
	buf = append(buf, ',', '"')
	buf = append(buf, key...)
	buf = append(buf, `":`...)
	return jsonenc.AppendString(buf, value)
}

// echoMembers encodes what every Response of a call repeats of its request (ResponseEcho), from
// the decoded request and the top level's raw members, which the key pass has validated.
// Absent members get the values OpenAI answers with.
func echoMembers(top object, req *ChatRequest) []byte {
	b := make([]byte, 0, 512) // the defaults alone take about 400 bytes
	raw := func(key, absent string) {
		v, ok := top.get(key)
		if !ok && absent == "" {
			return // a member the document has no null for: left out
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		if ok {
			// Null members were absent to the decoder; the answer leaves them out too, since
			// OpenAI's document has no null for most of them (a metadata value, text.format).
			b = appendWithoutNulls(b, v)
			return
		}
		b = append(b, absent...)
	}
	raw("instructions", "null")
	raw("max_output_tokens", "null")
	raw("max_tool_calls", "null")
	raw("metadata", "{}")
	b = append(b, `,"parallel_tool_calls":`...)
	b = strconv.AppendBool(b, req.ParallelToolCalls)
	raw("prompt_cache_key", "null")
	raw("reasoning", `{"effort":null,"summary":null}`)
	raw("safety_identifier", "null")
	raw("temperature", "1")
	raw("text", `{"format":{"type":"text"},"verbosity":"medium"}`)
	raw("tool_choice", `"auto"`)
	raw("top_logprobs", "0")
	raw("top_p", "1")
	raw("truncation", `"disabled"`)
	raw("user", "")
	b = append(b, `,"tools":`...)
	return appendEchoTools(b, top, req.Tools)
}

// appendEchoTools writes the function tools as OpenAI echoes them: every member present, strict
// true unless the client said otherwise (the Responses API's default).
func appendEchoTools(buf []byte, top object, tools []Tool) []byte {
	var items []json.RawMessage
	if v, ok := top.get("tools"); ok {
		items, _ = splitArray(v)
	}
	buf = append(buf, '[')
	for i := range tools {
		t := &tools[i]
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"type":"function","name":`...)
		buf = jsonenc.AppendString(buf, t.Name)
		buf = append(buf, `,"description":`...)
		if t.Description != "" {
			buf = jsonenc.AppendString(buf, t.Description)
		} else {
			buf = append(buf, "null"...)
		}
		buf = append(buf, `,"parameters":`...)
		if t.Parameters != nil {
			buf = append(buf, t.Parameters...)
		} else {
			buf = append(buf, "null"...)
		}
		strict := true
		if i < len(items) {
			if o, ok := splitObject(items[i]); ok && hasMember(o, "strict") {
				strict = t.Strict
			}
		}
		buf = append(buf, `,"strict":`...)
		buf = strconv.AppendBool(buf, strict)
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// appendWithoutNulls appends the compact JSON of the validated value v, leaving out the object
// members whose value is null in its first two levels: those are the members the decoder read
// and took null as absent in (a metadata value, text.format, a tool_choice's name). Below them
// — a text.format's JSON Schema, where "default": null means something — the value is copied as
// it came, and nothing a client sends recurses deeper than two levels.
func appendWithoutNulls(buf []byte, v json.RawMessage) []byte {
	return appendWithoutNullsTo(buf, v, 2)
}

func appendWithoutNullsTo(buf []byte, v json.RawMessage, levels int) []byte {
	switch kind := jsonKind(v); {
	case levels > 0 && kind == '{':
		o, _ := splitObject(v)
		buf = append(buf, '{')
		for n, f := range o {
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = jsonenc.AppendString(buf, f.key)
			buf = append(buf, ':')
			buf = appendWithoutNullsTo(buf, f.val, levels-1)
		}
		return append(buf, '}')
	case levels > 0 && kind == '[':
		items, _ := splitArray(v)
		buf = append(buf, '[')
		for i, it := range items {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendWithoutNullsTo(buf, it, levels-1)
		}
		return append(buf, ']')
	}
	b := bytes.NewBuffer(buf) // compacted onto buf, no copy
	if json.Compact(b, v) != nil {
		return append(buf, "null"...) // cannot happen: the decoder validated v
	}
	return b.Bytes()
}
