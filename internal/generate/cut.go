package generate

import (
	"strings"
	"unicode/utf8"

	"mockgateway/internal/protocol"
)

// DefaultMaxResponseBytes is the default cap on the bytes of content and tool arguments of one
// answer, shared by its choices. 4 MiB lets each of 128 choices show 32 KiB, more than 4096
// tokens of prose ever take (about 30 KB), so the byte cap only cuts what a token cannot bound:
// long string literals and long words. It is also what bounds a request's memory: eight of the
// largest answers at once stay under 300 MiB (make hostile).
const DefaultMaxResponseBytes = 4 << 20

// choiceCeiling returns the ceiling of each of n choices: the token ceiling, lowered to what the
// context window leaves after the prompt, and an equal share of the response's bytes.
func choiceCeiling(in Input, promptTokens, n int) (pieces, bytes int) {
	pieces = in.TokenCeiling
	if pieces <= 0 {
		pieces = protocol.DefaultMaxTokensCeiling
	}
	if in.ContextWindow > 0 {
		pieces = min(pieces, max(in.ContextWindow-promptTokens, 0))
	}
	total := in.MaxResponseBytes
	if total <= 0 {
		total = DefaultMaxResponseBytes
	}
	return pieces, max(total/max(n, 1), 1)
}

// cutText applies, in order, the choice's ceiling, the stop sequences and the request's budget
// to the pieces of a text choice, and returns what is left and the finish reason. The ceiling
// comes first so that stop and the budget cut the same text whatever they are: a smaller budget
// still gives a prefix of the answer.
func (g *generation) cutText(pieces Pieces) (Pieces, string) {
	pieces, finish, _ := g.cutTextAt(pieces)
	return pieces, finish
}

// cutTextAt is cutText, and also the stop sequence that ended the text ("" when none did): the
// Anthropic dialect names it (stop_sequence).
func (g *generation) cutTextAt(pieces Pieces) (Pieces, string, string) {
	pieces, capped := capPieces(pieces, g.maxPieces, g.maxBytes)
	pieces, stop := cutAtStop(pieces, g.stops)
	finish := finishStop
	if budget := g.req.MaxTokens; budget > 0 && pieces.Len() > budget {
		pieces, finish, stop = pieces.slice(0, budget), finishLength, ""
	} else if capped && stop == "" {
		finish = finishLength
	}
	return pieces, finish, stop
}

// capPieces keeps at most maxPieces pieces and maxBytes bytes; the piece that crosses maxBytes
// is cut at the last whole rune before it (and dropped when nothing is left), which may cut a
// JSON string mid-value, as a provider's answer is cut at its limit. capped reports a cut.
func capPieces(pieces Pieces, maxPieces, maxBytes int) (_ Pieces, capped bool) {
	if pieces.Len() > maxPieces {
		pieces, capped = pieces.slice(0, maxPieces), true
	}
	if len(pieces.Text()) <= maxBytes {
		return pieces, capped // nearly every answer: no piece to look for
	}
	total := 0
	for k := range pieces.Len() {
		p := pieces.At(k)
		if total+len(p) <= maxBytes {
			total += len(p)
			continue
		}
		keep := maxBytes - total
		for keep > 0 && !utf8.RuneStart(p[keep]) {
			keep--
		}
		if keep == 0 {
			return pieces.slice(0, k), true
		}
		return pieces.truncateLast(k, keep), true
	}
	return pieces, capped
}

// cutAtStop cuts the text at the earliest occurrence of any stop string. The pieces before the
// cut are kept as they are, the piece holding the cut is truncated (and dropped if nothing of it
// is left), so a stop never changes the words before it. stop is the stop string found (the
// first listed of those found at the cut), "" when none is.
func cutAtStop(pieces Pieces, stops []string) (_ Pieces, stop string) {
	if len(stops) == 0 || pieces.Len() == 0 {
		return pieces, ""
	}
	text := pieces.Text()
	cut := -1
	for _, s := range stops {
		if i := strings.Index(text, s); i >= 0 && (cut < 0 || i < cut) {
			cut, stop = i, s
		}
	}
	if cut < 0 {
		return pieces, ""
	}
	pos := 0
	for k := range pieces.Len() {
		p := pieces.At(k)
		if cut < pos+len(p) {
			if cut == pos {
				return pieces.slice(0, k), stop
			}
			return pieces.truncateLast(k, cut-pos), stop
		}
		pos += len(p)
	}
	return pieces, stop
}
