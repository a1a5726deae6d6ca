package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
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
// text. The chunk loop pulls them (next) rather than ranging over an iterator, whose closures
// would add two frames below every write the loop makes.
type frames struct {
	cursors []frameCursor
	i       int  // the cursor whose turn it is in this round
	more    bool // a cursor has yielded a frame in this round
}

func framesOf(res generate.Result) *frames {
	fs := &frames{cursors: make([]frameCursor, len(res.Choices))}
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
// refusal's), then each tool call's header and argument fragments, then the finish chunk. A lazy choice's pieces
// come from its Next, until it ends: then the finish chunk, and pos -1.
type frameCursor struct {
	ch     *generate.Choice
	choice int
	pos    int
	empty  string // the role chunk's "content":"" points here
	piece  string // the current content piece, which its content delta points to
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
			return frame{choice: c.choice, delta: protocol.Delta{ToolCalls: []protocol.ToolCallDelta{{
				Index: k, ID: tc.ID, Type: "function", Function: protocol.FunctionDelta{Name: tc.Name},
			}}}}, true
		}
		if pos--; pos < tc.Arguments.Len() {
			return frame{choice: c.choice, delta: protocol.Delta{ToolCalls: []protocol.ToolCallDelta{{
				Index: k, Function: protocol.FunctionDelta{Arguments: tc.Arguments.At(pos)},
			}}}, token: true}, true
		}
		pos -= tc.Arguments.Len()
	}
	if pos == 0 {
		return frame{choice: c.choice, finish: &ch.FinishReason}, true
	}
	return frame{}, false
}

var jsonNull = json.RawMessage("null")

// sse writes Server-Sent Events frames: only "data: <json>\n\n", each flushed at once. Chunks
// are encoded by appending into one buffer that the stream reuses (protocol.Chunk.AppendJSON), the
// members every chunk repeats encoded once per stream (Chunk.FixHead).
//
// Every frame must go out within the write timeout, and none past the stream's deadline
// (writeDeadline); before a token frame the stream pauses, and looks whether it must end
// (pace). Both are in stream_pace.go, done at most once a frame.
type sse struct {
	writeDeadline
	pace
	w     http.ResponseWriter
	flush func() error // the writer's own FlushError: one frame less than a ResponseController's
	buf   []byte
	chunk protocol.Chunk
	// events: a Responses API stream (stream_responses.go), whose frames are named events
	// numbered by seq, whose error is an error event, and which ends without [DONE].
	events bool
	seq    int
	// held is how many bytes of buf are whole frames not yet written; headersOut, whether the
	// response headers have gone out.
	held       int
	headersOut bool
}

func newSSE(w http.ResponseWriter, c *chatCall) *sse {
	rc := http.NewResponseController(w)
	s := &sse{w: w, writeDeadline: writeDeadline{conn: rc}, flush: rc.Flush}
	if f, ok := w.(interface{ FlushError() error }); ok {
		s.flush = f.FlushError
	}
	if c.Echo != nil {
		return s // a Responses API stream: its events are not chunks (stream_responses.go)
	}
	s.chunk = protocol.Chunk{
		ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model.ID,
		SystemFingerprint: protocol.SystemFingerprint, ServiceTier: protocol.ServiceTier,
		Choices: make([]protocol.ChunkChoice, 1),
	}
	s.chunk.FixHead() // the members every chunk repeats, encoded once
	if c.IncludeUsage {
		s.chunk.Usage = jsonNull
	}
	return s
}

// Frames are appended to s.buf and written by writeHeld. A frame that carries a token (a content
// or arguments delta) is written at once; the frames around the tokens — a choice's role chunk
// and finish chunk, the usage chunk, [DONE], and a Responses stream's lifecycle events — are
// held and go out with the next write. Nothing is held across a wait:
// before a simulated delay the stream writes what it holds (stream.wait). So a client sees
// every token when it is made, and a stream makes one write per token plus one at each end
// rather than one per frame: fewer system calls for the same bytes at the same moments
// (make bench's stream figures; TestStreamWrites).

// hold appends one SSE data frame holding the JSON that encode appends.
func (s *sse) hold(encode func([]byte) []byte) {
	s.buf = append(s.buf, "data: "...)
	s.buf = encode(s.buf)
	s.buf = append(s.buf, "\n\n"...)
	s.held = len(s.buf)
}

