package protocol

import (
	"strconv"

	"mockgateway/internal/jsonenc"
)

// Anthropic's Messages answer and stream events, appended by hand like the other dialects': a
// stream writes one event per token. The shapes are those of anthropic-sdk-go's Message and
// MessageStreamEventUnion (internal/server's golden files hold them).

// AnthropicMessage is a Messages answer: the body of a JSON call, and what a stream's
// message_start carries (then with no content, no stop reason, and the output tokens so far).
type AnthropicMessage struct {
	ID           string
	Model        string
	Content      []ContentBlock
	StopReason   string // "": null (a stream's message_start)
	StopSequence string // the stop sequence that ended the answer; "": null
	Usage        AnthropicUsage
}

// ContentBlock is a text, tool_use, thinking or redacted_thinking block of an answer.
type ContentBlock struct {
	ToolUse bool
	// Thinking: a thinking block, Text its thinking; Redacted: a redacted_thinking block.
	Thinking, Redacted bool
	Text               string
	// A tool_use block's: its id (toolu_…), the tool's name and its input, a JSON object.
	ID, Name, Input string
	// Signature is a thinking block's signature, or a redacted_thinking block's data.
	Signature string
}

// AnthropicUsage is the estimator's count, in Anthropic's names. The mock caches no prompt, so
// the cache counts are always 0.
type AnthropicUsage struct {
	Input, Output int
}

// AppendJSON appends the message object.
func (m *AnthropicMessage) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"id":`...)
	buf = jsonenc.AppendString(buf, m.ID)
	buf = append(buf, `,"type":"message","role":"assistant","model":`...)
	buf = jsonenc.AppendString(buf, m.Model)
	buf = append(buf, `,"content":[`...)
	for i := range m.Content {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = m.Content[i].AppendJSON(buf, false)
	}
	buf = append(buf, `],"stop_reason":`...)
	buf = AppendStringOrNull(buf, m.StopReason)
	buf = append(buf, `,"stop_sequence":`...)
	buf = AppendStringOrNull(buf, m.StopSequence)
	buf = append(buf, `,"usage":`...)
	buf = m.Usage.AppendJSON(buf)
	return append(buf, '}')
}

// SizeHint is about the length of the encoding.
func (m *AnthropicMessage) SizeHint() int {
	n := 320
	for i := range m.Content {
		b := &m.Content[i]
		n += 64 + len(b.Text) + len(b.Input) + len(b.Name) + len(b.Signature)
	}
	return n
}

// AppendJSON appends the usage object.
func (u AnthropicUsage) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"input_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.Input), 10)
	buf = append(buf, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.Output), 10)
	return append(buf, `,"service_tier":"standard"}`...)
}

// AppendJSON appends the block; start is the block as a stream's content_block_start carries
// it, before its deltas: an empty text, an empty input.
func (b *ContentBlock) AppendJSON(buf []byte, start bool) []byte {
	switch {
	case b.Redacted: // its start is whole: it has no deltas
		buf = append(buf, `{"type":"redacted_thinking","data":`...)
		buf = jsonenc.AppendString(buf, b.Signature)
		return append(buf, '}')
	case b.Thinking:
		if start {
			return append(buf, `{"type":"thinking","thinking":"","signature":""}`...)
		}
		buf = append(buf, `{"type":"thinking","thinking":`...)
		buf = jsonenc.AppendString(buf, b.Text)
		buf = append(buf, `,"signature":`...)
		buf = jsonenc.AppendString(buf, b.Signature)
		return append(buf, '}')
	}
	if !b.ToolUse {
		buf = append(buf, `{"type":"text","text":`...)
		if start {
			return append(buf, `""}`...)
		}
		buf = jsonenc.AppendString(buf, b.Text)
		return append(buf, '}')
	}
	buf = append(buf, `{"type":"tool_use","id":`...)
	buf = jsonenc.AppendString(buf, b.ID)
	buf = append(buf, `,"name":`...)
	buf = jsonenc.AppendString(buf, b.Name)
	buf = append(buf, `,"input":`...)
	if start || b.Input == "" {
		return append(buf, "{}}"...)
	}
	buf = append(buf, b.Input...)
	return append(buf, '}')
}

// AppendStringOrNull appends s as a JSON string, or null when it is empty.
func AppendStringOrNull(buf []byte, s string) []byte {
	if s == "" {
		return append(buf, "null"...)
	}
	return jsonenc.AppendString(buf, s)
}

// AppendAnthropicEventStart opens a stream event: its SSE event line, and the data line's JSON
// up to its type. The caller appends the event's other members, then AppendEventEnd.
func AppendAnthropicEventStart(buf []byte, typ string) []byte {
	buf = append(buf, "event: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\ndata: {\"type\":\""...)
	buf = append(buf, typ...)
	return append(buf, '"')
}

// AppendAnthropicIndex appends ,"index":i — the content block an event is about.
func AppendAnthropicIndex(buf []byte, i int) []byte {
	buf = append(buf, `,"index":`...)
	return strconv.AppendInt(buf, int64(i), 10)
}

// AppendAnthropicDelta appends a content_block_delta's delta: a text_delta's text, or an
// input_json_delta's partial_json.
func AppendAnthropicDelta(buf []byte, toolUse bool, piece string) []byte {
	if toolUse {
		buf = append(buf, `,"delta":{"type":"input_json_delta","partial_json":`...)
	} else {
		buf = append(buf, `,"delta":{"type":"text_delta","text":`...)
	}
	buf = jsonenc.AppendString(buf, piece)
	return append(buf, '}')
}

// AppendAnthropicThinkingDelta appends a thinking block's delta: a thinking_delta's thinking,
// or the signature_delta that ends the block.
func AppendAnthropicThinkingDelta(buf []byte, signature bool, piece string) []byte {
	if signature {
		buf = append(buf, `,"delta":{"type":"signature_delta","signature":`...)
	} else {
		buf = append(buf, `,"delta":{"type":"thinking_delta","thinking":`...)
	}
	buf = jsonenc.AppendString(buf, piece)
	return append(buf, '}')
}

// AppendAnthropicError appends an error object: {"type":…,"message":…}.
func AppendAnthropicError(buf []byte, typ, message string) []byte {
	buf = append(buf, `{"type":`...)
	buf = jsonenc.AppendString(buf, typ)
	buf = append(buf, `,"message":`...)
	buf = jsonenc.AppendString(buf, message)
	return append(buf, '}')
}

// ValidJSONObject reports whether s is one valid JSON value that is an object: a tool call's
// arguments that can be a tool_use block's input.
func ValidJSONObject(s string) bool { return validObjectBody([]byte(s)) }
