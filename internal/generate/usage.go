package generate

import (
	"unicode"

	"mockgateway/internal/protocol"
)

// Constants of the prompt-token estimator. They are part of the documented, stable rule (see
// the package documentation); changing one changes every usage number clients see.
const (
	promptPrimingTokens = 3 // the assistant reply's priming, counted once per request
	perMessageTokens    = 4 // role and framing of each message
	perToolTokens       = 8 // framing of each tool definition
	runesPerToken       = 4
)

// CountTokens is the estimator's rule for a piece of text: the sum, over the whitespace-separated
// words of s, of ceil(runes/4). So "" is 0, "hello" is 2, "a b" is 2, "tokenizer" is 3.
func CountTokens(s string) int {
	total, runes := 0, 0
	for _, r := range s {
		if unicode.IsSpace(r) {
			total += ceilDiv(runes, runesPerToken)
			runes = 0
			continue
		}
		runes++
	}
	return total + ceilDiv(runes, runesPerToken)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// PromptTokens is the estimator's rule for a request: 3, plus for each message 4 + the tokens of
// its content and name + for each of its tool calls the tokens of the name and the arguments,
// plus for each tool 8 + the tokens of its name, description and compact parameters JSON.
func PromptTokens(req *protocol.ChatRequest) int {
	if req == nil {
		return promptPrimingTokens
	}
	n := promptPrimingTokens
	for i := range req.Messages {
		m := &req.Messages[i]
		n += perMessageTokens + CountTokens(m.Content) + CountTokens(m.Name)
		for j := range m.ToolCalls {
			n += CountTokens(m.ToolCalls[j].Name) + CountTokens(m.ToolCalls[j].Arguments)
		}
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		n += perToolTokens + CountTokens(t.Name) + CountTokens(t.Description) +
			CountTokens(string(t.Parameters))
	}
	return n
}
