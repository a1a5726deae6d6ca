package journal

import (
	"unicode/utf8"

	"mockgateway/internal/protocol"
)

// Shape is the client setup preview: what a request asked for and how much it sent, without a
// word of what was said. Every member is a count, a flag, or a value from the protocol's own
// closed sets (field names, tool_choice modes, response_format types, budget parameter names).
// Tool and function names, message text, schemas and stop strings never enter a Shape.
type Shape struct {
	// Fields are the top-level members the client sent, by protocol name, sorted.
	Fields protocol.FieldSet `json:"fields"`
	// Messages counts the messages per role; ContentChars sums their content's length in
	// characters (runes) per role; LongestContentChars is the longest single message's.
	Messages            RoleCounts `json:"messages"`
	ContentChars        RoleCounts `json:"content_chars"`
	LongestContentChars int        `json:"longest_content_chars"`
	// MessageNames: some message carried a name (which is never kept).
	MessageNames bool `json:"message_names,omitempty"`
	// ToolCalls counts the tool calls the assistant messages carry back.
	ToolCalls int `json:"tool_calls,omitempty"`
	// Tools counts the tools offered; StrictTools those with strict: true; ToolSchemas those
	// with a parameters schema.
	Tools       int `json:"tools,omitempty"`
	StrictTools int `json:"strict_tools,omitempty"`
	ToolSchemas int `json:"tool_schemas,omitempty"`
	// ToolChoice is tool_choice's mode (auto, none, required, function), "" when absent: the
	// function a "function" mode names is not kept.
	ToolChoice string `json:"tool_choice,omitempty"`
	// ResponseFormat is response_format's type, "" when absent; ResponseSchema whether a
	// json_schema format carries a schema (its name and content are not kept).
	ResponseFormat string `json:"response_format,omitempty"`
	ResponseSchema bool   `json:"response_schema,omitempty"`
	N              int    `json:"n"`
	// MaxTokens is the budget per choice and MaxTokensParam the member it came from
	// (max_completion_tokens or max_tokens; max_output_tokens in the Responses API); both
	// empty when no budget was sent.
	MaxTokens      int    `json:"max_tokens,omitempty"`
	MaxTokensParam string `json:"max_tokens_param,omitempty"`
	// Stop counts the (non-empty) stop sequences.
	Stop              int  `json:"stop,omitempty"`
	Stream            bool `json:"stream"`
	IncludeUsage      bool `json:"include_usage,omitempty"`
	ParallelToolCalls bool `json:"parallel_tool_calls"`
}

// RoleCounts is a number per message role.
type RoleCounts struct {
	System    int `json:"system,omitempty"`
	Developer int `json:"developer,omitempty"`
	User      int `json:"user,omitempty"`
	Assistant int `json:"assistant,omitempty"`
	Tool      int `json:"tool,omitempty"`
}

// add adds n to role's count. The roles are the decoder's closed set; any other is not counted.
func (c *RoleCounts) add(role string, n int) {
	switch role {
	case "system":
		c.System += n
	case "developer":
		c.Developer += n
	case "user":
		c.User += n
	case "assistant":
		c.Assistant += n
	case "tool":
		c.Tool += n
	}
}

// ShapeOf is the shape of a decoded request; the zero Shape for nil (a request that did not
// decode has no shape, only its error code). It allocates nothing.
func ShapeOf(req *protocol.Request) Shape {
	if req == nil {
		return Shape{}
	}
	s := Shape{
		Fields:            req.Fields,
		N:                 req.N,
		Stop:              len(req.Stop),
		Stream:            req.Stream,
		IncludeUsage:      req.IncludeUsage,
		ParallelToolCalls: req.ParallelToolCalls,
		Tools:             len(req.Tools),
		ToolChoice:        toolChoiceMode(req.ToolChoice.Mode),
		ResponseFormat:    responseFormatType(req.ResponseFormat.Type),
	}
	s.ResponseSchema = s.ResponseFormat == protocol.FormatJSONSchema && req.ResponseFormat.Schema != nil
	if req.MaxTokens > 0 {
		s.MaxTokens = req.MaxTokens
		s.MaxTokensParam = maxTokensParam(req.MaxTokensParam)
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		chars := utf8.RuneCountInString(m.Content)
		s.Messages.add(m.Role, 1)
		s.ContentChars.add(m.Role, chars)
		s.LongestContentChars = max(s.LongestContentChars, chars)
		s.MessageNames = s.MessageNames || m.Name != ""
		s.ToolCalls += len(m.ToolCalls)
	}
	for i := range req.Tools {
		if req.Tools[i].Strict {
			s.StrictTools++
		}
		if req.Tools[i].Parameters != nil {
			s.ToolSchemas++
		}
	}
	return s
}

// The three mappings below return the protocol's constants, never the string they were given:
// the decoder has already closed these sets, and this keeps a Shape's strings ours even if a
// Request was built by other code.

func toolChoiceMode(m string) string {
	return ours(m, protocol.ToolChoiceAuto, protocol.ToolChoiceNone, protocol.ToolChoiceRequired, protocol.ToolChoiceFunction)
}

func responseFormatType(t string) string {
	return ours(t, protocol.FormatText, protocol.FormatJSONObject, protocol.FormatJSONSchema)
}

func maxTokensParam(p string) string {
	return ours(p, "max_completion_tokens", "max_tokens", "max_output_tokens")
}

// ours returns the member of known equal to s (our string, not s), or "".
func ours(s string, known ...string) string {
	for _, k := range known {
		if s == k {
			return k
		}
	}
	return ""
}
