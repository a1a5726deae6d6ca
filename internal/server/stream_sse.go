package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
)

var jsonNull = json.RawMessage("null")

// sseWriter writes Server-Sent Events frames: only "data: <json>\n\n" for chat (a Responses
// stream's are "event: …\ndata: …", stream_responses.go), appended to one buffer and written
// together as below. Chunks are encoded by appending into that buffer, which the stream reuses
// (protocol.Chunk.AppendJSON), the members every chunk repeats encoded once per stream
// (Chunk.FixHead).
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
	chunk  protocol.Chunk
	// namedEvents: a stream of named events — the Responses API's (stream_responses.go) or
	// Anthropic's Messages (stream_messages.go) — whose frames are numbered by eventSeq, whose
	// error is an error event, and which ends without [DONE]. anthropic: the Messages one,
	// whose error event is Anthropic's.
	namedEvents bool
	anthropic   bool
	eventSeq    int
	// pendingLen is how many bytes of buf are whole frames not yet written (buf may hold a
	// frame being made beyond it), pendingTokens how many of those frames carry a token;
	// headersSent, whether the response headers have gone out.
	pendingLen    int
	pendingTokens int
	headersSent   bool
	tokensSent    int // tokens written: the completion tokens a stream cut short reports
}

func newSSEWriter(w http.ResponseWriter, c *chatCall) *sseWriter {
	rc := http.NewResponseController(w)
	s := &sseWriter{w: w, writes: writeDeadline{conn: rc}, flush: rc.Flush}
	if f, ok := w.(interface{ FlushError() error }); ok {
		s.flush = f.FlushError
	}
	if c.Echo != nil || c.anthropic() {
		s.anthropic = c.anthropic()
		return s // a stream of events, not chunks (stream_responses.go, stream_messages.go)
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

// Frames are appended to s.buf (pending) and written by writePending: flushPending during the
// stream, writeFinal for the last of them. A frame that carries a token (a content or arguments
// delta) is pending until the next token is due (stream.betweenTokens) or the stream ends; the
// frames around the tokens — a choice's role chunk and finish chunk, the usage chunk, [DONE],
// and a Responses stream's lifecycle events — go out with the next write. Nothing is pending
// across a wait: before a simulated delay the stream writes it (stream.waitLatency). So a client
// sees every token before the next is waited for, and a stream makes one write per token, the
// first carrying the headers when it never waits and the last carrying the frames that end it
// and the response's end: fewer system calls for the same bytes (TestStreamWrites,
// TestStreamEndsInOneWrite; BenchmarkStreamLoopback).

// appendFrame appends one SSE data frame holding the JSON that encode appends.
func (s *sseWriter) appendFrame(encode func([]byte) []byte) {
	s.buf = append(s.buf, "data: "...)
	s.buf = encode(s.buf)
	s.buf = append(s.buf, "\n\n"...)
	s.pendingLen = len(s.buf)
}

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

// appendChunk appends a chat chunk; stream.betweenTokens writes it, when it carries a token,
// before the next token is due.
func (s *sseWriter) appendChunk(f frame) {
	s.chunk.Choices[0] = protocol.ChunkChoice{Index: f.choice, Delta: f.delta, FinishReason: f.finish}
	s.appendFrame(s.chunk.AppendJSON)
	if f.token {
		s.pendingTokens++
	}
}

// appendUsage appends the usage chunk (include_usage), which has no choices.
func (s *sseWriter) appendUsage(u protocol.Usage) {
	s.chunk.Choices = s.chunk.Choices[:0]
	s.chunk.Usage = u.AppendJSON(nil)
	s.appendFrame(s.chunk.AppendJSON)
}

// appendError is rare (one per failed stream): encoding/json is fine for it, with HTML escaping
// off like every other body. It goes after what is pending; writeFinal writes them.
func (s *sseWriter) appendError(e *apierr.Error) error {
	if s.anthropic {
		s.anthropicErrorEvent(e)
		return nil
	}
	if s.namedEvents {
		s.appendErrorEvent(e)
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(envelopeOf(e)); err != nil {
		return err
	}
	s.appendFrame(func(buf []byte) []byte { return append(buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...) })
	return nil
}

// writeFinal ends the stream: [DONE] (a Responses stream ends with its last event) after what is
// pending. They are handed to net/http unflushed: when the handler returns, net/http writes them
// with the response's end (HTTP/1.1's last chunk) in one write, where a flush here would make
// that end a write of its own (TestStreamWrites). The outcome recorded before that write loses
// little: a client that went away is seen by the stream's pauses (its context), not by this
// write, which the kernel takes even from a closed peer; a client that stopped reading is cut
// at the write that blocks, and only a stall within these last few frames is logged completed —
// the write deadline armed here still cuts it (docs/performance.md).
func (s *sseWriter) writeFinal() error {
	if !s.namedEvents {
		s.buf = append(s.buf, "data: [DONE]\n\n"...)
		s.pendingLen = len(s.buf)
	}
	return s.writePending(false)
}
