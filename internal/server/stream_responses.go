package server

import (
	"context"
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
// with their parts and deltas, then response.completed or response.incomplete. An instant
// stream's eventsToFirstToken may have appended those up to the first delta; runEvents goes on
// from there.
func (st *stream) runEvents(ctx context.Context, c *chatCall) error {
	ev := st.ev
	for {
		_, more, err := ev.send(ctx, st)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if err := st.strikeFault(ctx, c, true); err != nil { // a stream shorter than after= fails at its end
		return err
	}
	c.Result.Settle() // every piece was read: this only sums the tokens
	resp := ev.resp
	resp.Status, resp.Incomplete = responseStatus(ev.ch.FinishReason)
	resp.Usage = responseUsage(&c.Result)
	resp.Output = ev.items
	if ev.rs != nil {
		resp.Output = append([]protocol.OutputItem{*ev.rs}, ev.items...)
	}
	last := "response.completed"
	if resp.Incomplete != "" {
		last = "response.incomplete"
	} else {
		resp.CompletedAt = c.Created
	}
	if err := st.sendResponse(ctx, c, last, resp); err != nil {
		return err
	}
	if err := st.writeFinal(); err != nil {
		return writeFailed(err)
	}
	return nil
}

// eventsToFirstToken appends an instant Responses stream's events up to its first delta, as
// chunksToFirstToken does a chat stream's frames.
func (st *stream) eventsToFirstToken(ctx context.Context) error {
	for {
		token, more, err := st.ev.send(ctx, st)
		if err != nil || !more || token {
			return err
		}
	}
}

// respEvents is a Responses stream's answer as the events still to come, sent a step at a time
// as the stream goes, as a chat stream's frames are made: the message's item, its one content
// part and a delta per piece, or each function call's item and its argument deltas. The steps
// are pulled rather than written by nested loops, so that eventsToFirstToken can stop at the
// first delta and runEvents go on from there.
type respEvents struct {
	c     *chatCall
	ch    *generate.Choice
	resp  *protocol.Response
	calls bool                  // the answer calls functions, an item each; else items[0] is its message
	items []protocol.OutputItem // the output, as sent so far
	step  int                   // what the next send sends (evCreated …)
	k     int                   // the item being sent
	j     int                   // its next piece: a listed message's, or the call's next argument fragment
	text  strings.Builder       // the message's text so far: its .done events and the response carry it whole
	// the message's text events: output_text's, or a refusal's
	deltaType, doneType, key string
	// rs is a reasoning model's reasoning item, sent first (evReasoning); base is the output
	// index of the answer's first item, 1 after a reasoning item. eaten: the reasoning ate the
	// whole budget, and the reasoning item is the whole output.
	rs    *protocol.OutputItem
	base  int
	eaten bool
}

// The steps of a Responses stream: each sends one or more events, only evDelta a token's.
const (
	evCreated   = iota // response.created, response.in_progress
	evReasoning        // the reasoning item, its summary's events, and the item done
	evOpen             // the message's item and content part added, or a function call's item added
	evDelta            // one delta: a piece of the message's text, or a fragment of the call's arguments
	evClose            // the item's closing events
	evDone             // every item sent
)

func newRespEvents(c *chatCall) *respEvents {
	ch := &c.Result.Choices[0]
	ev := &respEvents{c: c, ch: ch, resp: &protocol.Response{ID: c.ID, CreatedAt: c.Created, Status: "in_progress", Model: c.Model.ID, Echo: c.Echo}}
	if c.Reasoning != nil {
		ev.rs, ev.base = c.Reasoning, 1
		ev.eaten = eatenByReasoning(ch)
	}
	if len(ch.ToolCalls) > 0 {
		ev.calls, ev.items = true, make([]protocol.OutputItem, len(ch.ToolCalls))
		return ev
	}
	msg := protocol.OutputItem{ID: itemID(c.ID, "msg_", 0), Status: "in_progress", NoPart: true, Refusal: !ch.Refusal.IsNil()}
	ev.deltaType, ev.doneType, ev.key = "response.output_text.delta", "response.output_text.done", "text"
	if msg.Refusal {
		ev.deltaType, ev.doneType, ev.key = "response.refusal.delta", "response.refusal.done", "refusal"
	}
	ev.items = []protocol.OutputItem{msg}
	return ev
}

// send sends the next step: token reports a delta sent, more whether a step was left to send.
func (ev *respEvents) send(ctx context.Context, st *stream) (token, more bool, err error) {
	c := ev.c
	switch ev.step {
	case evCreated:
		if err = st.sendResponse(ctx, c, "response.created", ev.resp); err == nil {
			err = st.sendResponse(ctx, c, "response.in_progress", ev.resp)
		}
		ev.step = evOpen
		if ev.rs != nil {
			ev.step = evReasoning
		}
	case evReasoning:
		err, ev.step = ev.reasoning(ctx, st), evOpen
		if ev.eaten {
			ev.items, ev.step = nil, evDone
		}
	case evOpen:
		err, ev.step = ev.open(ctx, st), evDelta
	case evDelta:
		if token, err = ev.delta(ctx, st); !token && err == nil {
			ev.step = evClose
		}
	case evClose:
		err = ev.close(ctx, st)
		if ev.k, ev.j, ev.step = ev.k+1, 0, evDone; ev.calls && ev.k < len(ev.items) {
			ev.step = evOpen
		}
	default:
		return false, false, nil
	}
	return token && err == nil, true, err
}

func (ev *respEvents) open(ctx context.Context, st *stream) error {
	c, it := ev.c, &ev.items[ev.k]
	if ev.calls {
		tc := &ev.ch.ToolCalls[ev.k]
		*it = protocol.OutputItem{Function: true, ID: itemID(c.ID, "fc_", ev.k), Status: "in_progress", CallID: tc.ID, Name: tc.Name}
		return st.sendItem(ctx, c, "response.output_item.added", ev.base+ev.k, it)
	}
	if err := st.sendItem(ctx, c, "response.output_item.added", ev.base, it); err != nil {
		return err
	}
	it.NoPart = false
	return st.sendPart(ctx, c, "response.content_part.added", it)
}

// delta sends the item's next delta, after the between-chunk latency; false when it has none
// left.
func (ev *respEvents) delta(ctx context.Context, st *stream) (bool, error) {
	c, it := ev.c, &ev.items[ev.k]
	if ev.calls {
		args := ev.ch.ToolCalls[ev.k].Arguments
		if ev.j >= args.Len() {
			return false, nil
		}
		if err := st.betweenTokens(c); err != nil {
			return false, err
		}
		ev.j++
		return true, st.sendArguments(ctx, c, "response.function_call_arguments.delta", ev.base+ev.k, it, "delta", args.At(ev.j-1))
	}
	piece, ok := nextPiece(ev.ch, &ev.j)
	if !ok {
		return false, nil
	}
	if err := st.betweenTokens(c); err != nil {
		return false, err
	}
	ev.text.WriteString(piece)
	return true, st.sendText(ctx, c, ev.deltaType, it, "delta", piece)
}

// nextPiece is a text answer's next piece, for the event streams (Responses, Messages) that
// pull one piece per delta: made now for a lazy choice, else read from the result at *j (the
// content, or the refusal), which it advances.
func nextPiece(ch *generate.Choice, j *int) (string, bool) {
	if ch.Lazy() {
		return ch.Next()
	}
	pieces := ch.Content
	if !ch.Refusal.IsNil() {
		pieces = ch.Refusal
	}
	if *j >= pieces.Len() {
		return "", false
	}
	*j++
	return pieces.At(*j - 1), true
}

func (ev *respEvents) close(ctx context.Context, st *stream) error {
	c, it := ev.c, &ev.items[ev.k]
	if ev.calls {
		it.Arguments, it.Status = ev.ch.ToolCalls[ev.k].Arguments.Text(), "completed"
		if err := st.sendArguments(ctx, c, "response.function_call_arguments.done", ev.base+ev.k, it, "arguments", it.Arguments); err != nil {
			return err
		}
		return st.sendItem(ctx, c, "response.output_item.done", ev.base+ev.k, it)
	}
	it.Text = ev.text.String()
	if err := st.sendText(ctx, c, ev.doneType, it, ev.key, it.Text); err != nil {
		return err
	}
	if err := st.sendPart(ctx, c, "response.content_part.done", it); err != nil {
		return err
	}
	it.Status, _ = responseStatus(ev.ch.FinishReason) // settled: every piece was read
	return st.sendItem(ctx, c, "response.output_item.done", ev.base, it)
}

// reasoning sends the reasoning item: added with an empty summary, its one summary part (added,
// its text in one delta, done) when it has one, and done, whole. The summary's delta is not an
// output token: reasoning tokens are counted in the usage, never streamed.
func (ev *respEvents) reasoning(ctx context.Context, st *stream) error {
	c, rs := ev.c, *ev.rs
	added := rs
	added.Summary = ""
	if err := st.sendItem(ctx, c, "response.output_item.added", 0, &added); err != nil {
		return err
	}
	if rs.Summary != "" {
		for _, e := range [...]struct{ typ, key, value string }{
			{"response.reasoning_summary_part.added", "part", ""},
			{"response.reasoning_summary_text.delta", "delta", rs.Summary},
			{"response.reasoning_summary_text.done", "text", rs.Summary},
			{"response.reasoning_summary_part.done", "part", rs.Summary},
		} {
			b := protocol.AppendEventStart(st.buf, e.typ, st.eventSeq)
			b = protocol.AppendItemRef(b, rs.ID, 0, false)
			b = append(b, `,"summary_index":0`...)
			if e.key == "part" {
				b = protocol.AppendSummaryPart(append(b, `,"part":`...), e.value)
			} else {
				b = protocol.AppendMember(b, e.key, e.value)
			}
			st.buf = b
			if err := st.commitEvent(ctx, c, false); err != nil {
				return err
			}
		}
	}
	return st.sendItem(ctx, c, "response.output_item.done", 0, &rs)
}

func (st *stream) sendResponse(ctx context.Context, c *chatCall, typ string, r *protocol.Response) error {
	b := protocol.AppendEventStart(st.buf, typ, st.eventSeq)
	b = append(b, `,"response":`...)
	st.buf = r.AppendJSON(b)
	return st.commitEvent(ctx, c, false)
}

func (st *stream) sendItem(ctx context.Context, c *chatCall, typ string, output int, it *protocol.OutputItem) error {
	b := protocol.AppendEventStart(st.buf, typ, st.eventSeq)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(output), 10)
	b = append(b, `,"item":`...)
	st.buf = it.AppendJSON(b)
	return st.commitEvent(ctx, c, false)
}

func (st *stream) sendPart(ctx context.Context, c *chatCall, typ string, msg *protocol.OutputItem) error {
	b := protocol.AppendEventStart(st.buf, typ, st.eventSeq)
	b = protocol.AppendItemRef(b, msg.ID, st.ev.base, true)
	b = append(b, `,"part":`...)
	st.buf = protocol.AppendContentPart(b, msg.Text, msg.Refusal)
	return st.commitEvent(ctx, c, false)
}

// sendText is a message's text event: a delta, or the whole text once done. Output text events
// carry (empty) logprobs; refusal events have none.
func (st *stream) sendText(ctx context.Context, c *chatCall, typ string, msg *protocol.OutputItem, key, value string) error {
	b := protocol.AppendEventStart(st.buf, typ, st.eventSeq)
	b = protocol.AppendItemRef(b, msg.ID, st.ev.base, true)
	b = protocol.AppendMember(b, key, value)
	if !msg.Refusal {
		b = append(b, `,"logprobs":[]`...)
	}
	st.buf = b
	return st.commitEvent(ctx, c, key == "delta")
}

// sendArguments is a function call's arguments event: a delta, or the whole arguments (with
// the name) once done.
func (st *stream) sendArguments(ctx context.Context, c *chatCall, typ string, output int, it *protocol.OutputItem, key, value string) error {
	b := protocol.AppendEventStart(st.buf, typ, st.eventSeq)
	b = protocol.AppendItemRef(b, it.ID, output, false)
	if key == "arguments" {
		b = protocol.AppendMember(b, "name", it.Name)
	}
	st.buf = protocol.AppendMember(b, key, value)
	return st.commitEvent(ctx, c, key == "delta")
}

// commitEvent ends the event appended to st.buf and makes it pending, unless the simulated
// mid-stream fault strikes first (then the event is dropped, and the events pending before it
// go out with the error event). It counts the event as a chunk and numbers the next. A delta
// goes out when the next is due (stream.betweenTokens) or the stream ends.
func (st *stream) commitEvent(ctx context.Context, c *chatCall, token bool) error {
	if err := st.strikeFault(ctx, c, false); err != nil {
		st.buf = st.buf[:st.pendingLen] // the struck event is not sent
		return err
	}
	st.buf = protocol.AppendEventEnd(st.buf)
	st.pendingLen = len(st.buf)
	st.eventSeq++
	st.telemetry.Chunk()
	if token {
		st.pendingTokens++
	}
	return nil
}

// appendErrorEvent ends a Responses stream that failed, as OpenAI ends one: an error event,
// after what is pending (writeFinal writes them).
func (s *sseWriter) appendErrorEvent(e *apierr.Error) {
	b := protocol.AppendEventStart(s.buf, "error", s.eventSeq) // after the events pending, if any
	b = protocol.AppendMember(b, "code", string(e.Code))
	b = protocol.AppendMember(b, "message", e.Message)
	if e.Param != "" {
		b = protocol.AppendMember(b, "param", e.Param)
	} else {
		b = append(b, `,"param":null`...)
	}
	s.buf = protocol.AppendEventEnd(b)
	s.pendingLen = len(s.buf)
	s.eventSeq++
}
