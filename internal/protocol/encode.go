package protocol

import (
	"strconv"

	"mockgateway/internal/jsonenc"
)

// The two bodies a successful Chat Completions request gets — a Completion, or a Chunk per
// streamed token — are written by hand-written appends (as the other dialects' are:
// encode_responses.go, encode_anthropic.go) instead of encoding/json's reflection: that cost
// more per stream chunk than everything else the chunk needed, and its reflective descent was
// the deepest stack a parked stream's goroutine reached. The output is byte for byte what
// encoding/json gives with SetEscapeHTML(false) (without the Encoder's trailing newline); the
// tests and FuzzAppendMatchesEncodingJSON hold it to that. Strings are written by
// jsonenc.AppendString, which is held to encoding/json on its own.

// appendIdentity opens a completion or a chunk with the members every one of them starts with.
func appendIdentity(buf []byte, id, object string, created int64, model string) []byte {
	buf = append(buf, `{"id":`...)
	buf = jsonenc.AppendString(buf, id)
	buf = append(buf, `,"object":`...)
	buf = jsonenc.AppendString(buf, object)
	buf = append(buf, `,"created":`...)
	buf = strconv.AppendInt(buf, created, 10)
	buf = append(buf, `,"model":`...)
	return jsonenc.AppendString(buf, model)
}

// appendList appends a JSON array of items (null for a nil slice, as encoding/json writes it).
func appendList[T any, P interface {
	*T
	appendJSON([]byte) []byte
}](buf []byte, items []T) []byte {
	if items == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = P(&items[i]).appendJSON(buf)
	}
	return append(buf, ']')
}

// AppendJSON appends the chunk's JSON encoding to buf.
func (c *Chunk) AppendJSON(buf []byte) []byte {
	if c.head != nil {
		buf = append(buf, c.head...)
	} else {
		buf = c.appendHead(buf)
	}
	buf = appendList(buf, c.Choices)
	if len(c.Usage) > 0 {
		// A RawMessage is written compacted by encoding/json; ours are always compact already
		// (the literal null, or a marshalled Usage).
		buf = append(buf, `,"usage":`...)
		buf = append(buf, c.Usage...)
	}
	return append(buf, '}')
}

// FixHead encodes, once, the members every chunk of a stream repeats — id, object, created,
// model, system_fingerprint, service_tier — for AppendJSON to copy instead of encoding them per
// chunk (BenchmarkChunkAppendJSON). They must not change after it. The buffer is sized for
// them at once, where growing it from nothing took five allocations (TestFixHeadAllocates).
func (c *Chunk) FixHead() {
	size := len(`{"id":,"object":,"created":,"model":,"system_fingerprint":,"service_tier":,"choices":`) +
		len(c.ID) + len(c.Object) + len(c.Model) + len(c.SystemFingerprint) + len(c.ServiceTier) +
		5*len(`""`) + 20 // the quotes, and the digits of created
	c.head = c.appendHead(make([]byte, 0, size))
}

// appendHead appends the chunk's members up to and including the "choices" key.
func (c *Chunk) appendHead(buf []byte) []byte {
	buf = appendIdentity(buf, c.ID, c.Object, c.Created, c.Model)
	buf = append(buf, `,"system_fingerprint":`...)
	buf = jsonenc.AppendString(buf, c.SystemFingerprint)
	buf = append(buf, `,"service_tier":`...)
	buf = jsonenc.AppendString(buf, c.ServiceTier)
	return append(buf, `,"choices":`...)
}

func (c *ChunkChoice) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"index":`...)
	buf = strconv.AppendInt(buf, int64(c.Index), 10)
	buf = append(buf, `,"delta":`...)
	buf = c.Delta.appendJSON(buf)
	buf = append(buf, `,"logprobs":`...)
	buf = appendEmptyPtr(buf, c.Logprobs)
	buf = append(buf, `,"finish_reason":`...)
	buf = appendStringPtr(buf, c.FinishReason)
	return append(buf, '}')
}

func (d *Delta) appendJSON(buf []byte) []byte {
	buf = append(buf, '{')
	n := len(buf)
	if d.Role != "" {
		buf = append(buf, `"role":`...)
		buf = jsonenc.AppendString(buf, d.Role)
	}
	if d.Content != nil {
		buf = appendComma(buf, n)
		buf = append(buf, `"content":`...)
		buf = jsonenc.AppendString(buf, *d.Content)
	}
	if d.Refusal != nil {
		buf = appendComma(buf, n)
		buf = append(buf, `"refusal":`...)
		buf = jsonenc.AppendString(buf, *d.Refusal)
	}
	if len(d.ToolCalls) > 0 {
		buf = appendComma(buf, n)
		buf = append(buf, `"tool_calls":[`...)
		for i := range d.ToolCalls {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = d.ToolCalls[i].appendJSON(buf)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}')
}

func (t *ToolCallDelta) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"index":`...)
	buf = strconv.AppendInt(buf, int64(t.Index), 10)
	if t.ID != "" {
		buf = append(buf, `,"id":`...)
		buf = jsonenc.AppendString(buf, t.ID)
	}
	if t.Type != "" {
		buf = append(buf, `,"type":`...)
		buf = jsonenc.AppendString(buf, t.Type)
	}
	buf = append(buf, `,"function":{`...)
	if t.Function.Name != "" {
		buf = append(buf, `"name":`...)
		buf = jsonenc.AppendString(buf, t.Function.Name)
		buf = append(buf, ',')
	}
	buf = append(buf, `"arguments":`...)
	buf = jsonenc.AppendString(buf, t.Function.Arguments)
	return append(buf, "}}"...)
}

