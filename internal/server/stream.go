package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// The stream path: a chat completion with "stream": true, or a Responses API or Anthropic
// Messages call with it, from the handler's call of streamChat to the last byte. Six files:
//
//	stream.go            the states below and the functions that move a stream between them
//	stream_frames.go     what a chat stream sends: frames made one at a time from the result
//	stream_responses.go  what a Responses stream sends: its events, a step at a time
//	stream_messages.go   what a Messages stream sends: Anthropic's events, a step at a time
//	stream_sse.go        sseWriter: appending frames to one buffer, and the one writer of it
//	stream_pace.go       pacer (pauses, the clock, the checks for an end) and writeDeadline
//
// # The contract
//
// streamChat is called once per request, after decoding and generation (c.Result may be lazy:
// generate.Prepare). It writes the status, the headers and every frame itself; the handler
// must not touch w afterwards. It returns only when the stream is over, having recorded exactly
// one terminal outcome (telemetry.End) and the completion tokens the client was sent. No pause
// goes past --stream-timeout and no write waits longer than --write-timeout (the error frame
// that ends a stream early has endGrace of its own).
//
// Code in these files may rely on, and must keep:
//
//   - Frames are appended to sseWriter.buf (appendFrame, appendChunk, appendUsage, appendError;
//     commitEvent for a Responses or Messages event) and reach the connection only through writePending
//     (flushPending, writeFinal). Writing to w directly skips the write deadline and the
//     counters.
//   - Nothing pending waits: before any real delay, waitLatency flushes what is pending
//     (TestStreamWrites). A token waits only until the next token is due (betweenTokens).
//   - pacer.pause is the one place a stream waits or looks at the client, the drain and the
//     stream's deadline. A new wait elsewhere escapes all three.
//   - The counters: pendingLen and pendingTokens (what buf holds, not yet written), tokensSent
//     (tokens written: the usage a stream cut short reports), eventSeq (a Responses event's
//     sequence_number), and telemetry.Chunks() (frames made, which a simulated fault counts).
//   - The goroutine parks in the chunk loop for the whole stream, so the loop keeps a short
//     stack and allocates nothing per token (TestParkedStreamStack, TestBlockedStreamStack,
//     TestToolCallFramesAllocateNothing): the work around the loop is split into calls whose
//     frames are gone while it waits (openStream, endEarly and settle are kept out of line).
//
// # States
//
//	            openStream
//	                │  headers set, nothing written
//	                ▼
//	             opened ──waitLatency(first-chunk delay > 0)──► flushPending: headers out
//	                │                                                      │
//	                │ instant: chunksToFirstToken / eventsToFirstToken /   │
//	                │ messagesToFirstToken                                 │
//	                │ append the frames up to the first token              │
//	                ▼                                                      │
//	          flushPending: headers (+ those frames) in one write ◄────────┘
//	                │
//	                ▼
//	            streaming ◄──┐   runChunks (chat) / runEvents (Responses) /
//	                │        │   runMessages (Messages), per frame:
//	                │        │   beforeFrame: betweenTokens (flushPending, waitLatency)
//	                │        │   and strikeFault; then appendChunk / commitEvent
//	                │        └── next frame
//	                │
//	   last frame   ▼                        errStreamEnded from any state above
//	           writeFinal ──► completed      ──► endEarly: an error frame and [DONE], a cut
//	   ([DONE] unflushed; net/http           connection, or nothing (the client is gone);
//	    writes it with the response's end)   outcome timed_out, aborted or client_disconnected
//
// Both ends call recordAnswer, which settles a lazy answer's finish reason.

// errStreamEnded is why the stream stopped before completing, and what the client is told.
type errStreamEnded struct {
	outcome string
	frame   *apierr.Error // the error frame to send before [DONE]; nil sends nothing more
	cut     bool          // drop the connection instead: a simulated abrupt cut
	stalled bool          // the client stopped reading: a write ran out of time, nothing more can be sent
}

func (e errStreamEnded) Error() string { return "stream ended: " + e.outcome }