// writeHeld writes and flushes what is held: frames, or at least the headers the first time.
func (s *sse) writeHeld() error {
	if s.held == 0 && s.headersOut {
		return nil
	}
	s.arm(s.frameClock())
	if s.held > 0 {
		if _, err := s.w.Write(s.buf[:s.held]); err != nil {
			return err
		}
	}
	s.buf, s.held, s.headersOut = s.buf[:0], 0, true
	return s.flush()
}

// frame holds a chunk, and writes it (with what is held) when it carries a token.
func (s *sse) frame(f frame) error {
	s.holdFrame(f)
	if f.token {
		return s.writeHeld()
	}
	return nil
}

func (s *sse) holdFrame(f frame) {
	s.chunk.Choices[0] = protocol.ChunkChoice{Index: f.choice, Delta: f.delta, FinishReason: f.finish}
	s.hold(s.chunk.AppendJSON)
}

func (s *sse) usage(u protocol.Usage) {
	s.chunk.Choices = s.chunk.Choices[:0]
	s.chunk.Usage = u.AppendJSON(nil)
	s.hold(s.chunk.AppendJSON)
}

// errorFrame is rare (one per failed stream): encoding/json is fine for it, with HTML escaping
// off like every other body. It goes after what is held; done writes them.
func (s *sse) errorFrame(e *apierr.Error) error {
	if s.events {
		s.errorEvent(e)
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(envelopeOf(e)); err != nil {
		return err
	}
	s.hold(func(buf []byte) []byte { return append(buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...) })
	return nil
}

// done ends the stream: [DONE] (a Responses stream ends with its last event), and what is held.
func (s *sse) done() error {
	if !s.events {
		s.buf = append(s.buf, "data: [DONE]\n\n"...)
		s.held = len(s.buf)
	}
	return s.writeHeld()
}

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
// into calls whose frames are gone while it waits: openStream, the chunk loop, endStream.
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
	err, tokens := st.wait(c.Timings.First()), 0
	if err == nil && c.Timings.Instant() {
		if st.events {
			tokens, err = st.leadEvents(ctx)
		} else {
			tokens, err = st.lead(ctx, c)
		}
	}
	switch werr := st.writeHeld(); {
	case err != nil: // ended already: end writes why
	case werr != nil:
		err = writeFailed(werr)
	default:
		st.sent += tokens
	}
	if err == nil && st.events {
		err = st.runEvents(ctx, c) // the Responses API (stream_responses.go)
	} else if err == nil {
		err = st.run(ctx, c)
	}
	st.rec.CompletionTokens = st.sent
	settle(c, st.rec)
	if err == nil {
		st.life.End(observability.OutcomeCompleted)
		return
	}
	st.end(w, err)
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
	// leading: the stream is holding its events up to the first delta (leadEvents)
	leading bool
	rec     *observability.Record
	life    *observability.StreamTelemetry
	fired   bool // the mid-stream fault has struck
	sent    int  // completion tokens actually delivered, for the access log of a cut stream
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
	st.events = c.Echo != nil // a Responses API stream
	if st.events {
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
		if err := st.frame(f); err != nil {
			return writeFailed(err)
		}
		st.life.Chunk()
		if f.token {
			st.sent++
		}
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
// write with the headers; it returns how many tokens it holds (0 or 1).
func (st *stream) lead(ctx context.Context, c *chatCall) (int, error) {
	for f, ok := st.frames.next(); ok; f, ok = st.frames.next() {
		if err := st.before(ctx, c, f); err != nil {
			return 0, err
		}
		st.holdFrame(f)
		st.life.Chunk()
		if f.token {
			return 1, nil
		}
	}
	return 0, nil
}

// before is what comes before a frame: the between-chunk latency before each token but a
// first frame, and the simulated mid-stream fault when its chunk count is reached.
func (st *stream) before(ctx context.Context, c *chatCall, f frame) error {
	if f.token && st.life.Chunks() > 0 {
		if err := st.wait(c.Timings.Next()); err != nil {
			return err
		}
	}
	return st.strike(ctx, c, false)
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
func (st *stream) end(w http.ResponseWriter, err error) {
	var ended errStreamEnded
	if !errors.As(err, &ended) {
		st.life.End(observability.OutcomeAborted)
		return
	}
	switch {
	case ended.cut:
		_ = st.writeHeld() // the frames counted as sent go out before the cut
		// Recorded first: cutting may end the handler (net/http's abort panic, over HTTP/2).
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
