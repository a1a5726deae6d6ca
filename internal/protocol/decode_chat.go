package protocol

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"mockgateway/internal/apierr"
)

// chatState is what the top-level fields decode into: the request being built and the limits
// that bound it. It is passed by value: the request is on the heap already, and a pointer to a
// decoder struct handed to the table's functions would put one more allocation on every request.
type chatState struct {
	req *Request
	lim Limits
}

const noLogprobs = "log probabilities are not produced by the mock"

// finish checks the cross-field rules, after the key pass has checked the required fields.
func (c chatState) finish(top members[string]) *apierr.Error {
	r := c.req
	if hasMember(top, "stream_options") && !r.Stream {
		// The OpenAI API answers 400 (param stream_options) in this case, and the SDKs only
		// send stream_options on streaming calls.
		return errValue("stream_options", "only allowed when stream is true")
	}
	if hasMember(top, "tool_choice") {
		return checkToolChoice(r, "tool_choice.function.name")
	}
	return nil
}

// checkToolChoice checks that a tool_choice that needs tools has them, and that a named function
// is one of them (named at namePath: the two dialects place the name differently).
func checkToolChoice(r *Request, namePath string) *apierr.Error {
	switch r.ToolChoice.Mode {
	case ToolChoiceRequired, ToolChoiceFunction:
		if len(r.Tools) == 0 {
			return errValue("tool_choice", "only allowed when tools are specified")
		}
	}
	if r.ToolChoice.Mode == ToolChoiceFunction &&
		!slices.ContainsFunc(r.Tools, func(t Tool) bool { return t.Name == r.ToolChoice.Function }) {
		return errValue(namePath, "must name a function defined in tools")
	}
	return nil
}

func (c chatState) model(path, v string) *apierr.Error {
	s, e := asString(path, v)
	if e != nil {
		return e
	}
	if s == "" {
		return errValue(path, "must be a non-empty model id")
	}
	c.req.Model = s
	return nil
}

func (c chatState) messages(path, v string) *apierr.Error {
	msgs, e := decodeEach(path, v, readMessage)
	if e != nil {
		return e
	}
	if len(msgs) == 0 {
		return errValue(path, "must contain at least one message")
	}
	c.req.Messages = msgs
	return nil
}

func (c chatState) streamOptions(path, v string) *apierr.Error {
	return streamOptionsObject.decode(c, path, v)
}

// maxCompletionTokens wins over max_tokens when both are sent, whichever comes first. A budget
// is kept as sent: the model's output limit decides whether it is accepted, and --max-tokens
// stops the answer below it (docs/protocol.md, Output budgets).
func (c chatState) maxCompletionTokens(path, v string) *apierr.Error {
	n, e := asBoundedInt(path, v, 1, MaxBudget)
	if e != nil {
		return e
	}
	c.req.MaxTokens, c.req.MaxTokensParam = int(n), "max_completion_tokens"
	return nil
}

func (c chatState) maxTokens(path, v string) *apierr.Error {
	n, e := asBoundedInt(path, v, 1, MaxBudget)
	if e != nil {
		return e
	}
	if c.req.MaxTokensParam != "max_completion_tokens" {
		c.req.MaxTokens, c.req.MaxTokensParam = int(n), "max_tokens"
	}
	return nil
}

func (c chatState) n(path, v string) *apierr.Error {
	n, e := asBoundedInt(path, v, 1, int64(c.lim.MaxChoices))
	if e != nil {
		return e
	}
	c.req.N = int(n)
	return nil
}

func (c chatState) stop(path, v string) (e *apierr.Error) {
	c.req.Stop, e = decodeStop(path, v)
	return e
}

func (c chatState) seed(path, v string) *apierr.Error {
	n, e := asInt64(path, v)
	if e != nil {
		return e
	}
	c.req.Seed = &n
	return nil
}

func (c chatState) tools(path, v string) (e *apierr.Error) {
	c.req.Tools, e = decodeEach(path, v, readTool) // an empty array is the same as no tools
	if e == nil {
		e = checkToolPatterns(c.req.Tools, path, "function", c.lim.MaxRegexProgram)
	}
	return e
}

