package generate

import (
	"strings"

	"mockgateway/internal/protocol"
)

// maxParallelCalls is the most calls one choice makes when parallel tool calls are allowed.
const maxParallelCalls = 3

// planToolCalls decides which tools mock-tools calls (rule 5 of the package documentation, the
// table "mock-tools plays a whole agent" of docs/protocol.md), as indices into req.Tools written
// into calls, or nil when it answers with text.
//
// A turn is fresh unless the request ends with tool results of which one answers a call of a
// tool the request offers: a result of a tool that is not offered is an earlier agent's (a
// handoff's transfer_to_… call), so the agent that receives it starts its own turn. A fresh turn
// calls the first tool (each tool once, at most three, when parallel calls are allowed). After
// a result, auto answers in prose, and required moves on to the tools not yet called since the
// last user message, so that a loop that ends on a tool of its own (LangChain's extract-… tool of
// a structured response) reaches it; when every tool has been called it calls the last one.
func planToolCalls(req *protocol.Request, calls *[maxParallelCalls]int) []int {
	if len(req.Tools) == 0 {
		return nil
	}
	mode := effectiveToolChoice(req)
	switch mode {
	case protocol.ToolChoiceNone:
		return nil
	case protocol.ToolChoiceFunction:
		calls[0] = 0
		for i := range req.Tools {
			if req.Tools[i].Name == req.ToolChoice.Function {
				calls[0] = i
				break
			}
		} // else 0: the decoder rejects unknown names; stay total anyway
		return calls[:1]
	}
	if answersOfferedTool(req) {
		if mode != protocol.ToolChoiceRequired {
			return nil
		}
		called := calledSinceUser(req.Messages)
		n := 0
		for i := range req.Tools {
			if _, done := called[req.Tools[i].Name]; !done {
				calls[n], n = i, n+1
				if n == maxParallelCalls || !req.ParallelToolCalls {
					break
				}
			}
		}
		if n == 0 {
			calls[0], n = len(req.Tools)-1, 1 // every tool called: the last one, often the loop's end
		}
		return calls[:n]
	}
	calls[0] = 0 // a fresh turn
	if req.ParallelToolCalls && len(req.Tools) >= 2 {
		n := min(len(req.Tools), maxParallelCalls)
		for i := range n {
			calls[i] = i
		}
		return calls[:n]
	}
	return calls[:1]
}

// answersOfferedTool reports whether the request ends with tool results of which one answers a
// call, in the assistant message before them, of a tool the request offers. A result whose call
// is not in that message (an item_reference may stand for it) counts as offered, as it did
// before handoffs were told apart.
func answersOfferedTool(req *protocol.Request) bool {
	msgs := req.Messages
	end := len(msgs)
	for end > 0 && msgs[end-1].Role == "tool" {
		end--
	}
	if end == len(msgs) {
		return false // not after a tool result
	}
	var asked []protocol.ToolCall // the calls the results answer
	if end > 0 && msgs[end-1].Role == "assistant" {
		asked = msgs[end-1].ToolCalls
	}
	offered := make(map[string]struct{}, len(req.Tools))
	for i := range req.Tools {
		offered[req.Tools[i].Name] = struct{}{}
	}
	names := make(map[string]string, len(asked)) // call id → tool name
	for _, c := range asked {
		names[c.ID] = c.Name
	}
	for _, m := range msgs[end:] {
		name, found := names[m.ToolCallID]
		if !found {
			return true
		}
		if _, ok := offered[name]; ok {
			return true
		}
	}
	return false
}

// calledSinceUser is the set of tool names the assistant messages after the last user message
// called.
func calledSinceUser(msgs []protocol.Message) map[string]struct{} {
	called := map[string]struct{}{}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != "user"; i-- {
		for _, c := range msgs[i].ToolCalls {
			called[c.Name] = struct{}{}
		}
	}
	return called
}

// toolChoice generates the calls of one choice. All arguments are generated (up to the
// choice's ceiling) before the budget is applied, so a budget only cuts fragments and never
// changes them.
func (g *generation) toolChoice(i int, r *rng) Choice {
	b := g.builder(i == g.n-1)
	// Where each call's arguments end (a piece index), and its name: on the stack, as a choice
	// makes at most maxParallelCalls calls (planToolCalls).
	var endsOf [maxParallelCalls]int
	var namesOf [maxParallelCalls]string
	ends, names := endsOf[:len(g.calls)], namesOf[:len(g.calls)]
	for k, t := range g.calls {
		appendSchemaInstance(b, r, g.argSchemas[k], &g.cache)
		ends[k], names[k] = len(b.ends), g.req.Tools[t].Name
	}
	return g.cutCalls(i, b, ends, names)
}

// cutCalls makes choice i's tool calls of the argument pieces in b, the arguments of call k
// ending at piece ends[k]: the choice's ceiling first, then the request's budget, which only
// drops fragments from the end.
func (g *generation) cutCalls(i int, b *pieceBuilder, ends []int, names []string) Choice {
	all, capped := capPieces(b.pieces(), g.maxPieces, g.maxBytes)
	limit := all.Len()
	if budget := g.req.MaxTokens; budget > 0 {
		limit = min(limit, budget)
	}

	finish := finishToolCalls
	if capped {
		finish = finishLength
	}
	calls := make([]ToolCall, 0, len(names))
	start := 0
	for k, name := range names {
		end := min(ends[k], all.Len())
		args := all.slice(min(start, end), end)
		left := limit - start
		if left <= 0 && k > 0 {
			finish = finishLength
			break
		}
		if left < args.Len() {
			args, finish = args.slice(0, max(left, 0)), finishLength
		}
		calls = append(calls, ToolCall{
			ID: toolCallID(g.requestSeed(), i, k),
			// A copy: the request's strings are cut from one copy of its body, and an open
			// stream keeps its answer for as long as it lasts — not the whole body with it.
			Name:      strings.Clone(name),
			Arguments: args,
		})
		start = ends[k]
	}
	return Choice{Index: i, ToolCalls: calls, FinishReason: finish}
}

// toolCallID derives a call id from the request, the choice and the call's position.
func toolCallID(seed [32]byte, choice, call int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := subSeed(seed, "call", uint64(choice), uint64(call))
	var id [5 + 24]byte
	copy(id[:], "call_")
	for j := range 24 {
		id[5+j] = alphabet[int(sum[j])%len(alphabet)]
	}
	return string(id[:])
}
