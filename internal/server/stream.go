package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// frame is one chunk-to-be of one choice, computed before anything is written so that the
// stream is the same pure function of the request as the JSON response.
type frame struct {
	choice int
	delta  protocol.Delta
	finish *string
	token  bool // a content or argument delta: one completion token, preceded by between-chunk latency
}

// framesOf lays out each choice's frames in the contract's order — role chunk, one delta per
// token (tool calls: a header delta, then one per argument fragment), finish chunk — and
// interleaves the choices round-robin, which keeps each choice's own deltas in order.
func framesOf(res generate.Result) []frame {
	perChoice := make([][]frame, len(res.Choices))
	total := 0
	empty := ""
	for i, ch := range res.Choices {
		fs := make([]frame, 0, ch.Tokens()+len(ch.ToolCalls)+2)
		role := protocol.Delta{Role: "assistant", Content: &empty}
		if len(ch.ToolCalls) > 0 {
			// As OpenAI does: no content key for a choice that calls tools, so clients such as
			// the Vercel AI SDK do not record an empty text part before the call.
			role.Content = nil
		}
		fs = append(fs, frame{choice: i, delta: role})
		for _, piece := range ch.Content {
			p := piece
			fs = append(fs, frame{choice: i, delta: protocol.Delta{Content: &p}, token: true})
		}
		for k, tc := range ch.ToolCalls {
			fs = append(fs, frame{choice: i, delta: protocol.Delta{ToolCalls: []protocol.ToolCallDelta{{
				Index: k, ID: tc.ID, Type: "function", Function: protocol.FunctionDelta{Name: tc.Name},
			}}}})
			for _, arg := range tc.Arguments {
				fs = append(fs, frame{choice: i, delta: protocol.Delta{ToolCalls: []protocol.ToolCallDelta{{
					Index: k, Function: protocol.FunctionDelta{Arguments: arg},
				}}}, token: true})
			}
		}
		reason := ch.FinishReason
		fs = append(fs, frame{choice: i, finish: &reason})
		perChoice[i] = fs
		total += len(fs)
	}
	if len(perChoice) == 1 {
		return perChoice[0]
	}
	out := make([]frame, 0, total)
	for step := 0; len(out) < total; step++ {
		for _, fs := range perChoice {
			if step < len(fs) {
				out = append(out, fs[step])
			}
		}
	}
	return out
}

var jsonNull = json.RawMessage("null")

// sse writes Server-Sent Events frames: only "data: <json>\n\n", each flushed at once.
type sse struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	buf   bytes.Buffer
	enc   *json.Encoder
	chunk protocol.Chunk
}

func newSSE(w http.ResponseWriter, c chatCall) *sse {
	s := &sse{w: w, rc: http.NewResponseController(w)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.chunk = protocol.Chunk{
		ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model.ID,
		SystemFingerprint: protocol.SystemFingerprint, ServiceTier: protocol.ServiceTier,
		Choices: make([]protocol.ChunkChoice, 1),
	}
	if c.Request.IncludeUsage {
		s.chunk.Usage = jsonNull
	}
	return s
}

// data encodes v as one frame and flushes it.
func (s *sse) data(v any) error {
	s.buf.Reset()
	s.buf.WriteString("data: ")
	if err := s.enc.Encode(v); err != nil { // Encode ends the JSON with "\n"
		return err
	}
	s.buf.WriteByte('\n')
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sse) frame(f frame) error {
	s.chunk.Choices[0] = protocol.ChunkChoice{Index: f.choice, Delta: f.delta, FinishReason: f.finish}
	return s.data(&s.chunk)
}

func (s *sse) usage(u protocol.Usage) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	s.chunk.Choices = s.chunk.Choices[:0]
	s.chunk.Usage = b
	return s.data(&s.chunk)
}

func (s *sse) errorFrame(e *apierr.Error) error { return s.data(envelopeOf(e)) }

