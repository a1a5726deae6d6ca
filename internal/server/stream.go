package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/dialect"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// The stream path: a chat call with "stream": true, in any dialect, from the handler's call of
// streamChat to the last byte. The dialect makes the events (dialect.Events, pulled a step at a
// time); this loop paces them, strikes the simulated fault, bounds the stream and writes it.
// Three files:
//
//	stream.go       the states below and the functions that move a stream between them; the
//	                stream as a dialect's events see it (dialect.Sink)
//	stream_sse.go   sseWriter: appending events to one buffer, and the one writer of it
//	stream_pace.go  pacer (pauses, the clock, the checks for an end) and writeDeadline
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
//   - Events are appended to sseWriter.buf (a dialect's, through Commit and Append; the error
//     that ends a stream, appendError) and reach the connection only through writePending
//     (flushPending, writeFinal). Writing to w directly skips the write deadline and the
//     counters.
//   - Nothing pending waits: before any real delay, waitLatency flushes what is pending
//     (TestStreamWrites). A token waits only until the next token is due (BeforeToken).
//   - pacer.pause is the one place a stream waits or looks at the client, the drain and the
//     stream's deadline. A new wait elsewhere escapes all three.
//   - The counters: pendingLen and pendingTokens (what buf holds, not yet written), tokensSent
//     (tokens written: the usage a stream cut short reports), eventSeq (events committed: the
//     Responses API's sequence_number), and telemetry.Chunks() (events made, which a simulated
//     fault counts).
//   - The goroutine parks in the event loop for the whole stream, so the loop keeps a short
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
//	                │ instant: toFirstToken                                │
//	                │ appends the events up to the first token             │
//	                ▼                                                      │
//	          flushPending: headers (+ those events) in one write ◄────────┘
//	                │
//	                ▼
//	            streaming ◄──┐   run: the dialect's Events.Next, per step:
//	                │        │   BeforeToken (flushPending, waitLatency) before a token,
//	                │        │   Commit (strikeFault, then pending) per event
//	                │        └── next step
//	                │
//	   last step    ▼                        errStreamEnded from any state above
//	  Events.End, complete ──► completed     ──► endEarly: the dialect's error event, a cut
//	   (recorded and journaled, then         connection, or nothing (the client is gone);
//	    writeFinal: unflushed, net/http      outcome timed_out, aborted or client_disconnected
//	    writes it with the response's end)
//
// Both ends call recordAnswer, which settles a lazy answer's finish reason.

// errStreamEnded is why the stream stopped before completing, and what the client is told.
type errStreamEnded struct {
	outcome string
	frame   *apierr.Error // the error to end the stream with, in its dialect; nil sends nothing more
	cut     bool          // drop the connection instead: a simulated abrupt cut
	stalled bool          // the client stopped reading: a write ran out of time, nothing more can be sent
}

func (e errStreamEnded) Error() string { return "stream ended: " + e.outcome }

// streamChat writes the stream, the dialect's events (the states above). Every exit records
// exactly one terminal outcome: completed, client_disconnected (the client went away:
// generation stops at once), timed_out (the stream ran past --stream-timeout: an error event;
// or the client stopped reading and a write did not go out in time: the connection is cut,
// error_code request_timeout), or aborted (shutdown's drain deadline passed — a shutting_down
// error event — or a simulated mid-stream fault struck).
func streamChat(ctx context.Context, w http.ResponseWriter, c *chatCall) {
	st := openStream(ctx, w, c)
	w.WriteHeader(http.StatusOK)
	// The headers go from this short stack, before the event loop: net/http writes them from a
	// deep frame, which from inside the loop would double the stack of every stream parked in
	// a pause or in a write its client is slow to take (TestParkedStreamStack,
	// TestBlockedStreamStack). They go before the first-chunk latency (waitLatency writes
	// them), and before the error event of a stream that ends at once; a stream that never
	// waits sends them with its events up to its first token: one write fewer
	// (TestStreamWrites).
	err := st.waitLatency(c.Timings.First())
	if err == nil && c.Timings.Instant() {
		err = st.toFirstToken(ctx)
	}
	if werr := st.flushPending(); err == nil && werr != nil { // when err is set, endEarly writes why
		err = writeFailed(werr)
	}
	if err == nil {
		err = st.run(ctx)
	}
	if err != nil {
		st.endEarly(w, c, err)
		return
	}
	st.complete(c)
}

