package responses

import (
	"context"
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// A Responses API stream is the stream loop (internal/server's stream.go) in the dialect's
// named events: the same pacing (the first-chunk latency before response.created, the
// between-chunk latency before every delta), the same faults, deadlines and outcomes; every
// event counts as a chunk. The deltas spell the answer that a JSON call gets, one per output
// token: response.created and response.in_progress, the output items with their parts and
// deltas, then response.completed or response.incomplete. There is no [DONE].

// End sends response.completed, or response.incomplete, with the settled answer.
func (ev *respEvents) End(ctx context.Context, s dialect.Sink) error {
	c := ev.c
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
	return ev.sendResponse(ctx, s, last, resp)
}

// respEvents is a Responses stream's answer as the events still to come, sent a step at a time
// as the stream goes (dialect.Events): the message's item, its one content part and a delta per
// piece, or each function call's item and its argument deltas.
type respEvents struct {
	c     *dialect.Call
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

// initEvents makes ev the stream of r's answer; the response it sends is r's body, so that the
// reply, its events and its response are one allocation.
func initEvents(ev *respEvents, r *reply) {
	c := r.c
	ch := &c.Result.Choices[0]
	r.body = protocol.Response{ID: c.ID, CreatedAt: c.Created, Status: "in_progress", Model: c.Model.ID, Echo: r.echo}
	*ev = respEvents{c: c, ch: ch, resp: &r.body}
	if r.reasoning != nil {
		ev.rs, ev.base = r.reasoning, 1
		ev.eaten = dialect.EatenByReasoning(ch)
	}
	if len(ch.ToolCalls) > 0 {
		ev.calls, ev.items = true, make([]protocol.OutputItem, len(ch.ToolCalls))
		return
	}
	msg := protocol.OutputItem{ID: itemID(c.ID, "msg_", 0), Status: "in_progress", NoPart: true, Refusal: !ch.Refusal.IsNil()}
	ev.deltaType, ev.doneType, ev.key = "response.output_text.delta", "response.output_text.done", "text"
	if msg.Refusal {
		ev.deltaType, ev.doneType, ev.key = "response.refusal.delta", "response.refusal.done", "refusal"
	}
	ev.items = []protocol.OutputItem{msg}
}

// Next sends the next step: token reports a delta sent, more whether a step was left to send.
func (ev *respEvents) Next(ctx context.Context, st dialect.Sink) (token, more bool, err error) {
	switch ev.step {
	case evCreated:
		if err = ev.sendResponse(ctx, st, "response.created", ev.resp); err == nil {
			err = ev.sendResponse(ctx, st, "response.in_progress", ev.resp)
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

func (ev *respEvents) open(ctx context.Context, st dialect.Sink) error {
	c, it := ev.c, &ev.items[ev.k]
	if ev.calls {
		tc := &ev.ch.ToolCalls[ev.k]
		*it = protocol.OutputItem{Function: true, ID: itemID(c.ID, "fc_", ev.k), Status: "in_progress", CallID: tc.ID, Name: tc.Name}
		return ev.sendItem(ctx, st, "response.output_item.added", ev.base+ev.k, it)
	}
	if err := ev.sendItem(ctx, st, "response.output_item.added", ev.base, it); err != nil {
		return err
	}
	it.NoPart = false
	return ev.sendPart(ctx, st, "response.content_part.added", it)
}

// delta sends the item's next delta, after the between-chunk latency; false when it has none
// left.
func (ev *respEvents) delta(ctx context.Context, st dialect.Sink) (bool, error) {
	it := &ev.items[ev.k]
	if ev.calls {
		args := ev.ch.ToolCalls[ev.k].Arguments
		if ev.j >= args.Len() {
			return false, nil
		}
		if err := st.BeforeToken(); err != nil {
			return false, err
		}
		ev.j++
		return true, ev.sendArguments(ctx, st, "response.function_call_arguments.delta", ev.base+ev.k, it, "delta", args.At(ev.j-1))
	}
	piece, ok := dialect.NextPiece(ev.ch, &ev.j)
	if !ok {
		return false, nil
	}
	if err := st.BeforeToken(); err != nil {
		return false, err
	}
	ev.text.WriteString(piece)
	return true, ev.sendText(ctx, st, ev.deltaType, it, "delta", piece)
}

func (ev *respEvents) close(ctx context.Context, st dialect.Sink) error {
	it := &ev.items[ev.k]
	if ev.calls {
		it.Arguments, it.Status = ev.ch.ToolCalls[ev.k].Arguments.Text(), "completed"
		if err := ev.sendArguments(ctx, st, "response.function_call_arguments.done", ev.base+ev.k, it, "arguments", it.Arguments); err != nil {
			return err
		}
		return ev.sendItem(ctx, st, "response.output_item.done", ev.base+ev.k, it)
	}
	it.Text = ev.text.String()
	if err := ev.sendText(ctx, st, ev.doneType, it, ev.key, it.Text); err != nil {
		return err
	}
	if err := ev.sendPart(ctx, st, "response.content_part.done", it); err != nil {
		return err
	}
	it.Status, _ = responseStatus(ev.ch.FinishReason) // settled: every piece was read
	return ev.sendItem(ctx, st, "response.output_item.done", ev.base, it)
}

// reasoning sends the reasoning item: added with an empty summary, its one summary part (added,
// its text in one delta, done) when it has one, and done, whole. The summary's delta is not an
// output token: reasoning tokens are counted in the usage, never streamed.
func (ev *respEvents) reasoning(ctx context.Context, st dialect.Sink) error {
	rs := *ev.rs
	added := rs
	added.Summary = ""
	if err := ev.sendItem(ctx, st, "response.output_item.added", 0, &added); err != nil {
		return err
	}
	if rs.Summary != "" {
		for _, e := range [...]struct{ typ, key, value string }{
			{"response.reasoning_summary_part.added", "part", ""},
			{"response.reasoning_summary_text.delta", "delta", rs.Summary},
			{"response.reasoning_summary_text.done", "text", rs.Summary},
			{"response.reasoning_summary_part.done", "part", rs.Summary},
		} {
			b := protocol.AppendEventStart(st.Buffer(), e.typ, st.Seq())
			b = protocol.AppendItemRef(b, rs.ID, 0, false)
			b = append(b, `,"summary_index":0`...)
			if e.key == "part" {
				b = protocol.AppendSummaryPart(append(b, `,"part":`...), e.value)
			} else {
				b = protocol.AppendMember(b, e.key, e.value)
			}
			if err := commit(ctx, st, b, false); err != nil {
				return err
			}
		}
	}
	return ev.sendItem(ctx, st, "response.output_item.done", 0, &rs)
}

// commit ends the event appended to b and commits it (dialect.Sink.Commit).
func commit(ctx context.Context, st dialect.Sink, b []byte, token bool) error {
	return st.Commit(ctx, protocol.AppendEventEnd(b), token)
}

func (ev *respEvents) sendResponse(ctx context.Context, st dialect.Sink, typ string, r *protocol.Response) error {
	b := protocol.AppendEventStart(st.Buffer(), typ, st.Seq())
	b = append(b, `,"response":`...)
	return commit(ctx, st, r.AppendJSON(b), false)
}

func (ev *respEvents) sendItem(ctx context.Context, st dialect.Sink, typ string, output int, it *protocol.OutputItem) error {
	b := protocol.AppendEventStart(st.Buffer(), typ, st.Seq())
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(output), 10)
	b = append(b, `,"item":`...)
	return commit(ctx, st, it.AppendJSON(b), false)
}

func (ev *respEvents) sendPart(ctx context.Context, st dialect.Sink, typ string, msg *protocol.OutputItem) error {
	b := protocol.AppendEventStart(st.Buffer(), typ, st.Seq())
	b = protocol.AppendItemRef(b, msg.ID, ev.base, true)
	b = append(b, `,"part":`...)
	return commit(ctx, st, protocol.AppendContentPart(b, msg.Text, msg.Refusal), false)
}

// sendText is a message's text event: a delta, or the whole text once done. Output text events
// carry (empty) logprobs; refusal events have none.
func (ev *respEvents) sendText(ctx context.Context, st dialect.Sink, typ string, msg *protocol.OutputItem, key, value string) error {
	b := protocol.AppendEventStart(st.Buffer(), typ, st.Seq())
	b = protocol.AppendItemRef(b, msg.ID, ev.base, true)
	b = protocol.AppendMember(b, key, value)
	if !msg.Refusal {
		b = append(b, `,"logprobs":[]`...)
	}
	return commit(ctx, st, b, key == "delta")
}

// sendArguments is a function call's arguments event: a delta, or the whole arguments (with
// the name) once done.
func (ev *respEvents) sendArguments(ctx context.Context, st dialect.Sink, typ string, output int, it *protocol.OutputItem, key, value string) error {
	b := protocol.AppendEventStart(st.Buffer(), typ, st.Seq())
	b = protocol.AppendItemRef(b, it.ID, output, false)
	if key == "arguments" {
		b = protocol.AppendMember(b, "name", it.Name)
	}
	return commit(ctx, st, protocol.AppendMember(b, key, value), key == "delta")
}

// AppendStreamError ends a Responses stream that failed, as OpenAI ends one: an error event.
func (*Dialect) AppendStreamError(buf []byte, e *apierr.Error, seq int) []byte {
	b := protocol.AppendEventStart(buf, "error", seq)
	b = protocol.AppendMember(b, "code", string(e.Code))
	b = protocol.AppendMember(b, "message", e.Message)
	if e.Param != "" {
		b = protocol.AppendMember(b, "param", e.Param)
	} else {
		b = append(b, `,"param":null`...)
	}
	return protocol.AppendEventEnd(b)
}
