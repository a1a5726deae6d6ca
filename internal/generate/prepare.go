package generate

import (
	"unicode/utf8"

	"mockgateway/internal/protocol"
)

// Prepare is Generate for an answer that is sent as it is made (a stream). It gives the same
// choices, piece for piece, with the same finish reasons and token counts, but a choice of prose
// is lazy: its pieces are not made up front but one at a time by Choice.Next, so an open stream
// holds each choice's position — a random stream and the sentence it is in, a few hundred bytes
// — and not its text. The first piece costs the same however long the answer is.
//
// Prose is lazy when the answer is text (no response_format JSON), of the chat behavior or of
// mock-tools answering in prose (after a tool result too), with no stop sequence: a stop cuts at
// its first occurrence in the whole text, which is only known once the text is. Every other
// answer — JSON, tool calls, echo (made once and shared by the choices), prose with stop — is
// made up front as Generate makes it; the ceiling bounds it.
//
// A lazy choice's FinishReason and Tokens are known up front when its ceiling in bytes cannot
// cut it (its pieces times the longest prose piece fit); otherwise once it is read to its end,
// or once Result.Settle has read it there. Prepare keeps nothing of the request.
func Prepare(in Input) Result {
	req := in.Request
	if req == nil {
		req = &protocol.Request{}
	}
	n := max(req.N, 1)
	g := newGeneration(in, req, n)
	if !g.proseOnly() {
		return g.result(n)
	}
	shared := &proseRequest{seed: g.requestSeed(), n: g.defaultTokens, lead: g.lead(), maxBytes: g.maxBytes}
	// What cutText keeps when the bytes do not cut: the ceiling's pieces, then the budget's.
	shared.limit = min(g.defaultTokens, max(g.maxPieces, 0))
	if budget := req.MaxTokens; budget > 0 {
		shared.limit = min(shared.limit, budget)
	}
	shared.known = shared.limit <= shared.maxBytes/longestProsePiece
	res := Result{Choices: make([]Choice, n), PromptTokens: g.promptTokens}
	cursors := make([]lazyProse, n) // one allocation for all the choices' positions
	for i := range n {
		c := &cursors[i]
		c.req, c.index, c.prose, c.limit = shared, i, newProse(shared.n, shared.lead), shared.limit
		res.Choices[i] = Choice{Index: i, lazy: c}
		if shared.known {
			res.Choices[i].FinishReason = c.finish()
			res.CompletionTokens += shared.limit
		}
	}
	return res
}

// proseOnly reports whether every choice is prose that Prepare makes lazily (see Prepare): the
// default case of fullText, with no tool calls and no stop sequence.
func (g *generation) proseOnly() bool {
	return g.calls == nil && len(g.stops) == 0 && g.behavior != BehaviorEcho &&
		g.format != protocol.FormatJSONObject && g.format != protocol.FormatJSONSchema
}

// longestProsePiece is the most bytes one piece of prose takes: the longest word with a space
// before it and a "." after it, or a piece of the lead.
var longestProsePiece = func() int {
	n := 0
	for _, f := range wordForms {
		n = max(n, len(f[0]))
	}
	for _, p := range leadPieces {
		n = max(n, len(p))
	}
	return n
}()

// proseRequest is what the lazy choices of one answer share.
type proseRequest struct {
	seed     [32]byte // the request seed, from which each choice's stream is derived
	n        int      // the prose's length in pieces (the model's default length)
	lead     bool     // the prose opens with the tool-result lead
	limit    int      // the pieces a choice shows at most: the ceiling's, then the budget's
	maxBytes int      // the ceiling in bytes
	known    bool     // the bytes cannot cut: every choice shows limit pieces
}

// lazyProse is the position of a lazy choice: its random stream, its sentence, what it showed.
type lazyProse struct {
	req    *proseRequest
	index  int
	r      rng // seeded at the first piece, as Generate seeds it
	seeded bool
	prose  prose
	shown  int  // pieces read
	bytes  int  // their bytes
	limit  int  // pieces the choice shows: req.limit, lowered where the byte ceiling cuts
	cut    bool // the byte ceiling cut the choice
}

// next makes the next piece as cutText would leave it: capPieces' byte rule (the piece that
// crosses the ceiling is cut after its last whole character, or dropped when nothing of it is
// left, and nothing follows it), within limit. There are no stop sequences here.
func (c *lazyProse) next() (string, bool) {
	if c.shown >= c.limit {
		return "", false
	}
	if !c.seeded {
		c.r.seed(subSeed(c.req.seed, "choice", uint64(c.index), 0))
		c.seeded = true
	}
	s := c.prose.next(&c.r)
	if room := c.req.maxBytes - c.bytes; len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		c.cut, c.limit = true, c.shown
		if room == 0 {
			return "", false
		}
		s, c.limit = s[:room], c.shown+1
	}
	c.shown++
	c.bytes += len(s)
	return s, true
}

// finish is the finish reason of a choice read to its end (or of any choice when req.known):
// "length" when the ceiling or the budget left out any of the prose's pieces.
func (c *lazyProse) finish() string {
	if c.cut || c.limit < c.req.n {
		return finishLength
	}
	return finishStop
}

// tokens is the choice's completion tokens: final when req.known or at its end, the pieces read
// so far before.
func (c *lazyProse) tokens() int {
	if c.req.known {
		return c.req.limit
	}
	return c.shown
}

// Lazy reports whether the choice is made as it is read (see Prepare): its Content is nil and
// Next makes its pieces. It is settled once its FinishReason is set; Tokens is final then.
func (c Choice) Lazy() bool { return c.lazy != nil }

// Next makes the next content piece of a lazy choice, the one Generate's Content would hold
// there; false at its end, when the choice is settled. A choice that is not lazy has none.
func (c *Choice) Next() (string, bool) {
	if c.lazy == nil {
		return "", false
	}
	s, ok := c.lazy.next()
	if !ok && c.FinishReason == "" {
		c.FinishReason = c.lazy.finish()
	}
	return s, ok
}

// Settle settles every lazy choice that is not yet: it reads the choice to its end without
// keeping its pieces (drawing them, with no copy), so that every FinishReason and Tokens is
// final, and sets CompletionTokens. It costs nothing more when every choice is settled, as in
// a result of Generate or of a stream that was read to its end.
func (r *Result) Settle() {
	total := 0
	for i := range r.Choices {
		c := &r.Choices[i]
		for c.lazy != nil && c.FinishReason == "" {
			c.Next()
		}
		total += c.Tokens()
	}
	if !r.scriptedUsage {
		r.CompletionTokens = total + r.ReasoningTokens
	}
}
