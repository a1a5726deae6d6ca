package chat

import (
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// frame is one chunk-to-be of one choice. Frames come from the generated result alone, so the
// stream is the same pure function of the request as the JSON response.
type frame struct {
	choice int
	delta  protocol.Delta
	finish *string
	token  bool // a content or argument delta: one completion token, preceded by between-chunk latency
}

// frames yields the stream's frames: each choice's in the contract's order — role chunk, one
// delta per token (tool calls: a header delta, then one per argument fragment), finish chunk —
// with the choices interleaved round-robin, which keeps each choice's own deltas in order.
//
// They are made one at a time as the stream goes, pointing into the result rather than copying
// it: laid out in advance they were a slice of frames, and an allocation per content piece, kept
// for the whole life of every open stream. A lazy choice (generate.Prepare) goes further: its
// pieces are made here, one per frame, so an open stream holds each choice's position, not its
// text. The stream pulls them (events.Next) rather than ranging over an iterator, whose closures
// would add two frames below every write the stream makes.
type frames struct {
	cursors []frameCursor
	i       int  // the cursor whose turn it is in this round
	more    bool // a cursor has yielded a frame in this round
}

func framesOf(res generate.Result) frames {
	fs := frames{cursors: make([]frameCursor, len(res.Choices))}
	for i := range fs.cursors {
		fs.cursors[i].ch, fs.cursors[i].choice = &res.Choices[i], i
	}
	return fs
}

// next is the stream's next frame; false once every choice has ended.
func (fs *frames) next() (frame, bool) {
	for {
		for fs.i < len(fs.cursors) {
			f, ok := fs.cursors[fs.i].next()
			fs.i++
			if ok {
				fs.more = true
				return f, true
			}
		}
		if !fs.more {
			return frame{}, false
		}
		fs.i, fs.more = 0, false
	}
}

// frameCursor walks one choice's frames: pos 0 is the role chunk, then the content pieces (or a
// refusal's), then each tool call's header and argument fragments, then the finish chunk. A
// lazy choice's pieces come from its Next, until it ends: then the finish chunk, and pos -1.
type frameCursor struct {
	ch     *generate.Choice
	choice int
	pos    int
	empty  string // the role chunk's "content":"" points here
	piece  string // the current content piece, which its content delta points to
	// call is the current tool call delta, which its frame's delta points to: a frame is encoded
	// before the next is made, so one per cursor serves them all, not an allocation a fragment.
	call [1]protocol.ToolCallDelta
}

func (c *frameCursor) next() (frame, bool) {
	ch, pos := c.ch, c.pos
	if pos < 0 {
		return frame{}, false
	}
	c.pos++
	if pos == 0 {
		role := protocol.Delta{Role: "assistant", Content: &c.empty}
		if len(ch.ToolCalls) > 0 || !ch.Refusal.IsNil() {
			// As OpenAI does: no content key for a choice that calls tools (or refuses), so
			// clients such as the Vercel AI SDK do not record an empty text part before it.
			role.Content = nil
		}
		return frame{choice: c.choice, delta: role}, true
	}
	if ch.Lazy() {
		var ok bool
		if c.piece, ok = ch.Next(); ok {
			return frame{choice: c.choice, delta: protocol.Delta{Content: &c.piece}, token: true}, true
		}
		c.pos = -1 // settled: its FinishReason is set
		return frame{choice: c.choice, finish: &ch.FinishReason}, true
	}
	pos--
	if pos < ch.Content.Len() {
		c.piece = ch.Content.At(pos)
		return frame{choice: c.choice, delta: protocol.Delta{Content: &c.piece}, token: true}, true
	}
	pos -= ch.Content.Len()
	if pos < ch.Refusal.Len() {
		c.piece = ch.Refusal.At(pos)
		return frame{choice: c.choice, delta: protocol.Delta{Refusal: &c.piece}, token: true}, true
	}
	pos -= ch.Refusal.Len()
	for k := range ch.ToolCalls {
		tc := &ch.ToolCalls[k]
		if pos == 0 {
			c.call[0] = protocol.ToolCallDelta{Index: k, ID: tc.ID, Type: "function", Function: protocol.FunctionDelta{Name: tc.Name}}
			return frame{choice: c.choice, delta: protocol.Delta{ToolCalls: c.call[:]}}, true
		}
		if pos--; pos < tc.Arguments.Len() {
			c.call[0] = protocol.ToolCallDelta{Index: k, Function: protocol.FunctionDelta{Arguments: tc.Arguments.At(pos)}}
			return frame{choice: c.choice, delta: protocol.Delta{ToolCalls: c.call[:]}, token: true}, true
		}
		pos -= tc.Arguments.Len()
	}
	if pos == 0 {
		return frame{choice: c.choice, finish: &ch.FinishReason}, true
	}
	return frame{}, false
}
