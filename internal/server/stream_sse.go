package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
)

var jsonNull = json.RawMessage("null")

// sse writes Server-Sent Events frames: only "data: <json>\n\n", held and flushed together as
// below. Chunks are encoded by appending into one buffer that the stream reuses
// (protocol.Chunk.AppendJSON), the members every chunk repeats encoded once per stream
// (Chunk.FixHead).
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
	events    bool
	anthropic bool // a Messages stream (stream_messages.go): its error event is Anthropic's
	seq       int
	// held is how many bytes of buf are whole frames not yet written, heldTokens how many of
	// those frames carry a token; headersOut, whether the response headers have gone out.
	held       int
	heldTokens int
	headersOut bool
	sent       int // tokens written: the completion tokens a stream cut short reports
}

func newSSE(w http.ResponseWriter, c *chatCall) *sse {
	rc := http.NewResponseController(w)
	s := &sse{w: w, writeDeadline: writeDeadline{conn: rc}, flush: rc.Flush}
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

// Frames are appended to s.buf and written by writeHeld, the last of them by done. A frame that
// carries a token (a content or arguments delta) is held until the next token is due (stream.tick)
// or the stream ends; the frames around the tokens — a choice's role chunk and finish chunk, the
// usage chunk, [DONE], and a Responses stream's lifecycle events — go out with the next write.
// Nothing is held across a wait: before a simulated delay the stream writes what it holds
// (stream.wait). So a client sees every token before the next is waited for, and a stream makes one
// write per token, the first carrying the headers when it never waits and the last carrying the
// frames that end it and the response's end: fewer system calls for the same bytes (make bench's
// stream figures; TestStreamWrites, TestStreamEndsInOneWrite).

// hold appends one SSE data frame holding the JSON that encode appends.
func (s *sse) hold(encode func([]byte) []byte) {
	s.buf = append(s.buf, "data: "...)
	s.buf = encode(s.buf)
	s.buf = append(s.buf, "\n\n"...)
	s.held = len(s.buf)
}

// writeHeld writes and flushes what is held: frames, or at least the headers the first time.
func (s *sse) writeHeld() error { return s.writeOut(true) }

// writeOut writes what is held, and flushes it to the client when asked; the tokens it carries
// count as sent once they are out.
func (s *sse) writeOut(flush bool) error {
	if s.held == 0 && s.headersOut {
		return nil
	}
	s.arm(s.frameClock())
	if s.held > 0 {
		if _, err := s.w.Write(s.buf[:s.held]); err != nil {
			return err
		}
	}
	tokens := s.heldTokens
	s.buf, s.held, s.heldTokens, s.headersOut = s.buf[:0], 0, 0, true
	if flush {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.sent += tokens
	return nil
}

// holdFrame holds a chunk; stream.tick writes it, when it carries a token, before the next token
// is due.
func (s *sse) holdFrame(f frame) {
	s.chunk.Choices[0] = protocol.ChunkChoice{Index: f.choice, Delta: f.delta, FinishReason: f.finish}
	s.hold(s.chunk.AppendJSON)
	if f.token {
		s.heldTokens++
	}
}

func (s *sse) usage(u protocol.Usage) {
	s.chunk.Choices = s.chunk.Choices[:0]
	s.chunk.Usage = u.AppendJSON(nil)
	s.hold(s.chunk.AppendJSON)
}

// errorFrame is rare (one per failed stream): encoding/json is fine for it, with HTML escaping
// off like every other body. It goes after what is held; done writes them.
func (s *sse) errorFrame(e *apierr.Error) error {
	if s.anthropic {
		s.anthropicErrorEvent(e)
		return nil
	}
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

// done ends the stream: [DONE] (a Responses stream ends with its last event) after what is
// held. They are handed to net/http unflushed: when the handler returns, net/http writes them
// with the response's end (HTTP/1.1's last chunk) in one write, where a flush here would make
// that end a write of its own (TestStreamWrites). The outcome recorded before that write loses
// little: a client that went away is seen by the stream's pauses (its context), not by this
// write, which the kernel takes even from a closed peer; a client that stopped reading is cut
// at the write that blocks, and only a stall within these last few KB is logged completed — the
// write deadline armed here still cuts it (docs/performance.md).
func (s *sse) done() error {
	if !s.events {
		s.buf = append(s.buf, "data: [DONE]\n\n"...)
		s.held = len(s.buf)
	}
	return s.writeOut(false)
}
