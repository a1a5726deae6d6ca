package chat

import (
	"context"
	"encoding/json"

	"mockgateway/internal/dialect"
	"mockgateway/internal/protocol"
)

// A chat stream is "data: <chunk>" frames, one per frame of frames.go, then the usage chunk when
// stream_options.include_usage asks for it, then "data: [DONE]". Chunks are encoded by
// appending into the stream's buffer (protocol.Chunk.AppendJSON), the members every chunk
// repeats encoded once per stream (Chunk.FixHead).

var jsonNull = json.RawMessage("null")

// events is a chat stream still to be sent: its frames, and the chunk they are encoded in.
type events struct {
	c      *dialect.Call
	frames frames
	chunk  protocol.Chunk
}

func newEvents(c *dialect.Call) *events {
	ev := &events{c: c, frames: framesOf(c.Result)}
	ev.chunk = protocol.Chunk{
		ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model.ID,
		SystemFingerprint: protocol.SystemFingerprint, ServiceTier: protocol.ServiceTier,
		Choices: make([]protocol.ChunkChoice, 1),
	}
	ev.chunk.FixHead() // the members every chunk repeats, encoded once
	if c.IncludeUsage {
		ev.chunk.Usage = jsonNull
	}
	return ev
}

// Next sends the next frame, after the between-chunk latency when it carries a token.
func (ev *events) Next(ctx context.Context, s dialect.Sink) (token, more bool, err error) {
	f, ok := ev.frames.next()
	if !ok {
		return false, false, nil
	}
	if f.token {
		if err := s.BeforeToken(); err != nil {
			return false, true, err
		}
	}
	ev.chunk.Choices[0] = protocol.ChunkChoice{Index: f.choice, Delta: f.delta, FinishReason: f.finish}
	if err := s.Commit(ctx, ev.appendFrame(s.Buffer()), f.token); err != nil {
		return false, true, err
	}
	return f.token, true, nil
}

// End sends the usage chunk (include_usage), which has no choices, and [DONE].
func (ev *events) End(ctx context.Context, s dialect.Sink) error {
	if ev.c.IncludeUsage {
		ev.c.Result.Settle() // every choice was read to its end: this only sums their tokens
		ev.chunk.Choices = ev.chunk.Choices[:0]
		ev.chunk.Usage = usageOf(&ev.c.Result).AppendJSON(nil)
		if err := s.Commit(ctx, ev.appendFrame(s.Buffer()), false); err != nil {
			return err
		}
	}
	s.Append(append(s.Buffer(), "data: [DONE]\n\n"...))
	return nil
}

// appendFrame appends the chunk as one SSE data frame.
func (ev *events) appendFrame(buf []byte) []byte {
	buf = append(buf, "data: "...)
	buf = ev.chunk.AppendJSON(buf)
	return append(buf, "\n\n"...)
}
