package protocol

import (
	"strconv"

	"mockgateway/internal/jsonenc"
	"mockgateway/internal/jsonscan"
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

// OutputItem is a message, a function call or a reasoning item of an answer.
type OutputItem struct {
	Function bool   // a function_call item
	ID       string // msg_…, fc_… or rs_…
	Status   string // in_progress, completed, incomplete
	// A message's one content part: its text, or its refusal. NoPart is a message just added,
	// whose content is still [].
	Text    string
	Refusal bool
	NoPart  bool
	// A function call's.
	CallID, Name, Arguments string
	// A reasoning item's (Reasoning): its one summary part's text ("": an empty summary) and its
	// sealed encrypted_content ("": left out).
	Reasoning                 bool
	Summary, EncryptedContent string
}

// ResponseUsage is the estimator's count, in the Responses API's names.
type ResponseUsage struct {
	Input, Output int
	Reasoning     int // of Output
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
		buf = append(buf, `,"output_tokens_details":{"reasoning_tokens":`...)
		buf = strconv.AppendInt(buf, int64(u.Reasoning), 10)
		buf = append(buf, `},"total_tokens":`...)
		buf = strconv.AppendInt(buf, int64(u.Input+u.Output), 10)
		buf = append(buf, '}')
	}
	buf = append(buf, `,"background":false,"previous_response_id":null,"service_tier":"`+ServiceTier+`"`...)
	if r.Echo != nil && len(r.Echo.members) > 0 {
		buf = append(buf, ',')
		buf = append(buf, r.Echo.members...)
	}
	return append(buf, '}')
}

// SizeHint is about the length of the encoding.
func (r *Response) SizeHint() int {
	n := 512
	if r.Echo != nil {
		n += len(r.Echo.members)
	}
	for i := range r.Output {
		it := &r.Output[i]
		n += 160 + len(it.Text) + len(it.Arguments) + len(it.Name) + len(it.Summary) + len(it.EncryptedContent)
	}
	return n
}