func (c chatState) toolChoice(path, v string) *apierr.Error {
	return readToolChoice(&c.req.ToolChoice, path, v)
}

func (c chatState) responseFormat(path, v string) *apierr.Error {
	if e := readResponseFormat(&c.req.ResponseFormat, path, v); e != nil {
		return e
	}
	return CheckSchemaPatterns(joinPath(joinPath(path, "json_schema"), "schema"), c.req.ResponseFormat.Schema, c.lim.MaxRegexProgram)
}

func (c chatState) temperature(path, v string) *apierr.Error {
	f, e := asRangedNumber(path, v, 0, 2)
	if e != nil {
		return e
	}
	c.req.Temperature = &f
	return nil
}

// reasoningEffort is reasoning_effort (and the Responses API's reasoning.effort).
func (c chatState) reasoningEffort(path, v string) *apierr.Error {
	e, err := asEnum(path, v, "none", "minimal", "low", "medium", "high", "xhigh", "max")
	if err == nil {
		c.req.reasoning().Effort = e
	}
	return err
}

// topP keeps a top_p other than 1, which a reasoning model refuses; the others ignore it.
func (c chatState) topP(path, v string) *apierr.Error {
	f, e := asRangedNumber(path, v, 0, 1)
	if e == nil && f != 1 {
		c.req.reasoning().TopP = &f
	}
	return e
}

func decodeStop(path, v string) ([]string, *apierr.Error) {
	var out []string
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		if e != nil {
			return nil, e
		}
		if s != "" {
			out = append(out, s)
		}
		return out, nil
	case '[':
	default:
		return nil, errType(path, "a string or an array of strings")
	}
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return nil, e
	}
	if len(items) > maxStopSequences {
		return nil, errValue(path, fmt.Sprintf("must contain at most %d sequences", maxStopSequences))
	}
	for i, it := range items {
		s, e := asString(indexPath(path, i), it)
		if e != nil {
			return nil, e
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func checkLogitBias(path, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	// Keys are token ids chosen by the client: they never go into a param or a message.
	for _, raw := range o.all() {
		if _, e := asRangedNumber(path, raw, -100, 100); e != nil {
			return e
		}
	}
	return nil
}

func checkSafetyIdentifier(path, v string) *apierr.Error {
	s, e := asString(path, v)
	if e == nil && utf8.RuneCountInString(s) > maxSafetyIdentifierChar {
		e = errValue(path, fmt.Sprintf("must be at most %d characters long", maxSafetyIdentifierChar))
	}
	return e
}

func checkMetadata(path, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	if len(o) > maxMetadataPairs {
		return errValue(path, fmt.Sprintf("must have at most %d key-value pairs", maxMetadataPairs))
	}
	// Keys and values are the client's: they never go into a param or a message.
	for k, raw := range o.all() {
		if utf8.RuneCountInString(k) > maxMetadataKeyChars {
			return errValue(path, fmt.Sprintf("keys must be at most %d characters long", maxMetadataKeyChars))
		}
		if jsonKind(raw) != '"' {
			return errType(path, "an object whose values are strings")
		}
		s, e := asString(path, raw)
		if e != nil {
			return e
		}
		if utf8.RuneCountInString(s) > maxMetadataValueChars {
			return errValue(path, fmt.Sprintf("values must be at most %d characters long", maxMetadataValueChars))
		}
	}
	return nil
}

func checkLogprobs(path, v string) *apierr.Error {
	b, e := asBool(path, v)
	if e == nil && b {
		e = errUnsupported(path, noLogprobs)
	}
	return e
}

func checkModalities(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	for i, it := range items {
		p := indexPath(path, i)
		s, e := asString(p, it)
		if e != nil {
			return e
		}
		switch s {
		case "text":
		case "audio":
			return errUnsupported(path, "the mock only produces text")
		default:
			return errValue(p, "must be text or audio")
		}
	}
	return nil
}
