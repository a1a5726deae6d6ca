package google

import (
	"context"

	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
)

// A Gemini stream (streamGenerateContent?alt=sse) is data: lines only, each a whole
// GenerateContentResponse, separated by a blank line as Google's are ("\r\n\r\n"): no event:
// lines, comments or end marker, which the Go SDK's reader refuses. Every response has a
// content with its role and parts, as the JS SDK's chat keeps a streamed turn only so:
//
//	a thinking model's thought part (includeThoughts), not a token
//	one response per text token, or per function call (a call comes whole: a token)
//	the candidate's last: its finishReason, and after the last candidate's, usageMetadata
//
// A text made as it is sent (a lazy choice) does not know its last token until it is past it:
// its finish goes in one more response, with an empty text part, as Google's streams end too.
// Candidates come one after another, each with its index. A fault after the start ends the
// stream with data: {"error":{…}} (errors.go).

// separator ends every data line, as Google's streams do.
const separator = "\r\n\r\n"

// events is a Gemini stream still to be sent.
type events struct {
	r    reply
	i    int  // the candidate being sent
	step int  // what Next sends of it
	j    int  // its next piece or call
	last bool // the candidate's finish was sent with its last token
}

// The steps of a candidate.
const (
	stThought = iota // the thought part
	stBody           // a token: a text piece or a function call
	stFinish         // the finishing response of a text made as it was sent
)

func newEvents(r reply) *events { return &events{r: r} }

// Next sends the next response: token reports a token's, more whether one was left to send.
func (ev *events) Next(ctx context.Context, s dialect.Sink) (token, more bool, err error) {
	choices := ev.r.c.Result.Choices
	for ev.i < len(choices) {
		ch := &choices[ev.i]
		switch ev.step {
		case stThought:
			ev.step = stBody
			if ev.r.thought != "" {
				b := ev.open(s.Buffer())
				b = appendThought(b, ev.r.thought)
				return false, true, s.Commit(ctx, ev.close(b, ch, false), false)
			}
		case stBody:
			if ev.last {
				ev.next()
				continue
			}
			sent, err := ev.body(ctx, s, ch)
			if sent || err != nil {
				return sent, true, err
			}
		case stFinish:
			b := ev.close(appendText(ev.open(s.Buffer()), ""), ch, true)
			ev.next()
			return false, true, s.Commit(ctx, b, false)
		}
	}
	return false, false, nil
}

// body sends the candidate's next token; false when it has none left (the step moves on).
func (ev *events) body(ctx context.Context, s dialect.Sink, ch *generate.Choice) (bool, error) {
	if calls := ch.ToolCalls; len(calls) > 0 {
		if ev.j >= len(calls) {
			ev.next()
			return false, nil
		}
		if err := beforeToken(s); err != nil {
			return false, err
		}
		k := ev.j
		ev.j++
		ev.last = ev.j == len(calls)
		b := appendCall(ev.open(s.Buffer()), &calls[k], ev.r.signatureOf(ev.i, k))
		// A call comes whole: its arguments' tokens, as the usage counts them.
		return true, s.CommitTokens(ctx, ev.close(b, ch, ev.last), calls[k].Arguments.Len())
	}
	if ch.Lazy() {
		piece, ok := dialect.NextPiece(ch, &ev.j)
		if !ok {
			ev.step = stFinish
			return false, nil
		}
		if err := beforeToken(s); err != nil {
			return false, err
		}
		b := appendText(ev.open(s.Buffer()), piece)
		return true, s.Commit(ctx, ev.close(b, ch, false), true)
	}
	pieces := ch.Content
	if !ch.Refusal.IsNil() {
		pieces = ch.Refusal
	}
	if pieces.Len() == 0 {
		ev.step = stFinish
		return false, nil
	}
	if err := beforeToken(s); err != nil {
		return false, err
	}
	piece := pieces.At(ev.j)
	ev.j++
	ev.last = ev.j == pieces.Len()
	b := appendText(ev.open(s.Buffer()), piece)
	return true, s.Commit(ctx, ev.close(b, ch, ev.last), true)
}

// beforeToken is the between-chunk latency before a token's response, but for the stream's first
// response: the other dialects open with an event that is no token (a role chunk,
// response.created, message_start), and the first-chunk latency is all that comes before it. A
// Gemini stream opens with its first token, which the first-chunk latency alone precedes.
func beforeToken(s dialect.Sink) error {
	if s.Seq() == 0 {
		return nil
	}
	return s.BeforeToken()
}

// next moves to the next candidate.
func (ev *events) next() { ev.i, ev.step, ev.j, ev.last = ev.i+1, stThought, 0, false }

// End: a Gemini stream has no end marker; its last response carried the usage.
func (*events) End(context.Context, dialect.Sink) error { return nil }

// open starts a response up to its candidate's first part.
func (ev *events) open(buf []byte) []byte {
	buf = append(buf, `data: {"candidates":[{"content":{"parts":[`...)
	return buf
}

// close ends the response: the candidate (its finish when final is set), the usage after the
// last candidate's finish, the tail, the separator.
func (ev *events) close(buf []byte, ch *generate.Choice, final bool) []byte {
	c := ev.r.c
	finish := ""
	if final {
		finish = ch.FinishReason
		if finish == "" {
			finish = "stop"
		}
	}
	buf = appendCandidateEnd(buf, finish, ch.Index)
	buf = append(buf, ']')
	if final && ev.i == len(c.Result.Choices)-1 {
		c.Result.Settle() // every candidate was read to its end: this only sums their tokens
		buf = appendUsage(buf, &c.Result)
	}
	buf = appendTail(buf, c)
	return append(buf, separator...)
}