func (s *sse) done() error {
	if _, err := s.w.Write([]byte("data: [DONE]\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// errStreamEnded is why the stream stopped before completing, and what the client is told.
type errStreamEnded struct {
	outcome string
	frame   *apierr.Error // the error frame to send before [DONE]; nil sends nothing more
	cut     bool          // drop the connection instead: a simulated abrupt cut
}

func (e errStreamEnded) Error() string { return "stream ended: " + e.outcome }

// streamChat writes the stream. Every exit records exactly one terminal outcome: completed,
// client_disconnected (the client went away: generation stops at once), timed_out (the stream
// ran past --stream-timeout: an error frame then [DONE]), or aborted (shutdown's drain deadline
// passed — a shutting_down error frame then [DONE] — or a simulated mid-stream fault struck).
func streamChat(ctx context.Context, w http.ResponseWriter, r *http.Request, c chatCall) {
	d := c.Deps
	rec := observability.RecordFrom(ctx)
	life := observability.StartStream(ctx, d.Metrics, c.Span, rec.Model, rec.Start)
	deadline := rec.Start.Add(d.Config.StreamTimeout)
	s := newSSE(w, c)
	// A client that stops reading must not hold the stream past its deadline.
	_ = s.rc.SetWriteDeadline(deadline)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	setProcessingMS(w, rec)
	w.WriteHeader(http.StatusOK)

	// strike fires the simulated mid-stream fault, if any, once its chunk count is reached.
	fired := false
	strike := func(force bool) error {
		f := c.Fault
		if f == nil || fired || (!force && life.Chunks() < f.After) {
			return nil
		}
		fired = true
		recordFault(ctx, c.Span, d, rec.Model, f.Kind)
		if f.Kind == simulation.StreamCut {
			return errStreamEnded{outcome: observability.OutcomeAborted, cut: true}
		}
		return errStreamEnded{outcome: observability.OutcomeAborted, frame: apierr.New(apierr.SimulatedStreamError, "",
			"Simulated mid-stream error: this mock was asked to fail this stream after some chunks. Nothing real failed.")}
	}

	sent := 0 // completion tokens actually delivered, for the access log of a cut stream
	err := func() error {
		if err := pause(ctx, d.Drain, deadline, c.Timings.First()); err != nil {
			return err
		}
		for i, f := range framesOf(c.Result) {
			if f.token && i > 0 {
				if err := pause(ctx, d.Drain, deadline, c.Timings.Next()); err != nil {
					return err
				}
			}
			if err := strike(false); err != nil {
				return err
			}
			if err := s.frame(f); err != nil {
				return writeFailed(deadline)
			}
			life.Chunk()
			if f.token {
				sent++
			}
		}
		if err := strike(true); err != nil { // a stream shorter than after= fails at its end
			return err
		}
		if c.Request.IncludeUsage {
			if err := s.usage(protocol.NewUsage(c.Result.PromptTokens, c.Result.CompletionTokens)); err != nil {
				return writeFailed(deadline)
			}
			life.Chunk()
		}
		if err := s.done(); err != nil {
			return writeFailed(deadline)
		}
		return nil
	}()
	rec.CompletionTokens = sent

	var ended errStreamEnded
	switch {
	case err == nil:
		life.End(observability.OutcomeCompleted)
		return
	case !errors.As(err, &ended):
		life.End(observability.OutcomeAborted)
		return
	}
	switch {
	case ended.cut:
		cutConnection(w)
	case ended.outcome == observability.OutcomeTimedOut && ended.frame == nil:
		ended.frame = apierr.New(apierr.StreamTimeout, "", "The stream ran longer than this mock's stream timeout and was ended.")
	case ended.outcome == observability.OutcomeAborted && ended.frame == nil:
		ended.frame = apierr.New(apierr.ShuttingDown, "", "The mock gateway is shutting down; this stream was ended before it completed.")
	}
	if ended.frame != nil {
		rec.SetError(string(ended.frame.Code))
		// The client is still there: give it the error frame and [DONE], with a little time of
		// its own, since the stream deadline may be what ended it.
		_ = s.rc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if s.errorFrame(ended.frame) == nil {
			_ = s.done()
		}
	}
	life.End(ended.outcome)
}

// pause waits for a simulated delay, returning early with the outcome that interrupted it.
// With no delay it still looks once, so a gone client stops generation at the next chunk.
func pause(ctx context.Context, drain *Drain, deadline time.Time, delay time.Duration) error {
	select {
	case <-ctx.Done():
		return errStreamEnded{outcome: observability.OutcomeClientDisconnected}
	case <-drain.Aborted():
		return errStreamEnded{outcome: observability.OutcomeAborted}
	default:
	}
	if !time.Now().Before(deadline) {
		return errStreamEnded{outcome: observability.OutcomeTimedOut}
	}
	if delay <= 0 {
		return nil
	}
	if until := time.Until(deadline); delay > until {
		delay = until
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		if !time.Now().Before(deadline) {
			return errStreamEnded{outcome: observability.OutcomeTimedOut}
		}
		return nil
	case <-ctx.Done():
		return errStreamEnded{outcome: observability.OutcomeClientDisconnected}
	case <-drain.Aborted():
		return errStreamEnded{outcome: observability.OutcomeAborted}
	}
}

// writeFailed classifies a failed write: past the deadline the client stalled (timed_out), and
// otherwise it went away. Either way nothing more can be written.
func writeFailed(deadline time.Time) error {
	// A write that failed at the deadline is a client that stopped reading; net/http has
	// cancelled ctx by now too, so the deadline, not ctx, tells the two apart.
	if !time.Now().Before(deadline) {
		return errStreamEnded{outcome: observability.OutcomeTimedOut}
	}
	return errStreamEnded{outcome: observability.OutcomeClientDisconnected}
}
