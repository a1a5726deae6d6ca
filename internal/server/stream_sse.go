package server

import (
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/dialect"
)

// sseWriter writes a stream's Server-Sent Events, in whatever framing the dialect gives them
// ("data: …" lines, or "event: …" and "data: …"): they are appended to one buffer, which the
// stream reuses, and written together as below.
//
// Every write must go out within the write timeout, and none past the stream's deadline
// (writes, a writeDeadline); before a token frame the stream pauses, and looks whether it must
// end (pace, a pacer). Both are in stream_pace.go, done at most once a frame.
type sseWriter struct {
	pace   pacer         // the clock, the pauses and the checks for an end (stream_pace.go)
	writes writeDeadline // the bound on every write (stream_pace.go)
	w      http.ResponseWriter
	flush  func() error // the writer's own FlushError: one frame less than a ResponseController's
	buf    []byte
	// eventSeq is the number of events committed (the Responses API numbers its events).
	eventSeq int
	// pendingLen is how many bytes of buf are whole frames not yet written (buf may hold a
	// frame being made beyond it), pendingTokens how many of those frames carry a token;
	// headersSent, whether the response headers have gone out.
	pendingLen    int
	pendingTokens int
	headersSent   bool
	tokensSent    int // tokens written: the completion tokens a stream cut short reports
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	rc := http.NewResponseController(w)
	s := &sseWriter{w: w, writes: writeDeadline{conn: rc}, flush: rc.Flush}
	if f, ok := w.(interface{ FlushError() error }); ok {
		s.flush = f.FlushError
	}
	return s
}

// Events are appended to s.buf (pending) and written by writePending: flushPending during the
// stream, writeFinal for the last of them. An event that carries a token (a content or arguments
// delta) is pending until the next token is due (stream.BeforeToken) or the stream ends; the
// events around the tokens — a chat choice's role chunk and finish chunk, the usage chunk,
// [DONE], the lifecycle events of the other dialects — go out with the next write. Nothing is pending
// across a wait: before a simulated delay the stream writes it (stream.waitLatency). So a client
// sees every token before the next is waited for, and a stream makes one write per token, the
// first carrying the headers when it never waits and the last carrying the frames that end it
// and the response's end: fewer system calls for the same bytes (TestStreamWrites,
// TestStreamEndsInOneWrite; BenchmarkStreamLoopback).

// Buffer is the buffer a dialect's events append the next event to (dialect.Sink).
func (s *sseWriter) Buffer() []byte { return s.buf }

// Append makes b, the buffer with frames that are no events, pending (dialect.Sink).
func (s *sseWriter) Append(b []byte) { s.buf, s.pendingLen = b, len(b) }

// Seq is the number of events committed so far (dialect.Sink).
func (s *sseWriter) Seq() int { return s.eventSeq }

// flushPending writes and flushes what is pending: frames, or at least the headers the first
// time.
func (s *sseWriter) flushPending() error { return s.writePending(true) }

// writePending is the one writer of the stream: it writes what is pending, under the write
// deadline, and flushes it to the client when asked; the tokens it carries count as sent once
// they are out.
func (s *sseWriter) writePending(flush bool) error {
	if s.pendingLen == 0 && s.headersSent {
		return nil
	}
	s.writes.arm(s.pace.writeStart())
	if s.pendingLen > 0 {
		if _, err := s.w.Write(s.buf[:s.pendingLen]); err != nil {
			return err
		}
	}
	tokens := s.pendingTokens
	s.buf, s.pendingLen, s.pendingTokens, s.headersSent = s.buf[:0], 0, 0, true
	if flush {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.tokensSent += tokens
	return nil
}

// appendError appends what ends a stream that failed, in its dialect, after what is pending;
// writeFinal writes them.
func (s *sseWriter) appendError(d dialect.Dialect, e *apierr.Error) {
	s.Append(d.AppendStreamError(s.buf, e, s.eventSeq))
}

// writeFinal writes the frames that end the stream, pending (the dialect's last events, or its
// error). They are handed to net/http unflushed: when the handler returns, net/http writes them
// with the response's end (HTTP/1.1's last chunk) in one write, where a flush here would make
// that end a write of its own (TestStreamWrites). The outcome recorded before that write loses
// little: a client that went away is seen by the stream's pauses (its context), not by this
// write, which the kernel takes even from a closed peer; a client that stopped reading is cut
// at the write that blocks, and only a stall within these last few frames is logged completed —
// the write deadline armed here still cuts it (docs/performance.md).
func (s *sseWriter) writeFinal() error { return s.writePending(false) }
