package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// errStreamEnded is why the stream stopped before completing, and what the client is told.
type errStreamEnded struct {
	outcome string
	frame   *apierr.Error // the error frame to send before [DONE]; nil sends nothing more
	cut     bool          // drop the connection instead: a simulated abrupt cut
	stalled bool          // the client stopped reading: a write ran out of time, nothing more can be sent
}

func (e errStreamEnded) Error() string { return "stream ended: " + e.outcome }

// streamChat writes the stream, chat chunks or a Responses API stream's events. Every exit records exactly one terminal outcome: completed,
// client_disconnected (the client went away: generation stops at once), timed_out (the stream
// ran past --stream-timeout: an error frame then [DONE]; or the client stopped reading and a
// write did not go out in time: the connection is cut, error_code request_timeout), or aborted
// (shutdown's drain deadline passed — a shutting_down error frame then [DONE] — or a simulated
// mid-stream fault struck).
//
// The goroutine parks here between chunks for as long as the stream lasts, so the work is split
// into calls whose frames are gone while it waits: openStream, lead, the chunk loop (run or runEvents), end.
func streamChat(ctx context.Context, w http.ResponseWriter, c *chatCall) {
	st := openStream(ctx, w, c)
	w.WriteHeader(http.StatusOK)
	// The headers go from this short stack, before the chunk loop: net/http writes them from a
	// frame of almost 3 KB, which from inside the loop would double the stack of every stream
	// parked in a pause or in a write its client is slow to take (TestParkedStreamStack,
	// TestBlockedStreamStack). They go before the first-chunk latency (wait writes them), and
	// before the error frame of a stream that ends at once; a stream that never waits sends
	// them with its frames (or events) up to its first token (lead): one write fewer
	// (TestStreamWrites).
	err := st.wait(c.Timings.First())
	if err == nil && c.Timings.Instant() {
		if st.msg != nil {
			err = st.leadMessages(ctx)
		} else if st.events {
			err = st.leadEvents(ctx)
		} else {
			err = st.lead(ctx, c)
		}
	}
	if werr := st.writeHeld(); err == nil && werr != nil { // when err is set, end writes why
		err = writeFailed(werr)
	}
	if err == nil && st.msg != nil {
		err = st.runMessages(ctx, c) // Anthropic's Messages (stream_messages.go)
	} else if err == nil && st.events {
		err = st.runEvents(ctx, c) // the Responses API (stream_responses.go)
	} else if err == nil {
		err = st.run(ctx, c)
	}
	if err != nil {
		st.end(w, c, err)
		return
	}
	st.account(c)
	st.life.End(observability.OutcomeCompleted)
}

// account gives the record the tokens the stream sent and the answer's finish reason, once its
// last write is done: a stream that ends early may still write the token it held (end).
func (st *stream) account(c *chatCall) {
	st.rec.CompletionTokens = st.sent
	settle(c, st.rec)
}

// settle gives the record the answer's finish reason once every choice has one: a lazy choice
// (generate.Prepare) knows it only once read to its end, so one that a stream left unread (the
// client went away, a fault, a timeout) is read there now, without sending or keeping it, and
// the logs, metrics and span report what the whole answer was, as for a JSON response.
//
//go:noinline
func settle(c *chatCall, rec *observability.Record) {
	c.Result.Settle()
	rec.FinishReason = c.Result.Choices[0].FinishReason
	if c.Result.ScriptedUsage() {
		rec.CompletionTokens = c.Result.CompletionTokens // a fixture's own count, as its usage chunk says
	}
}

// stream is one SSE response in progress.
type stream struct {
	*sse
	frames *frames     // a chat stream's, pulled by lead and run
	ev     *respEvents // a Responses stream's, pulled by leadEvents and runEvents
	msg    *msgEvents  // a Messages stream's, pulled by leadMessages and runMessages
	rec    *observability.Record
	life   *observability.StreamTelemetry
	fired  bool // the mid-stream fault has struck
}

// openStream prepares the stream and its headers. streamChat sends them at once: net/http
// writes them from a call with a frame of almost 3 KB, and the fewer frames below it the better.
//
//go:noinline
func openStream(ctx context.Context, w http.ResponseWriter, c *chatCall) *stream {
	rec := observability.RecordFrom(ctx)
	st := &stream{
		sse:  newSSE(w, c),
		rec:  rec,
		life: observability.StartStreamTelemetry(ctx, c.h.metrics, c.Span, rec.Model, rec.Start),
	}
	st.deadline = rec.Start.Add(c.h.streamTimeout)
	st.gone, st.abort = ctx.Done(), c.h.drain.Aborted()
	st.timeout, st.until = c.h.writeTimeout, st.deadline
	st.events = c.Echo != nil || c.anthropic() // a stream of named events
	if c.anthropic() {
		st.msg = newMsgEvents(c)
	} else if st.events {
		st.ev = newRespEvents(c)
	} else {
		st.frames = framesOf(c.Result)
	}

	h := w.Header()
	h["Content-Type"], h["Cache-Control"], h["X-Accel-Buffering"] = streamContentType, noCache, noBuffering
	setProcessingMS(w, rec)
	return st
}

// The headers every stream carries, one slice each for all of them (as answerContentType).
var (
	streamContentType = []string{"text/event-stream; charset=utf-8"}
	noCache           = []string{"no-cache"}
	noBuffering       = []string{"no"}
)