// SizeHint returns about how many bytes AppendJSON appends, a little more rather than less: the
// text the completion carries with a quarter more for escapes, and its fixed fields.
func (c *Completion) SizeHint() int {
	text, fixed := 0, 512
	for i := range c.Choices {
		m := &c.Choices[i].Message
		fixed += 256
		if m.Content != nil {
			text += len(*m.Content)
		}
		for k := range m.ToolCalls {
			fixed += 128 + len(m.ToolCalls[k].ID) + len(m.ToolCalls[k].Function.Name)
			text += len(m.ToolCalls[k].Function.Arguments)
		}
	}
	return fixed + text + text/4
}

// AppendJSON appends the completion's JSON encoding to buf.
func (c *Completion) AppendJSON(buf []byte) []byte {
	buf = appendIdentity(buf, c.ID, c.Object, c.Created, c.Model)
	buf = append(buf, `,"choices":`...)
	buf = appendList(buf, c.Choices)
	buf = append(buf, `,"usage":`...)
	buf = c.Usage.AppendJSON(buf)
	buf = append(buf, `,"system_fingerprint":`...)
	buf = jsonenc.AppendString(buf, c.SystemFingerprint)
	buf = append(buf, `,"service_tier":`...)
	buf = jsonenc.AppendString(buf, c.ServiceTier)
	return append(buf, '}')
}

func (c *CompletionChoice) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"index":`...)
	buf = strconv.AppendInt(buf, int64(c.Index), 10)
	buf = append(buf, `,"message":{"role":`...)
	m := &c.Message
	buf = jsonenc.AppendString(buf, m.Role)
	buf = append(buf, `,"content":`...)
	buf = appendStringPtr(buf, m.Content)
	buf = append(buf, `,"refusal":`...)
	buf = appendStringPtr(buf, m.Refusal)
	if len(m.ToolCalls) > 0 {
		buf = append(buf, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"id":`...)
			buf = jsonenc.AppendString(buf, tc.ID)
			buf = append(buf, `,"type":`...)
			buf = jsonenc.AppendString(buf, tc.Type)
			buf = append(buf, `,"function":{"name":`...)
			buf = jsonenc.AppendString(buf, tc.Function.Name)
			buf = append(buf, `,"arguments":`...)
			buf = jsonenc.AppendString(buf, tc.Function.Arguments)
			buf = append(buf, "}}"...)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, `,"annotations":`...)
	if m.Annotations == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i := range m.Annotations {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, "{}"...)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, `},"logprobs":`...)
	buf = appendEmptyPtr(buf, c.Logprobs)
	buf = append(buf, `,"finish_reason":`...)
	buf = jsonenc.AppendString(buf, c.FinishReason)
	return append(buf, '}')
}

// AppendJSON appends the usage's JSON encoding to buf.
func (u Usage) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"prompt_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.PromptTokens), 10)
	buf = append(buf, `,"completion_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.CompletionTokens), 10)
	buf = append(buf, `,"total_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.TotalTokens), 10)
	buf = append(buf, `,"prompt_tokens_details":{"cached_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.PromptTokensDetails.CachedTokens), 10)
	buf = append(buf, `},"completion_tokens_details":{"reasoning_tokens":`...)
	buf = strconv.AppendInt(buf, int64(u.CompletionTokensDetails.ReasoningTokens), 10)
	return append(buf, "}}"...)
}

func appendStringPtr(buf []byte, s *string) []byte {
	if s == nil {
		return append(buf, "null"...)
	}
	return jsonenc.AppendString(buf, *s)
}

func appendEmptyPtr(buf []byte, p *struct{}) []byte {
	if p == nil {
		return append(buf, "null"...)
	}
	return append(buf, "{}"...)
}

// appendComma writes the separator before an object member unless it is the first one, which
// starts at n.
func appendComma(buf []byte, n int) []byte {
	if len(buf) > n {
		return append(buf, ',')
	}
	return buf
}