// streamChat writes the stream, chat chunks or a Responses or Messages stream's events (the states
// above). Every exit records exactly one terminal outcome: completed, client_disconnected (the
// client went away: generation stops at once), timed_out (the stream ran past
// --stream-timeout: an error frame then [DONE]; or the client stopped reading and a write did
// not go out in time: the connection is cut, error_code request_timeout), or aborted
// (shutdown's drain deadline passed — a shutting_down error frame then [DONE] — or a simulated
// mid-stream fault struck).
func streamChat(ctx context.Context, w http.ResponseWriter, c *chatCall) {
	st := openStream(ctx, w, c)
	w.WriteHeader(http.StatusOK)
	// The headers go from this short stack, before the chunk loop: net/http writes them from a
	// deep frame, which from inside the loop would double the stack of every stream parked in
	// a pause or in a write its client is slow to take (TestParkedStreamStack,
	// TestBlockedStreamStack). They go before the first-chunk latency (waitLatency writes
	// them), and before the error frame of a stream that ends at once; a stream that never
	// waits sends them with its frames (or events) up to its first token: one write fewer
	// (TestStreamWrites).
	err := st.waitLatency(c.Timings.First())
	if err == nil && c.Timings.Instant() {
		if st.msg != nil {
			err = st.messagesToFirstToken(ctx)
		} else if st.namedEvents {
			err = st.eventsToFirstToken(ctx)
		} else {
			err = st.chunksToFirstToken(ctx, c)
		}
	}
	if werr := st.flushPending(); err == nil && werr != nil { // when err is set, endEarly writes why
		err = writeFailed(werr)
	}
	if err == nil && st.msg != nil {
		err = st.runMessages(ctx, c) // Anthropic's Messages (stream_messages.go)
	} else if err == nil && st.namedEvents {
		err = st.runEvents(ctx, c) // the Responses API (stream_responses.go)
	} else if err == nil {
		err = st.runChunks(ctx, c)
	}
	if err != nil {
		st.endEarly(w, c, err)
		return
	}
	st.recordAnswer(c)
	st.telemetry.End(observability.OutcomeCompleted)
}

// recordAnswer gives the record the tokens the stream sent and the answer's finish reason, once
// its last write is done: a stream that ends early may still write the token it held (endEarly).
func (st *stream) recordAnswer(c *chatCall) {
	st.rec.CompletionTokens = st.tokensSent + c.Result.ReasoningTokens // reasoning sends no token
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
	*sseWriter
	frames     *frames     // a chat stream's, pulled by chunksToFirstToken and runChunks
	ev         *respEvents // a Responses stream's, pulled by eventsToFirstToken and runEvents
	msg        *msgEvents  // a Messages stream's, pulled by messagesToFirstToken and runMessages
	rec        *observability.Record
	telemetry  *observability.StreamTelemetry // the stream's metrics and span events; counts the chunks
	faultFired bool                           // the simulated mid-stream fault has struck
}

