package generate

import (
	"strings"

	"mockgateway/internal/protocol"
)

// Reasoning effort's tokens, the documented rule of a reasoning model (docs/protocol.md,
// Reasoning models): a fixed count per effort, OpenAI's default effort being medium. none
// reasons not.
var effortTokens = map[string]int{
	"none": 0, "minimal": 16, "low": 64, "medium": 192, "high": 512, "xhigh": 1024, "max": 2048,
}

// DefaultEffort is the effort of a request that names none, as OpenAI's default.
const DefaultEffort = "medium"

// ReasoningTokens is the reasoning tokens a reasoning model spends per choice at effort ("" is
// DefaultEffort).
func ReasoningTokens(effort string) int {
	if effort == "" {
		effort = DefaultEffort
	}
	return effortTokens[effort]
}

// Reason answers a reasoning model's request that spends tokens reasoning per choice: the
// reasoning comes first out of the request's budget and the token ceiling, and what is left is
// the answer's, which answer makes. A budget the reasoning eats whole leaves every choice empty
// content cut by length, and counts only the reasoning the budget held. The budget never changes
// the words (it is not in the seed), so the answer is a prefix of the one a larger budget gets.
func Reason(in Input, tokens int, answer func(Input) Result) Result {
	if tokens <= 0 {
		return answer(in)
	}
	req := in.Request
	if req == nil {
		req = &protocol.Request{}
	}
	n := max(req.N, 1)
	room := in.TokenCeiling
	if room <= 0 {
		room = protocol.DefaultMaxTokensCeiling
	}
	if req.MaxTokens > 0 {
		room = min(room, req.MaxTokens)
	}
	if tokens >= room {
		prompt := in.PromptTokens
		if prompt <= 0 {
			prompt = PromptTokens(req)
		}
		res := Result{Choices: make([]Choice, n), PromptTokens: prompt}
		for i := range n {
			res.Choices[i] = Choice{Index: i, Content: PiecesOf(), FinishReason: finishLength}
		}
		res.ReasoningTokens = room * n
		res.CompletionTokens = res.ReasoningTokens
		return res
	}
	cut := *req
	if cut.MaxTokens > 0 {
		cut.MaxTokens -= tokens
	}
	in.Request = &cut
	in.TokenCeiling = room - tokens
	res := answer(in)
	res.ReasoningTokens = tokens * n
	if !res.scriptedUsage {
		res.CompletionTokens += res.ReasoningTokens
	}
	return res
}

// summaryOpenings and summarySteps are the words of a reasoning summary: fixed prose, chosen by
// the request's seed, so that a summary says nothing of the request and is the same in every
// replica.
var (
	summaryOpenings = [...]string{
		"Planning the answer", "Weighing the request", "Reading the conversation", "Sorting out the steps",
	}
	summarySteps = [...]string{
		"I am reading what the user asked and what the conversation already settled.",
		"I am checking which of the offered tools, if any, the next step needs.",
		"I am laying out the answer in a short, ordered form.",
		"I am making sure the reply stays within what was asked.",
		"I am comparing two ways to phrase the result and keeping the plainer one.",
		"I am confirming that nothing in the request is left unanswered.",
	}
)

// ReasoningSummary is the text of a reasoning summary: a bold title and one step for concise
// and auto, three for detailed, picked by seed.
func ReasoningSummary(seed uint64, detail string) string {
	steps := 1
	if detail == "detailed" {
		steps = 3
	}
	var b strings.Builder
	b.WriteString("**")
	b.WriteString(summaryOpenings[seed%uint64(len(summaryOpenings))])
	b.WriteString("**\n\n")
	for k := range steps {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(summarySteps[(seed/4+uint64(k))%uint64(len(summarySteps))])
	}
	return b.String()
}