// AppendJSON appends the output item.
func (it *OutputItem) AppendJSON(buf []byte) []byte {
	if it.Reasoning {
		return it.appendReasoning(buf)
	}
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

// appendReasoning appends a reasoning item: its summary, one summary_text part or none, and its
// encrypted content when the request included it.
func (it *OutputItem) appendReasoning(buf []byte) []byte {
	buf = append(buf, `{"id":`...)
	buf = jsonenc.AppendString(buf, it.ID)
	buf = append(buf, `,"type":"reasoning","summary":[`...)
	if it.Summary != "" {
		buf = AppendSummaryPart(buf, it.Summary)
	}
	buf = append(buf, ']')
	if it.EncryptedContent != "" {
		buf = AppendMember(buf, "encrypted_content", it.EncryptedContent)
	}
	return append(buf, '}')
}

// AppendSummaryPart appends a reasoning summary's summary_text part.
func AppendSummaryPart(buf []byte, text string) []byte {
	buf = append(buf, `{"type":"summary_text","text":`...)
	buf = jsonenc.AppendString(buf, text)
	return append(buf, '}')
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

// echoed are the request members every Response repeats (ResponseEcho), in the order its answers
// carry them, which is their key order, and what each is when the request left it out ("": the
// member is left out too, the document having no null for it). The tools follow them all
// (appendEchoTools).
var echoed = [...]struct{ key, absent string }{
	{"instructions", "null"},
	{"max_output_tokens", "null"},
	{"max_tool_calls", "null"},
	{"metadata", "{}"},
	{"parallel_tool_calls", "true"},
	{"prompt_cache_key", "null"},
	{"reasoning", `{"effort":null,"summary":null}`},
	{"safety_identifier", "null"},
	{"temperature", "1"},
	{"text", `{"format":{"type":"text"},"verbosity":"medium"}`},
	{"tool_choice", `"auto"`},
	{"top_logprobs", "0"},
	{"top_p", "1"},
	{"truncation", `"disabled"`},
	{"user", ""},
}

// echoOf is what every Response of a call repeats of its request (ResponseEcho): the echoed
// members from the top level's members, which the key pass has validated, and the tools from the
// decoded request. A request that sends none of them, as most do, shares defaultEcho.
// hosted says the request offers tools of other types than function, which req.Tools leaves out.
func echoOf(top members[string], req *Request, hosted bool) *ResponseEcho {
	at := noneSent() // where each echoed member is in top
	sent := len(req.Tools) > 0 || hosted
	i := 0
	for n, m := range &echoed { // both are in key order: one pass over the two
		for i < len(top) && top[i].key < m.key {
			i++
		}
		if i == len(top) {
			break // the members left are not sent
		}
		if top[i].key == m.key {
			at[n], sent = i, true
		}
	}
	if !sent {
		return defaultEcho
	}
	tools, _ := top.get("tools")
	return &ResponseEcho{members: encodeEcho(top, &at, tools, req.Tools, hosted)}
}

// defaultEcho is the echo of a request that sends no echoed member and no tool: made once, and
// shared by every such call (TestDefaultEcho), which its unexported, never-written members allow.
var defaultEcho = &ResponseEcho{members: encodeEcho(nil, new(noneSent()), "", nil, false)}

// noneSent are echoOf's positions of echoed members when none is sent.
func noneSent() (at [len(echoed)]int) {
	for n := range at {
		at[n] = -1
	}
	return at
}

// encodeEcho encodes the echoed members, each top[at[n]] or, when at[n] is -1, its absent value,
// and then the tools (appendEchoTools), sentTools being the tools member as it came.
func encodeEcho(top members[string], at *[len(echoed)]int, sentTools string, tools []Tool, hosted bool) []byte {
	size := 512 + len(sentTools) // the defaults alone take about 400 bytes
	for _, i := range at {
		if i >= 0 {
			size += len(top[i].val)
		}
	}
	b := make([]byte, 0, size)
	for n, m := range &echoed {
		if at[n] < 0 && m.absent == "" {
			continue // a member the document has no null for: left out
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		if at[n] >= 0 {
			// Null members were absent to the decoder; the answer leaves them out too, since
			// OpenAI's document has no null for most of them (a metadata value, text.format).
			b = appendWithoutNulls(b, top[at[n]].val)
		} else {
			b = append(b, m.absent...)
		}
	}
	b = append(b, `,"tools":`...)
	if hosted {
		return appendEchoToolsAsSent(b, sentTools, tools)
	}
	return appendEchoTools(b, sentTools, tools)
}

// appendEchoTools writes the function tools as OpenAI echoes them: every member present, strict
// true unless the client said otherwise (the Responses API's default). sent is the tools member
// as it came, read only for a tool whose strict is false: sent false, or not sent.
func appendEchoTools(buf []byte, sent string, tools []Tool) []byte {
	var room stackElements
	var items []string // sent's, split when first needed
	buf = append(buf, '[')
	for i := range tools {
		if i > 0 {
			buf = append(buf, ',')
		}
		strict := tools[i].Strict
		if !strict {
			if items == nil {
				items, _ = appendElements(room[:0], sent)
			}
			strict = i >= len(items) || !sentMember(items[i], "strict")
		}
		buf = appendEchoTool(buf, &tools[i], strict)
	}
	return append(buf, ']')
}

// appendEchoToolsAsSent is appendEchoTools for a request whose tools are not all functions: each
// sent tool in its place, the functions as appendEchoTools writes them and the others (web
// search, namespaces) as they came, without their nulls.
func appendEchoToolsAsSent(buf []byte, sent string, tools []Tool) []byte {
	var room stackElements
	items, _ := appendElements(room[:0], sent)
	buf = append(buf, '[')
	j := 0 // the next function tool
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		var room stackMembers
		o, _ := appendMembers(room[:0], it, it)
		raw, _ := o.get("type")
		if typ, _ := asString("type", raw); typ == "function" && j < len(tools) {
			buf = appendEchoTool(buf, &tools[j], tools[j].Strict || !hasMember(o, "strict"))
			j++
			continue
		}
		buf = appendWithoutNulls(buf, it)
	}
	return append(buf, ']')
}

// appendEchoTool writes the function tool t as OpenAI echoes it.
func appendEchoTool(buf []byte, t *Tool, strict bool) []byte {
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
	buf = append(buf, `,"strict":`...)
	buf = strconv.AppendBool(buf, strict)
	return append(buf, '}')
}

// sentMember reports whether the valid JSON object o has key, not null.
func sentMember(o, key string) bool {
	var room stackMembers
	members, _ := appendMembers(room[:0], o, o)
	return hasMember(members, key)
}

// appendWithoutNulls appends the compact JSON of the validated value v, leaving out the object
// members whose value is null in its first two levels: those are the members the decoder read
// and took null as absent in (a metadata value, text.format, a tool_choice's name). Below them
// — a text.format's JSON Schema, where "default": null means something — the value is copied as
// it came, and nothing a client sends recurses deeper than two levels.
func appendWithoutNulls(buf []byte, v string) []byte {
	return appendWithoutNullsTo(buf, v, 2)
}

// appendWithoutNullsTo is appendWithoutNulls for levels more levels. Objects and arrays are
// walked by functions of their own, so that a scalar costs the decode's stack no frame of theirs.
func appendWithoutNullsTo(buf []byte, v string, levels int) []byte {
	switch kind := jsonKind(v); {
	case levels > 0 && kind == '{':
		return appendObjectWithoutNulls(buf, v, levels)
	case levels > 0 && kind == '[':
		return appendArrayWithoutNulls(buf, v, levels)
	}
	return jsonscan.AppendCompact(buf, v)
}

func appendObjectWithoutNulls(buf []byte, v string, levels int) []byte {
	var room stackMembers
	o, _ := appendMembers(room[:0], v, v)
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
}

func appendArrayWithoutNulls(buf []byte, v string, levels int) []byte {
	var room stackElements
	items, _ := appendElements(room[:0], v)
	buf = append(buf, '[')
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendWithoutNullsTo(buf, it, levels-1)
	}
	return append(buf, ']')
}
