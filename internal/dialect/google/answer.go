package google

import (
	"strconv"

	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/jsonenc"
	"mockgateway/internal/protocol"
)

// A GenerateContentResponse, hand-encoded in Google's member order:
//
//	{"candidates":[{"content":{"parts":[…],"role":"model"},"finishReason":"STOP","index":0}],
//	 "usageMetadata":{"promptTokenCount","candidatesTokenCount","totalTokenCount","thoughtsTokenCount"},
//	 "modelVersion","responseId"}
//
// The parts: a thinking model's thought part first when includeThoughts asks for it, then the
// text, or a functionCall part per call, the first carrying the thought signature. The counts are
// the chat dialect's for the same conversation: candidatesTokenCount leaves the thoughts out, as
// Google counts them apart.

// body is the JSON answer.
type body struct{ r reply }

func (b *body) SizeHint() int {
	n := 256 + len(b.r.thought) + len(b.r.signature)
	for i := range b.r.c.Result.Choices {
		ch := &b.r.c.Result.Choices[i]
		n += len(ch.Content.Text()) + len(ch.Refusal.Text())
		for _, tc := range ch.ToolCalls {
			n += 64 + len(tc.Name) + len(tc.Arguments.Text())
		}
	}
	return n
}

func (b *body) AppendJSON(buf []byte) []byte {
	r, c := b.r, b.r.c
	if r.array {
		buf = append(buf, '[')
	}
	buf = append(buf, `{"candidates":[`...)
	for i := range c.Result.Choices {
		if i > 0 {
			buf = append(buf, ',')
		}
		ch := &c.Result.Choices[i]
		buf = append(buf, `{"content":{"parts":[`...)
		n := 0
		if r.thought != "" {
			buf, n = appendThought(buf, r.thought), 1
		}
		switch {
		case len(ch.ToolCalls) > 0:
			for k := range ch.ToolCalls {
				if n > 0 {
					buf = append(buf, ',')
				}
				buf, n = appendCall(buf, &ch.ToolCalls[k], r.signatureOf(i, k)), n+1
			}
		default:
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = appendText(buf, answerText(ch))
		}
		buf = appendCandidateEnd(buf, ch.FinishReason, ch.Index)
	}
	buf = append(buf, ']')
	buf = appendUsage(buf, &c.Result)
	buf = appendTail(buf, c)
	if r.array {
		buf = append(buf, ']')
	}
	return append(buf, '\n')
}

// signatureOf is the signature of candidate i's k-th function call: the first candidate's first
// call carries it (it seals that call).
func (r reply) signatureOf(i, k int) string {
	if i == 0 && k == 0 {
		return r.signature
	}
	return ""
}

// answerText is a settled choice's text: its content, or a fixture's refusal; none when the
// thinking ate the budget.
func answerText(ch *generate.Choice) string {
	if dialect.EatenByReasoning(ch) {
		return ""
	}
	if !ch.Refusal.IsNil() {
		return ch.Refusal.Text()
	}
	return ch.Text()
}

func appendThought(buf []byte, text string) []byte {
	buf = append(buf, `{"text":`...)
	buf = jsonenc.AppendString(buf, text)
	return append(buf, `,"thought":true}`...)
}

func appendText(buf []byte, text string) []byte {
	buf = append(buf, `{"text":`...)
	buf = jsonenc.AppendString(buf, text)
	return append(buf, '}')
}

// appendCall is a functionCall part: its arguments are an object, {} when the budget cut them
// mid-value.
func appendCall(buf []byte, tc *generate.ToolCall, signature string) []byte {
	buf = append(buf, `{"functionCall":{"name":`...)
	buf = jsonenc.AppendString(buf, tc.Name)
	buf = append(buf, `,"args":`...)
	if args := tc.Arguments.Text(); protocol.ValidJSONObject(args) {
		buf = append(buf, args...)
	} else {
		buf = append(buf, "{}"...)
	}
	buf = append(buf, '}')
	if signature != "" {
		buf = append(buf, `,"thoughtSignature":`...)
		buf = jsonenc.AppendString(buf, signature)
	}
	return append(buf, '}')
}

// appendCandidateEnd closes the content and the candidate: its finishReason (none while a
// stream's candidate goes on: finish "") and its index.
func appendCandidateEnd(buf []byte, finish string, index int) []byte {
	buf = append(buf, `],"role":"model"}`...)
	if finish != "" {
		buf = append(buf, `,"finishReason":"`...)
		buf = append(buf, finishReason(finish)...)
		buf = append(buf, '"')
	}
	buf = append(buf, `,"index":`...)
	buf = strconv.AppendInt(buf, int64(index), 10)
	return append(buf, '}')
}

// finishReason is a settled choice's finish in Google's words: a budget is MAX_TOKENS, a
// fixture's content_filter SAFETY, anything else (a stop, tool calls) STOP.
func finishReason(finish string) string {
	switch finish {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return "STOP"
}

// appendUsage is usageMetadata: the thoughts apart from the candidates, as Google counts them.
func appendUsage(buf []byte, res *generate.Result) []byte {
	candidates := res.CompletionTokens - res.ReasoningTokens
	buf = append(buf, `,"usageMetadata":{"promptTokenCount":`...)
	buf = strconv.AppendInt(buf, int64(res.PromptTokens), 10)
	buf = append(buf, `,"candidatesTokenCount":`...)
	buf = strconv.AppendInt(buf, int64(candidates), 10)
	buf = append(buf, `,"totalTokenCount":`...)
	buf = strconv.AppendInt(buf, int64(res.PromptTokens+res.CompletionTokens), 10)
	if res.ReasoningTokens > 0 {
		buf = append(buf, `,"thoughtsTokenCount":`...)
		buf = strconv.AppendInt(buf, int64(res.ReasoningTokens), 10)
	}
	return append(buf, '}')
}

// appendTail is what every response ends with: modelVersion and responseId.
func appendTail(buf []byte, c *dialect.Call) []byte {
	buf = append(buf, `,"modelVersion":`...)
	buf = jsonenc.AppendString(buf, c.Model.ID)
	buf = append(buf, `,"responseId":`...)
	buf = jsonenc.AppendString(buf, c.ID)
	return append(buf, '}')
}
