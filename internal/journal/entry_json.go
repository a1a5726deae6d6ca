package journal

import (
	"strconv"

	"mockgateway/internal/jsonenc"
)

// AppendJSON appends the entry's JSON to buf: what encoding/json writes for MarshalJSON's
// members (with SetEscapeHTML(false); json.Marshal escapes <, > and & in it afterwards, as for
// any marshaler), without reflection. A shared store's journal encodes every call with it, in
// its background writer (internal/state); FuzzAppendJSONMatchesEncodingJSON holds it to
// encoding/json, member by member.
func (e *Entry) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"request_id":`...)
	buf = jsonenc.AppendString(buf, e.RequestID)
	buf = append(buf, `,"time":"`...)
	buf = e.Time.UTC().AppendFormat(buf, timeLayout)
	buf = append(buf, '"')
	buf = appendOptString(buf, `,"scope":`, e.Scope)
	buf = append(buf, `,"method":`...)
	buf = jsonenc.AppendString(buf, e.Method)
	buf = append(buf, `,"route":`...)
	buf = jsonenc.AppendString(buf, e.Route)
	buf = appendOptString(buf, `,"dialect":`, e.Dialect)
	buf = append(buf, `,"status":`...)
	buf = strconv.AppendInt(buf, int64(e.Status), 10)
	buf = appendOptString(buf, `,"error_code":`, e.ErrorCode)
	buf = appendOptString(buf, `,"model":`, e.Model)
	if e.Stream {
		buf = append(buf, `,"stream":true`...)
	}
	buf = appendOptInt(buf, `,"chunks":`, e.Chunks)
	buf = appendOptString(buf, `,"stream_outcome":`, e.StreamOutcome)
	if e.TimeToFirstChunkMS != 0 {
		buf = append(buf, `,"time_to_first_chunk_ms":`...)
		buf = appendFloat(buf, e.TimeToFirstChunkMS)
	}
	buf = append(buf, `,"duration_ms":`...)
	buf = appendFloat(buf, e.DurationMS)
	buf = appendOptString(buf, `,"finish_reason":`, e.FinishReason)
	buf = appendOptInt(buf, `,"prompt_tokens":`, e.PromptTokens)
	buf = appendOptInt(buf, `,"completion_tokens":`, e.CompletionTokens)
	buf = appendOptInt(buf, `,"reasoning_tokens":`, e.ReasoningTokens)
	buf = appendOptString(buf, `,"fixture":`, e.Fixture)
	buf = appendOptString(buf, `,"fault":`, e.Fault)
	buf = appendOptInt(buf, `,"attempt":`, e.Attempt)
	buf = appendOptString(buf, `,"limit_hit":`, e.LimitHit)
	if e.QueueMS != 0 {
		buf = append(buf, `,"queue_ms":`...)
		buf = appendFloat(buf, e.QueueMS)
	}
	if e.SDK != (SDK{}) {
		buf = append(buf, `,"sdk":`...)
		buf = e.SDK.appendJSON(buf)
	}
	if e.Shape != (Shape{}) {
		buf = append(buf, `,"shape":`...)
		buf = e.Shape.appendJSON(buf)
	}
	return append(buf, '}')
}

func (s *SDK) appendJSON(buf []byte) []byte {
	n := len(buf)
	buf = append(buf, '{')
	buf = appendOptString(buf, `,"lang":`, s.Lang)
	buf = appendOptString(buf, `,"package_version":`, s.PackageVersion)
	buf = appendOptString(buf, `,"os":`, s.OS)
	buf = appendOptString(buf, `,"runtime":`, s.Runtime)
	buf = appendOptString(buf, `,"runtime_version":`, s.RuntimeVersion)
	buf = appendOptString(buf, `,"retry_count":`, s.RetryCount)
	buf = appendOptString(buf, `,"user_agent":`, s.UserAgent)
	return closeObject(buf, n)
}

func (s *Shape) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"fields":`...)
	buf = s.Fields.AppendJSON(buf)
	buf = append(buf, `,"messages":`...)
	buf = s.Messages.appendJSON(buf)
	buf = append(buf, `,"content_chars":`...)
	buf = s.ContentChars.appendJSON(buf)
	buf = append(buf, `,"longest_content_chars":`...)
	buf = strconv.AppendInt(buf, int64(s.LongestContentChars), 10)
	if s.MessageNames {
		buf = append(buf, `,"message_names":true`...)
	}
	buf = appendOptInt(buf, `,"tool_calls":`, s.ToolCalls)
	buf = appendOptInt(buf, `,"tools":`, s.Tools)
	buf = appendOptInt(buf, `,"strict_tools":`, s.StrictTools)
	buf = appendOptInt(buf, `,"tool_schemas":`, s.ToolSchemas)
	buf = appendOptString(buf, `,"tool_choice":`, s.ToolChoice)
	buf = appendOptString(buf, `,"response_format":`, s.ResponseFormat)
	if s.ResponseSchema {
		buf = append(buf, `,"response_schema":true`...)
	}
	buf = append(buf, `,"n":`...)
	buf = strconv.AppendInt(buf, int64(s.N), 10)
	buf = appendOptInt(buf, `,"max_tokens":`, s.MaxTokens)
	buf = appendOptString(buf, `,"max_tokens_param":`, s.MaxTokensParam)
	buf = appendOptInt(buf, `,"stop":`, s.Stop)
	buf = append(buf, `,"stream":`...)
	buf = strconv.AppendBool(buf, s.Stream)
	if s.IncludeUsage {
		buf = append(buf, `,"include_usage":true`...)
	}
	buf = append(buf, `,"parallel_tool_calls":`...)
	buf = strconv.AppendBool(buf, s.ParallelToolCalls)
	return append(buf, '}')
}

func (c *RoleCounts) appendJSON(buf []byte) []byte {
	n := len(buf)
	buf = append(buf, '{')
	buf = appendOptInt(buf, `,"system":`, c.System)
	buf = appendOptInt(buf, `,"developer":`, c.Developer)
	buf = appendOptInt(buf, `,"user":`, c.User)
	buf = appendOptInt(buf, `,"assistant":`, c.Assistant)
	buf = appendOptInt(buf, `,"tool":`, c.Tool)
	return closeObject(buf, n)
}

// closeObject ends an object opened at buf[n] whose members were each written with a leading
// comma: the first member's comma goes.
func closeObject(buf []byte, n int) []byte {
	if len(buf) > n+1 {
		buf = append(buf[:n+1], buf[n+2:]...)
	}
	return append(buf, '}')
}

// appendOptString and appendOptInt write a member tagged omitempty: nothing for a zero value.
func appendOptString(buf []byte, key, v string) []byte {
	if v == "" {
		return buf
	}
	return jsonenc.AppendString(append(buf, key...), v)
}

func appendOptInt(buf []byte, key string, v int) []byte {
	if v == 0 {
		return buf
	}
	return strconv.AppendInt(append(buf, key...), int64(v), 10)
}

// appendFloat writes a finite float64 as encoding/json does, which is how log/slog writes one
// too (bound has cleared NaN and infinities).
func appendFloat(buf []byte, f float64) []byte { return jsonenc.AppendSlogFloat(buf, f) }