// run writes the chunks, the usage chunk and [DONE], pausing as the timings say. It returns nil
// when the stream completed, or why it stopped.
func (st *stream) run(ctx context.Context, c *chatCall) error {
	for f, ok := st.frames.next(); ok; f, ok = st.frames.next() {
		if err := st.before(ctx, c, f); err != nil {
			return err
		}
		st.holdFrame(f)
		st.life.Chunk()
	}
	if err := st.strike(ctx, c, true); err != nil { // a stream shorter than after= fails at its end
		return err
	}
	if c.IncludeUsage {
		c.Result.Settle() // every choice was read to its end: this only sums their tokens
		st.usage(protocol.NewUsage(c.Result.PromptTokens, c.Result.CompletionTokens))
		st.life.Chunk()
	}
	if err := st.done(); err != nil {
		return writeFailed(err)
	}
	return nil
}

// lead holds the frames of a stream that never waits up to its first token, for streamChat to
// write with the headers.
func (st *stream) lead(ctx context.Context, c *chatCall) error {
	for f, ok := st.frames.next(); ok; f, ok = st.frames.next() {
		if err := st.before(ctx, c, f); err != nil {
			return err
		}
		st.holdFrame(f)
		st.life.Chunk()
		if f.token {
			return nil
		}
	}
	return nil
}

// before is what comes before a frame: tick before each token but a first frame, and the
// simulated mid-stream fault when its chunk count is reached.
func (st *stream) before(ctx context.Context, c *chatCall, f frame) error {
	if f.token && st.life.Chunks() > 0 {
		if err := st.tick(c); err != nil {
			return err
		}
	}
	return st.strike(ctx, c, false)
}

// tick comes before a token: the token held goes out, and then the between-chunk latency. A
// token is held only until the next is due, so none waits with a delay, and the last goes out
// with the frames that end the stream (the finish and usage chunks, [DONE]; a Responses
// stream's closing events) rather than a write before them (TestStreamWrites).
func (st *stream) tick(c *chatCall) error {
	if st.heldTokens > 0 {
		if err := st.writeHeld(); err != nil {
			return writeFailed(err)
		}
	}
	return st.wait(c.Timings.Next())
}

// wait waits a simulated delay. Before a real one, the frames held go out (and the headers, the
// first time): nothing waits with the delay.
func (st *stream) wait(delay time.Duration) error {
	if delay > 0 {
		if err := st.writeHeld(); err != nil {
			return writeFailed(err)
		}
	}
	return st.pause(delay)
}

// strike fires the simulated mid-stream fault, if any, once its chunk count is reached (or at
// the end, when force is set).
func (st *stream) strike(ctx context.Context, c *chatCall, force bool) error {
	f := c.Fault
	if f == nil || st.fired || (!force && st.life.Chunks() < f.After) {
		return nil
	}
	st.fired = true
	recordFault(ctx, c.Span, c.h.metrics, st.rec.Model, f.Kind)
	if f.Kind == simulation.StreamCut {
		return errStreamEnded{outcome: observability.OutcomeAborted, cut: true}
	}
	return errStreamEnded{outcome: observability.OutcomeAborted, frame: apierr.New(apierr.SimulatedStreamError, "",
		"Simulated mid-stream error: this mock was asked to fail this stream after some chunks. Nothing real failed.")}
}

// end finishes a stream that stopped before completing: the error frame and [DONE] when the
// client is still there, a dropped connection for a simulated cut, and the terminal outcome.
//
//go:noinline
func (st *stream) end(w http.ResponseWriter, c *chatCall, err error) {
	var ended errStreamEnded
	if !errors.As(err, &ended) {
		st.account(c)
		st.life.End(observability.OutcomeAborted)
		return
	}
	switch {
	case ended.cut:
		_ = st.writeHeld() // the frames counted as chunks go out before the cut
		// Recorded first: cutting may end the handler (net/http's abort panic, over HTTP/2).
		st.account(c)
		st.life.End(ended.outcome)
		cutConnection(w)
		return
	case ended.stalled:
		// net/http has closed the connection: no frame can reach this client.
		st.rec.SetError(string(apierr.RequestTimeout))
	case ended.outcome == observability.OutcomeTimedOut && ended.frame == nil:
		ended.frame = apierr.New(apierr.StreamTimeout, "", "The stream ran longer than this mock's stream timeout and was ended.")
	case ended.outcome == observability.OutcomeAborted && ended.frame == nil:
		ended.frame = apierr.New(apierr.ShuttingDown, "", "The mock gateway is shutting down; this stream was ended before it completed.")
	}
	if ended.frame != nil {
		st.rec.SetError(string(ended.frame.Code))
		// The client is still there: give it the error frame and [DONE], with time of its
		// own, since the stream deadline may be what ended it.
		st.now = st.clock() // the reading the write deadline starts from
		st.until = st.now.Add(endGrace)
		if st.errorFrame(ended.frame) == nil {
			_ = st.done()
		}
	}
	st.account(c)
	st.life.End(ended.outcome)
}

// endGrace is how long the error frame and [DONE] that end a stream early may take to write.
const endGrace = 5 * time.Second

// writeFailed classifies a failed write: one that ran out of time (the write timeout, or the
// stream's deadline) is a client that stopped reading (timed_out), any other a client that went
// away. Either way net/http has closed the connection and nothing more can be written.
func writeFailed(err error) error {
	// net/http has cancelled ctx by now too, so the error, not ctx, tells the two apart.
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errStreamEnded{outcome: observability.OutcomeTimedOut, stalled: true}
	}
	return errStreamEnded{outcome: observability.OutcomeClientDisconnected}
}
