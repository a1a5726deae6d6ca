package server

import (
	"context"
	"strconv"
	"strings"

	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// A Messages stream is streamChat in Anthropic's events, as a Responses stream is in OpenAI's
// (stream_responses.go): the same pacing (the first-chunk latency before message_start, the
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

// msgEvents is a Messages stream's answer as the events still to come, pulled a step at a time
// like respEvents: messagesToFirstToken stops at the first delta and runMessages goes on from there.
type msgEvents struct {
	c      *chatCall
	ch     *generate.Choice
	calls  bool // the answer calls tools, a tool_use block each; else one text block
	blocks int  // the blocks of the answer
	step   int  // what the next send sends (evCreated …, as a Responses stream's)
	k      int  // the block being sent
	j      int  // its next piece: a listed text's, or the call's next argument fragment
	pinged bool
	// A thinking block's: base is 1 when there is one (block 0), thinking its text's pieces
	// still to send, signed whether its signature_delta was sent.
	base     int
	thinking []string
	signed   bool
}

func newMsgEvents(c *chatCall) *msgEvents {
	ch := &c.Result.Choices[0]
	ev := &msgEvents{c: c, ch: ch, blocks: 1}
	if len(ch.ToolCalls) > 0 {
		ev.calls, ev.blocks = true, len(ch.ToolCalls)
	}
	if th := c.Thinking; th != nil {
		ev.base, ev.blocks = 1, ev.blocks+1
		if eatenByReasoning(ch) {
			ev.blocks = 1
		}
		if !th.Redacted && th.Text != "" {
			ev.thinking = strings.SplitAfter(th.Text, ". ")
		}
	}
	return ev
}

// send sends the next step: token reports a delta sent, more whether a step was left to send.
func (ev *msgEvents) send(ctx context.Context, st *stream) (token, more bool, err error) {
	c := ev.c
	switch ev.step {
	case evCreated:
		start := protocol.AnthropicMessage{ID: c.ID, Model: c.Model.ID, Usage: protocol.AnthropicUsage{Input: c.Result.PromptTokens}}
		b := protocol.AppendAnthropicEventStart(st.buf, "message_start")
		b = append(b, `,"message":`...)
		st.buf = start.AppendJSON(b)
		err, ev.step = st.commitEvent(ctx, c, false), evOpen
	case evOpen:
		err, ev.step = ev.open(ctx, st), evDelta
	case evDelta:
		var sent bool
		if sent, token, err = ev.delta(ctx, st); !sent && err == nil {
			ev.step = evClose
		}
	case evClose:
		st.buf = protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.buf, "content_block_stop"), ev.k)
		err = st.commitEvent(ctx, c, false)
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
func (ev *msgEvents) open(ctx context.Context, st *stream) error {
	block := protocol.ContentBlock{}
	switch {
	case ev.k < ev.base:
		block = *ev.c.Thinking
	case ev.calls:
		tc := &ev.ch.ToolCalls[ev.k-ev.base]
		block = protocol.ContentBlock{ToolUse: true, ID: toolUseID(tc.ID), Name: tc.Name}
	}
	b := protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.buf, "content_block_start"), ev.k)
	b = append(b, `,"content_block":`...)
	st.buf = block.AppendJSON(b, true)
	if err := st.commitEvent(ctx, ev.c, false); err != nil || ev.pinged {
		return err
	}
	ev.pinged = true
	st.buf = protocol.AppendAnthropicEventStart(st.buf, "ping")
	return st.commitEvent(ctx, ev.c, false)
}

// delta sends the block's next delta, a token's after the between-chunk latency; sent is false
// when it has none left, token whether it was a token's (a thinking block's are not).
func (ev *msgEvents) delta(ctx context.Context, st *stream) (sent, token bool, err error) {
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
		if piece, ok = nextPiece(ev.ch, &ev.j); !ok {
			return false, false, nil
		}
	}
	if err := st.betweenTokens(ev.c); err != nil {
		return false, false, err
	}
	b := protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.buf, "content_block_delta"), ev.k)
	st.buf = protocol.AppendAnthropicDelta(b, ev.calls, piece)
	return true, true, st.commitEvent(ctx, ev.c, true)
}

// thinkingDelta sends the thinking block's next delta: a piece of its text, then its signature;
// a redacted_thinking block has none.
func (ev *msgEvents) thinkingDelta(ctx context.Context, st *stream) (sent, token bool, err error) {
	th := ev.c.Thinking
	if th.Redacted || ev.signed {
		return false, false, nil
	}
	b := protocol.AppendAnthropicIndex(protocol.AppendAnthropicEventStart(st.buf, "content_block_delta"), ev.k)
	if ev.j < len(ev.thinking) {
		st.buf = protocol.AppendAnthropicThinkingDelta(b, false, ev.thinking[ev.j])
		ev.j++
	} else {
		st.buf = protocol.AppendAnthropicThinkingDelta(b, true, th.Signature)
		ev.signed = true
	}
	return true, false, st.commitEvent(ctx, ev.c, false)
}

// messagesToFirstToken holds an instant Messages stream's events up to its first delta, as chunksToFirstToken
// does a chat stream's frames.
func (st *stream) messagesToFirstToken(ctx context.Context) error {
	for {
		token, more, err := st.msg.send(ctx, st)
		if err != nil || !more || token {
			return err
		}
	}
}

// runMessages writes the events from where messagesToFirstToken left them, then message_delta with the
// settled stop reason and output tokens, and message_stop.
func (st *stream) runMessages(ctx context.Context, c *chatCall) error {
	for {
		_, more, err := st.msg.send(ctx, st)
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
	ch := st.msg.ch
	b := protocol.AppendAnthropicEventStart(st.buf, "message_delta")
	b = append(b, `,"delta":{"stop_reason":`...)
	b = protocol.AppendStringOrNull(b, stopReason(ch))
	b = append(b, `,"stop_sequence":`...)
	b = protocol.AppendStringOrNull(b, ch.StopSequence)
	b = append(b, `},"usage":{"output_tokens":`...)
	st.buf = append(strconv.AppendInt(b, int64(c.Result.CompletionTokens), 10), '}')
	if err := st.commitEvent(ctx, c, false); err != nil {
		return err
	}
	st.buf = protocol.AppendAnthropicEventStart(st.buf, "message_stop")
	if err := st.commitEvent(ctx, c, false); err != nil {
		return err
	}
	if err := st.writeFinal(); err != nil {
		return writeFailed(err)
	}
	return nil
}
