package generate

import (
	"strings"

	"mockgateway/internal/protocol"
)

// maxParallelCalls is the most calls one choice makes when parallel tool calls are allowed.
const maxParallelCalls = 3

// planToolCalls decides which tools mock-tools calls (rule 5 of the package documentation), as
// indices into req.Tools written into calls, or nil when it answers with text.
func planToolCalls(req *protocol.ChatRequest, calls *[maxParallelCalls]int) []int {
	if len(req.Tools) == 0 {
		return nil
	}
	mode := effectiveToolChoice(req)
	if mode == protocol.ToolChoiceNone {
		return nil
	}
	forced := mode == protocol.ToolChoiceRequired || mode == protocol.ToolChoiceFunction
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" && !forced {
		return nil
	}
	calls[0] = 0
	if mode == protocol.ToolChoiceFunction {
		for i := range req.Tools {
			if req.Tools[i].Name == req.ToolChoice.Function {
				calls[0] = i
				break
			}
		} // else 0: the decoder rejects unknown names; stay total anyway
		return calls[:1]
	}
	if req.ParallelToolCalls && len(req.Tools) >= 2 {
		n := min(len(req.Tools), maxParallelCalls)
		for i := range n {
			calls[i] = i
		}
		return calls[:n]
	}
	return calls[:1]
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