// openStream prepares the stream and its headers. streamChat sends them at once: net/http
// writes them from a deep frame, and the fewer frames below it the better
// (TestParkedStreamStack).
//
//go:noinline
func openStream(ctx context.Context, w http.ResponseWriter, c *chatCall) *stream {
	rec := observability.RecordFrom(ctx)
	st := &stream{
		sseWriter: newSSEWriter(w, c),
		rec:       rec,
		telemetry: observability.StartStreamTelemetry(ctx, c.h.metrics, c.Span, rec.Model, rec.Start),
	}
	st.pace.streamDeadline = rec.Start.Add(c.h.streamTimeout)
	st.pace.clientGone, st.pace.drainAborted = ctx.Done(), c.h.drain.Aborted()
	st.writes.timeout, st.writes.until = c.h.writeTimeout, st.pace.streamDeadline
	st.namedEvents = c.Echo != nil || c.anthropic() // a stream of named events
	if c.anthropic() {
		st.msg = newMsgEvents(c)
	} else if st.namedEvents {
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

// runChunks writes a chat stream's chunks, the usage chunk and [DONE], pausing as the timings
// say. It returns nil when the stream completed, or why it stopped.
func (st *stream) runChunks(ctx context.Context, c *chatCall) error {
	for f, ok := st.frames.next(); ok; f, ok = st.frames.next() {
		if err := st.beforeFrame(ctx, c, f); err != nil {
			return err
		}
		st.appendChunk(f)
		st.telemetry.Chunk()
	}
	if err := st.strikeFault(ctx, c, true); err != nil { // a stream shorter than after= fails at its end
		return err
	}
	if c.IncludeUsage {
		c.Result.Settle() // every choice was read to its end: this only sums their tokens
		st.appendUsage(usageOf(&c.Result))
		st.telemetry.Chunk()
	}
	if err := st.writeFinal(); err != nil {
		return writeFailed(err)
	}
	return nil
}

// chunksToFirstToken appends the frames of a chat stream that never waits, up to its first
// token, for streamChat to write with the headers; runChunks goes on from there.
func (st *stream) chunksToFirstToken(ctx context.Context, c *chatCall) error {
	for f, ok := st.frames.next(); ok; f, ok = st.frames.next() {
		if err := st.beforeFrame(ctx, c, f); err != nil {
			return err
		}
		st.appendChunk(f)
		st.telemetry.Chunk()
		if f.token {
			return nil
		}
	}
	return nil
}

// beforeFrame is what comes before a frame: betweenTokens before each token but a first frame,
// and the simulated mid-stream fault when its chunk count is reached.
func (st *stream) beforeFrame(ctx context.Context, c *chatCall, f frame) error {
	if f.token && st.telemetry.Chunks() > 0 {
		if err := st.betweenTokens(c); err != nil {
			return err
		}
	}
	return st.strikeFault(ctx, c, false)
}

// betweenTokens comes before a token: the pending token goes out, and then the between-chunk
// latency. A token is pending only until the next is due, so none waits with a delay, and the
// last goes out with the frames that end the stream (the finish and usage chunks, [DONE]; a Responses
// stream's closing events) rather than a write before them (TestStreamWrites).
func (st *stream) betweenTokens(c *chatCall) error {
	if st.pendingTokens > 0 {
		if err := st.flushPending(); err != nil {
			return writeFailed(err)
		}
	}
	return st.waitLatency(c.Timings.Next())
}

// waitLatency waits a simulated delay (pacer.pause). Before a real one, the pending frames go
// out (and the headers, the first time): nothing waits with the delay.
func (st *stream) waitLatency(delay time.Duration) error {
	if delay > 0 {
		if err := st.flushPending(); err != nil {
			return writeFailed(err)
		}
	}
	return st.pace.pause(delay)
}

// strikeFault fires the simulated mid-stream fault, if any, once its chunk count is reached (or
// at the end, when force is set).
func (st *stream) strikeFault(ctx context.Context, c *chatCall, force bool) error {
	f := c.Fault
	if f == nil || st.faultFired || (!force && st.telemetry.Chunks() < f.After) {
		return nil
	}
	st.faultFired = true
	recordFault(ctx, c.Span, c.h.metrics, st.rec.Model, f.Kind)
	if f.Kind == simulation.StreamCut {
		return errStreamEnded{outcome: observability.OutcomeAborted, cut: true}
	}
	return errStreamEnded{outcome: observability.OutcomeAborted, frame: apierr.New(apierr.SimulatedStreamError, "",
		"Simulated mid-stream error: this mock was asked to fail this stream after some chunks. Nothing real failed.")}
}

// endEarly finishes a stream that stopped before completing: the error frame and [DONE] when
// the client is still there, a dropped connection for a simulated cut, and the terminal outcome.
//
//go:noinline
func (st *stream) endEarly(w http.ResponseWriter, c *chatCall, err error) {
	var ended errStreamEnded
	if !errors.As(err, &ended) {
		st.recordAnswer(c)
		st.telemetry.End(observability.OutcomeAborted)
		return
	}
	switch {
	case ended.cut:
		_ = st.flushPending() // the frames counted as chunks go out before the cut
		// Recorded first: cutting may end the handler (net/http's abort panic, over HTTP/2).
		st.recordAnswer(c)
		st.telemetry.End(ended.outcome)
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
		st.pace.lastReading = st.pace.clock() // the reading the write deadline starts from
		st.writes.until = st.pace.lastReading.Add(endGrace)
		if st.appendError(ended.frame) == nil {
			_ = st.writeFinal()
		}
	}
	st.recordAnswer(c)
	st.telemetry.End(ended.outcome)
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
