package anthropic

import (
	"context"
	"strconv"
	"strings"

	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// A Messages stream is the stream loop (internal/server's stream.go) in Anthropic's events, as a
// Responses stream is in OpenAI's: the same pacing (the first-chunk latency before message_start, the
// between-chunk latency before every delta), the same faults, deadlines and outcomes; every
// event counts as a chunk. The deltas spell the answer that a JSON call gets, one per token:
//
//	message_start
//	a reasoning model's thinking block: content_block_start, thinking_delta per sentence (none
//	           for display: omitted), signature_delta, content_block_stop (a redacted_thinking
//	           block: its start and stop only) — not tokens: they are counted, never streamed
//	per block: content_block_start (then one ping, after the first), content_block_delta
//	           (text_delta or input_json_delta) per token, content_block_stop
//	message_delta (stop_reason, stop_sequence, output_tokens), message_stop
//
// A fault after the start ends it with an error event; there is no [DONE].

// msgEvents is a Messages stream's answer as the events still to come, sent a step at a time
// (dialect.Events).
type msgEvents struct {
	c      *dialect.Call
	th     *protocol.ContentBlock // the thinking block, or nil
	ch     *generate.Choice
	calls  bool // the answer calls tools, a tool_use block each; else one text block
	blocks int  // the blocks of the answer
	step   int  // what Next sends next (evCreated …)
	k      int  // the block being sent
	j      int  // its next piece: a listed text's, or the call's next argument fragment
	pinged bool
	// A thinking block's: base is 1 when there is one (block 0), thinking its text's pieces
	// still to send, signed whether its signature_delta was sent.
	base     int
	thinking []string
	signed   bool
}

// The steps of a Messages stream: each sends one or more events, only evDelta a token's.
const (
	evCreated = iota // message_start
	evOpen           // the block's content_block_start (and the one ping)
	evDelta          // one delta
	evClose          // content_block_stop
	evDone           // every block sent
)

func newEvents(r reply) *msgEvents {
	c := r.c
	ch := &c.Result.Choices[0]
	ev := &msgEvents{c: c, th: r.thinking, ch: ch, blocks: 1}
	if len(ch.ToolCalls) > 0 {
		ev.calls, ev.blocks = true, len(ch.ToolCalls)
	}
	if th := r.thinking; th != nil {
		ev.base, ev.blocks = 1, ev.blocks+1
		if dialect.EatenByReasoning(ch) {
			ev.blocks = 1
		}
		if !th.Redacted && th.Text != "" {
			ev.thinking = strings.SplitAfter(th.Text, ". ")
		}
	}
	return ev
}

// Next sends the next step: token reports a delta sent, more whether a step was left to send.
func (ev *msgEvents) Next(ctx context.Context, st dialect.Sink) (token, more bool, err error) {
	c := ev.c
	switch ev.step {
	case evCreated:
		start := protocol.AnthropicMessage{ID: c.ID, Model: c.Model.ID, Usage: protocol.AnthropicUsage{Input: c.Result.PromptTokens}}
		b := protocol.AppendAnthropicEventStart(st.Buffer(), "message_start")
		b = append(b, `,"message":`...)
		err, ev.step = commit(ctx, st, start.AppendJSON(b), false), evOpen
	case evOpen:
		err, ev.step = ev.open(ctx, st), evDelta
	case evDelta:
		var sent bool
		if sent, token, err = ev.delta(ctx, st); !sent && err == nil {
			ev.step = evClose
		}
	case evClose:
		err = commit(ctx, st, protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.Buffer(), "content_block_stop"), ev.k), false)
		if ev.k, ev.j, ev.step = ev.k+1, 0, evDone; ev.k < ev.blocks {
			ev.step = evOpen
		}
	default:
		return false, false, nil
	}
	return token && err == nil, true, err
}

// open sends the block's content_block_start, and after the first one a ping, as Anthropic's
// streams do.
func (ev *msgEvents) open(ctx context.Context, st dialect.Sink) error {
	block := protocol.ContentBlock{}
	switch {
	case ev.k < ev.base:
		block = *ev.th
	case ev.calls:
		tc := &ev.ch.ToolCalls[ev.k-ev.base]
		block = protocol.ContentBlock{ToolUse: true, ID: toolUseID(tc.ID), Name: tc.Name}
	}
	b := protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.Buffer(), "content_block_start"), ev.k)
	b = append(b, `,"content_block":`...)
	if err := commit(ctx, st, block.AppendJSON(b, true), false); err != nil || ev.pinged {
		return err
	}
	ev.pinged = true
	return commit(ctx, st, protocol.AppendAnthropicEventStart(st.Buffer(), "ping"), false)
}

// delta sends the block's next delta, a token's after the between-chunk latency; sent is false
// when it has none left, token whether it was a token's (a thinking block's are not).
func (ev *msgEvents) delta(ctx context.Context, st dialect.Sink) (sent, token bool, err error) {
	if ev.k < ev.base {
		return ev.thinkingDelta(ctx, st)
	}
	var piece string
	if ev.calls {
		args := ev.ch.ToolCalls[ev.k-ev.base].Arguments
		if ev.j >= args.Len() {
			return false, false, nil
		}
		piece = args.At(ev.j)
		ev.j++
	} else {
		var ok bool
		if piece, ok = dialect.NextPiece(ev.ch, &ev.j); !ok {
			return false, false, nil
		}
	}
	if err := st.BeforeToken(); err != nil {
		return false, false, err
	}
	b := protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.Buffer(), "content_block_delta"), ev.k)
	return true, true, commit(ctx, st, protocol.AppendAnthropicDelta(b, ev.calls, piece), true)
}

// thinkingDelta sends the thinking block's next delta: a piece of its text, then its signature;
// a redacted_thinking block has none.
func (ev *msgEvents) thinkingDelta(ctx context.Context, st dialect.Sink) (sent, token bool, err error) {
	th := ev.th
	if th.Redacted || ev.signed {
		return false, false, nil
	}
	b := protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.Buffer(), "content_block_delta"), ev.k)
	if ev.j < len(ev.thinking) {
		b = protocol.AppendAnthropicThinkingDelta(b, false, ev.thinking[ev.j])
		ev.j++
	} else {
		b = protocol.AppendAnthropicThinkingDelta(b, true, th.Signature)
		ev.signed = true
	}
	return true, false, commit(ctx, st, b, false)
}

// End sends message_delta with the settled stop reason and output tokens, and message_stop.
func (ev *msgEvents) End(ctx context.Context, st dialect.Sink) error {
	c := ev.c
	c.Result.Settle() // every piece was read: this only sums the tokens
	ch := ev.ch
	b := protocol.AppendAnthropicEventStart(st.Buffer(), "message_delta")
	b = append(b, `,"delta":{"stop_reason":`...)
	b = protocol.AppendStringOrNull(b, stopReason(ch))
	b = append(b, `,"stop_sequence":`...)
	b = protocol.AppendStringOrNull(b, ch.StopSequence)
	b = append(b, `},"usage":{"output_tokens":`...)
	if err := commit(ctx, st, append(strconv.AppendInt(b, int64(c.Result.CompletionTokens), 10), '}'), false); err != nil {
		return err
	}
	return commit(ctx, st, protocol.AppendAnthropicEventStart(st.Buffer(), "message_stop"), false)
}

// commit ends the event appended to b and commits it (dialect.Sink.Commit).
func commit(ctx context.Context, st dialect.Sink, b []byte, token bool) error {
	return st.Commit(ctx, protocol.AppendEventEnd(b), token)
}