// complete ends a stream that ran to its end: it records the answer and the completed outcome,
// files the call in the journal, and only then writes the frames that end the stream. Those
// frames can carry the whole answer (the Responses API's response.completed), and net/http
// passes a write longer than its buffer straight to the connection: a client that acts on the
// terminal event, then reads the journal, finds its call (TestStreamEntryFiledBeforeItsEnd).
// The frames still pending count as sent, as a failed last write is not seen anyway
// (writeFinal).
//
//go:noinline
func (st *stream) complete(c *chatCall) {
	st.tokensSent += st.pendingTokens
	st.recordAnswer(c)
	st.tokensSent -= st.pendingTokens
	st.telemetry.End(observability.OutcomeCompleted)
	if note, ok := st.rec.Note.(*callNote); ok {
		note.file()
	}
	_ = st.writeFinal()
}

// toFirstToken appends the events of a stream that never waits, up to its first token, for
// streamChat to write with the headers; run goes on from there.
func (st *stream) toFirstToken(ctx context.Context) error {
	for {
		token, more, err := st.events.Next(ctx, st)
		if err != nil || !more || token {
			return err
		}
	}
}

// run writes the events from where toFirstToken left them and appends the dialect's closing
// events, pausing as the timings say. It returns nil when the stream reached its end (complete
// writes the closing events), or why it stopped.
func (st *stream) run(ctx context.Context) error {
	for {
		_, more, err := st.events.Next(ctx, st)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if err := st.strikeFault(ctx, true); err != nil { // a stream shorter than after= fails at its end
		return err
	}
	return st.events.End(ctx, st) // complete writes the frames that end the stream
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

// stream is one SSE response in progress: the dialect's events, and the call they answer.
type stream struct {
	*sseWriter
	events     dialect.Events
	c          *chatCall
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
		sseWriter: newSSEWriter(w),
		c:         c,
		rec:       rec,
		telemetry: observability.StartStreamTelemetry(ctx, c.h.metrics, c.Span, rec.Model, rec.Start),
	}
	st.pace.streamDeadline = rec.Start.Add(c.h.streamTimeout)
	st.pace.clientGone, st.pace.drainAborted = ctx.Done(), c.h.drain.Aborted()
	st.writes.timeout, st.writes.until = c.h.writeTimeout, st.pace.streamDeadline

	h := w.Header()
	h["Content-Type"], h["Cache-Control"], h["X-Accel-Buffering"] = streamContentType, noCache, noBuffering
	setProcessingMS(w, rec, c.h.dialect.ProcessingHeader())
	st.events = c.reply.Events(h)
	return st
}

// The headers every stream carries, one slice each for all of them (as answerContentType).
var (
	streamContentType = []string{"text/event-stream; charset=utf-8"}
	noCache           = []string{"no-cache"}
	noBuffering       = []string{"no"}
)

// BeforeToken comes before a token: the pending token goes out, and then the between-chunk
// latency. A token is pending only until the next is due, so none waits with a delay, and the
// last goes out with the events that end the stream rather than a write before them
// (TestStreamWrites).
func (st *stream) BeforeToken() error {
	if st.pendingTokens > 0 {
		if err := st.flushPending(); err != nil {
			return writeFailed(err)
		}
	}
	return st.waitLatency(st.c.Timings.Next())
}

// Commit makes the event appended to the buffer pending, unless the simulated mid-stream fault
// strikes first (then the event is dropped, and the events pending before it go out with the
// error). It counts the event as a chunk and numbers the next. A token's goes out when the next
// is due (BeforeToken) or the stream ends.
func (st *stream) Commit(ctx context.Context, b []byte, token bool) error {
	n := 0
	if token {
		n = 1
	}
	return st.CommitTokens(ctx, b, n)
}

// CommitTokens is Commit for an event of n tokens.
func (st *stream) CommitTokens(ctx context.Context, b []byte, n int) error {
	if err := st.strikeFault(ctx, false); err != nil {
		st.buf = b[:st.pendingLen] // the struck event is not sent
		return err
	}
	st.buf, st.pendingLen = b, len(b)
	st.eventSeq++
	st.telemetry.Chunk()
	st.pendingTokens += n
	return nil
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
func (st *stream) strikeFault(ctx context.Context, force bool) error {
	c := st.c
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

// endEarly finishes a stream that stopped before completing: the dialect's error when the
// client is still there, a dropped connection for a simulated cut, and the terminal outcome.
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
		// The client is still there: give it the error, with time of its own, since the
		// stream deadline may be what ended it.
		st.pace.lastReading = st.pace.clock() // the reading the write deadline starts from
		st.writes.until = st.pace.lastReading.Add(endGrace)
		st.appendError(c.h.dialect, ended.frame)
		_ = st.writeFinal()
	}
	st.recordAnswer(c)
	st.telemetry.End(ended.outcome)
}

// endGrace is how long the error that ends a stream early may take to write.
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
