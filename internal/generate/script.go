package generate

import "mockgateway/internal/protocol"

// Scripted is an answer a fixture gives in full (docs/fixtures.md): content, tool calls or a
// refusal, with an optional finish reason and usage. Script makes a Result of it the way
// Generate makes one of generated text, so that a scripted answer streams, counts and is cut
// exactly as a generated one is.
type Scripted struct {
	Content   *string
	ToolCalls []ScriptedCall
	Refusal   *string
	// FinishReason, when set, replaces the finish reason of every choice.
	FinishReason string
	// Usage, when set, replaces the estimator's counts.
	Usage *ScriptedUsage
}

// ScriptedCall is one scripted tool call; Arguments is JSON text.
type ScriptedCall struct {
	Name, Arguments string
}

// ScriptedUsage is a scripted answer's own token counts.
type ScriptedUsage struct {
	PromptTokens, CompletionTokens int
}

// Script returns the Result of a scripted answer. Content and refusals are split into pieces as
// SplitPieces splits text, tool arguments at JSON's token boundaries (jsonPieces); every one of
// the n choices gets the same answer (tool call ids are the request's, as Generate's are); each
// choice is cut by its ceiling, then by the stop sequences (content and refusal) and the
// request's budget, as Generate cuts text.
func Script(in Input, s Scripted) Result {
	req := in.Request
	if req == nil {
		req = &protocol.Request{}
	}
	n := max(req.N, 1)
	g := newGeneration(in, req, n)
	res := Result{Choices: make([]Choice, n), PromptTokens: g.promptTokens}
	// Every choice is the same answer: it is made once and its pieces, which never change once
	// made, are shared, so that n = 128 choices of a long reply hold one copy of it for as long as
	// a stream is open (TestScriptSharesPieces). Only the index and the call ids differ.
	first := g.scripted(0, s)
	if s.FinishReason != "" {
		first.FinishReason = s.FinishReason
	}
	for i := range n {
		c := first
		c.Index = i
		if i > 0 && len(first.ToolCalls) > 0 {
			c.ToolCalls = make([]ToolCall, len(first.ToolCalls))
			for k, tc := range first.ToolCalls {
				tc.ID = toolCallID(g.requestSeed(), i, k)
				c.ToolCalls[k] = tc
			}
		}
		res.Choices[i] = c
		res.CompletionTokens += c.Tokens()
	}
	if u := s.Usage; u != nil {
		res.PromptTokens, res.CompletionTokens, res.scriptedUsage = u.PromptTokens, u.CompletionTokens, true
	}
	return res
}

func (g *generation) scripted(i int, s Scripted) Choice {
	b := g.builder(true) // the choices share the one answer made here
	switch {
	case len(s.ToolCalls) > 0:
		ends := make([]int, len(s.ToolCalls))
		names := make([]string, len(s.ToolCalls))
		for k, tc := range s.ToolCalls {
			appendJSONPieces(b, tc.Arguments)
			ends[k], names[k] = len(b.ends), tc.Name
		}
		return g.cutCalls(i, b, ends, names)
	case s.Refusal != nil:
		b.appendSplit("", "", *s.Refusal)
		pieces, finish := g.cutText(b.pieces())
		return Choice{Index: i, Refusal: pieces, FinishReason: finish}
	default:
		text := ""
		if s.Content != nil {
			text = *s.Content
		}
		b.appendSplit("", "", text)
		pieces, finish, stop := g.cutTextAt(b.pieces())
		return Choice{Index: i, Content: pieces, FinishReason: finish, StopSequence: stop}
	}
}

// appendJSONPieces appends JSON text as pieces that end after each structural character and
// each complete scalar outside strings — `{"city":"Paris"}` is `{`, `"city":`, `"Paris"`, `}` —
// as a model streams arguments: a few characters at a time, never splitting an escape.
func appendJSONPieces(b *pieceBuilder, text string) {
	inString, escaped := false, false
	for i := 0; i < len(text) && !b.full(); i++ {
		c := text[i]
		b.buf = append(b.buf, c)
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if i+1 < len(text) && text[i+1] == ':' {
					continue // a member name keeps its colon
				}
				b.cut()
			}
		case c == '"':
			inString = true
		case c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':':
			b.cut()
		case i+1 < len(text) && isJSONDelimiter(text[i+1]):
			b.cut() // the end of a number, true, false or null
		}
	}
	b.cut()
}

func isJSONDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
