package server

import (
	"context"
	"iter"
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// A Responses API stream is streamChat in the dialect's events (runEvents): the same pacing
// (the first-chunk latency before response.created, the between-chunk latency before every
// delta), the same faults, deadlines and outcomes; every event counts as a chunk. The deltas
// spell the answer that a JSON call gets, one per output token.

// runEvents writes the events: response.created and response.in_progress, the output items
// with their parts and deltas, then response.completed or response.incomplete.
func (st *stream) runEvents(ctx context.Context, c *chatCall) error {
	resp := &protocol.Response{ID: c.ID, CreatedAt: c.Created, Status: "in_progress", Model: c.Model.ID, Echo: c.Echo}
	if err := st.sendResponse(ctx, c, "response.created", resp); err != nil {
		return err
	}
	if err := st.sendResponse(ctx, c, "response.in_progress", resp); err != nil {
		return err
	}
	ch := &c.Result.Choices[0]
	var err error
	if len(ch.ToolCalls) > 0 {
		resp.Output, err = st.sendCalls(ctx, c, ch)
	} else {
		resp.Output, err = st.sendMessage(ctx, c, ch)
	}
	if err != nil {
		return err
	}
	if err := st.strike(ctx, c, true); err != nil { // a stream shorter than after= fails at its end
		return err
	}
	c.Result.Settle() // every piece was read: this only sums the tokens
	resp.Status, resp.Incomplete = responseStatus(ch.FinishReason)
	resp.Usage = &protocol.ResponseUsage{Input: c.Result.PromptTokens, Output: c.Result.CompletionTokens}
	last := "response.completed"
	if resp.Incomplete != "" {
		last = "response.incomplete"
	} else {
		resp.CompletedAt = c.Created
	}
	if err := st.sendResponse(ctx, c, last, resp); err != nil {
		return err
	}
	if err := st.done(); err != nil {
		return writeFailed(err)
	}
	return nil
}

// sendMessage streams the answer's message: the item, its one content part, a delta per piece.
func (st *stream) sendMessage(ctx context.Context, c *chatCall, ch *generate.Choice) ([]protocol.OutputItem, error) {
	msg := protocol.OutputItem{ID: itemID(c.ID, "msg_", 0), Status: "in_progress", NoPart: true, Refusal: !ch.Refusal.IsNil()}
	deltaType, doneType, key := "response.output_text.delta", "response.output_text.done", "text"
	if msg.Refusal {
		deltaType, doneType, key = "response.refusal.delta", "response.refusal.done", "refusal"
	}
	if err := st.sendItem(ctx, c, "response.output_item.added", 0, &msg); err != nil {
		return nil, err
	}
	msg.NoPart = false
	if err := st.sendPart(ctx, c, "response.content_part.added", &msg); err != nil {
		return nil, err
	}
	var text strings.Builder // the .done events and the final response carry the whole text
	for piece := range messagePieces(ch) {
		if err := st.tick(c); err != nil {
			return nil, err
		}
		text.WriteString(piece)
		if err := st.sendText(ctx, c, deltaType, &msg, "delta", piece); err != nil {
			return nil, err
		}
		st.sent++
	}
	msg.Text = text.String()
	if err := st.sendText(ctx, c, doneType, &msg, key, msg.Text); err != nil {
		return nil, err
	}
	if err := st.sendPart(ctx, c, "response.content_part.done", &msg); err != nil {
		return nil, err
	}
	msg.Status, _ = responseStatus(ch.FinishReason) // settled: every piece was read
	if err := st.sendItem(ctx, c, "response.output_item.done", 0, &msg); err != nil {
		return nil, err
	}
	return []protocol.OutputItem{msg}, nil
}

// messagePieces yields a choice's content (or refusal) pieces: made one at a time for a lazy
// choice, read from the result otherwise.
func messagePieces(ch *generate.Choice) iter.Seq[string] {
	return func(yield func(string) bool) {
		if ch.Lazy() {
			for piece, ok := ch.Next(); ok; piece, ok = ch.Next() {
				if !yield(piece) {
					return
				}
			}
			return
		}
		pieces := ch.Content
		if !ch.Refusal.IsNil() {
			pieces = ch.Refusal
		}
		for k := range pieces.Len() {
			if !yield(pieces.At(k)) {
				return
			}
		}
	}
}

// sendCalls streams the answer's function calls, each an item with its argument deltas.
func (st *stream) sendCalls(ctx context.Context, c *chatCall, ch *generate.Choice) ([]protocol.OutputItem, error) {
	items := make([]protocol.OutputItem, len(ch.ToolCalls))
	for k := range ch.ToolCalls {
		tc, it := &ch.ToolCalls[k], &items[k]
		*it = protocol.OutputItem{Function: true, ID: itemID(c.ID, "fc_", k), Status: "in_progress", CallID: tc.ID, Name: tc.Name}
		if err := st.sendItem(ctx, c, "response.output_item.added", k, it); err != nil {
			return nil, err
		}
		for j := range tc.Arguments.Len() {
			if err := st.tick(c); err != nil {
				return nil, err
			}
			if err := st.sendArguments(ctx, c, "response.function_call_arguments.delta", k, it, "delta", tc.Arguments.At(j)); err != nil {
				return nil, err
			}
			st.sent++
		}
		it.Arguments, it.Status = tc.Arguments.Text(), "completed"
		if err := st.sendArguments(ctx, c, "response.function_call_arguments.done", k, it, "arguments", it.Arguments); err != nil {
			return nil, err
		}
		if err := st.sendItem(ctx, c, "response.output_item.done", k, it); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// tick waits the between-chunk latency before a delta.
func (st *stream) tick(c *chatCall) error {
	return st.wait(c.Timings.Next())
}

func (st *stream) sendResponse(ctx context.Context, c *chatCall, typ string, r *protocol.Response) error {
	b := protocol.AppendEventStart(st.buf, typ, st.seq)
	b = append(b, `,"response":`...)
	st.buf = r.AppendJSON(b)
	return st.emit(ctx, c, false)
}

func (st *stream) sendItem(ctx context.Context, c *chatCall, typ string, output int, it *protocol.OutputItem) error {
	b := protocol.AppendEventStart(st.buf, typ, st.seq)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(output), 10)
	b = append(b, `,"item":`...)
	st.buf = it.AppendJSON(b)
	return st.emit(ctx, c, false)
}

func (st *stream) sendPart(ctx context.Context, c *chatCall, typ string, msg *protocol.OutputItem) error {
	b := protocol.AppendEventStart(st.buf, typ, st.seq)
	b = protocol.AppendItemRef(b, msg.ID, 0, true)
	b = append(b, `,"part":`...)
	st.buf = protocol.AppendContentPart(b, msg.Text, msg.Refusal)
	return st.emit(ctx, c, false)
}

// sendText is a message's text event: a delta, or the whole text once done. Output text events
// carry (empty) logprobs; refusal events have none.
func (st *stream) sendText(ctx context.Context, c *chatCall, typ string, msg *protocol.OutputItem, key, value string) error {
	b := protocol.AppendEventStart(st.buf, typ, st.seq)
	b = protocol.AppendItemRef(b, msg.ID, 0, true)
	b = protocol.AppendMember(b, key, value)
	if !msg.Refusal {
		b = append(b, `,"logprobs":[]`...)
	}
	st.buf = b
	return st.emit(ctx, c, key == "delta")
}

// sendArguments is a function call's arguments event: a delta, or the whole arguments (with
// the name) once done.
func (st *stream) sendArguments(ctx context.Context, c *chatCall, typ string, output int, it *protocol.OutputItem, key, value string) error {
	b := protocol.AppendEventStart(st.buf, typ, st.seq)
	b = protocol.AppendItemRef(b, it.ID, output, false)
	if key == "arguments" {
		b = protocol.AppendMember(b, "name", it.Name)
	}
	st.buf = protocol.AppendMember(b, key, value)
	return st.emit(ctx, c, key == "delta")
}

// emit ends the event appended to st.buf, unless the simulated mid-stream fault strikes first
// (then the event is dropped, and the events held before it go out with the error event). A
// delta is written at once, the lifecycle events around the deltas are held (see sse.hold).
func (st *stream) emit(ctx context.Context, c *chatCall, now bool) error {
	if err := st.strike(ctx, c, false); err != nil {
		st.buf = st.buf[:st.held] // the struck event is not sent
		return err
	}
	st.buf = protocol.AppendEventEnd(st.buf)
	st.held = len(st.buf)
	st.seq++
	st.life.Chunk()
	if now {
		if err := st.writeHeld(); err != nil {
			return writeFailed(err)
		}
	}
	return nil
}

// errorEvent ends a Responses stream that failed, as OpenAI ends one: an error event, held
// after what is held (done writes them).
func (s *sse) errorEvent(e *apierr.Error) {
	b := protocol.AppendEventStart(s.buf, "error", s.seq) // after the events held, if any
	b = protocol.AppendMember(b, "code", string(e.Code))
	b = protocol.AppendMember(b, "message", e.Message)
	if e.Param != "" {
		b = protocol.AppendMember(b, "param", e.Param)
	} else {
		b = append(b, `,"param":null`...)
	}
	s.buf = protocol.AppendEventEnd(b)
	s.held = len(s.buf)
	s.seq++
}
