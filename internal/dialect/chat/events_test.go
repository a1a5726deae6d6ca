package chat

import (
	"bytes"
	"context"
	"testing"

	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
)

// sink is a stream that keeps every event and never waits: what a chat stream sends, without
// the server's pacing.
type sink struct {
	buf []byte
	seq int
}

func (s *sink) Buffer() []byte { return s.buf }
func (s *sink) Commit(_ context.Context, b []byte, _ bool) error {
	s.buf = b
	s.seq++
	return nil
}
func (s *sink) CommitTokens(ctx context.Context, b []byte, _ int) error {
	return s.Commit(ctx, b, true)
}
func (s *sink) Append(b []byte)    { s.buf = b }
func (s *sink) BeforeToken() error { return nil }
func (s *sink) Seq() int           { return s.seq }

var _ dialect.Sink = (*sink)(nil)

// streamBytes is the stream a result makes, frame for frame, usage chunk and [DONE] included.
func streamBytes(t testing.TB, res generate.Result, usage bool) []byte {
	c := &dialect.Call{ID: "chatcmpl-x", Created: 1, Model: &catalog.Model{ID: "mock-chat"}, IncludeUsage: usage, Result: res}
	ev := newEvents(c)
	s := &sink{}
	for {
		_, more, err := ev.Next(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
	}
	if err := ev.End(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s.buf
}

// TestLazyStreamIsTheSame: a stream of lazy prose (generate.Prepare) is byte for byte the
// stream of the materialized answer (generate.Generate) — budgets, the ceiling in pieces and in
// bytes, mock-tools' prose after a tool result — and what Prepare leaves materialized is too.
func TestLazyStreamIsTheSame(t *testing.T) {
	afterTool := []protocol.Message{
		{Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "21C"},
	}
	tools := []protocol.Tool{{Name: "get_weather"}}
	hello := []protocol.Message{{Role: "user", Content: "hello there"}}
	lazy := 0
	for _, c := range []struct {
		behavior    generate.Behavior
		msgs        []protocol.Message
		tools       []protocol.Tool
		def, n, max int
		bytes       int
		stop        []string
	}{
		{generate.BehaviorChat, hello, nil, 32, 1, 0, 0, nil},
		{generate.BehaviorChat, hello, nil, 32, 3, 7, 0, nil},
		{generate.BehaviorChat, hello, nil, 4096, 8, 4096, 8 << 15, nil}, // not known up front: settled as read
		{generate.BehaviorChat, hello, nil, 300, 4, 0, 4 * 150, nil},     // cut by bytes
		{generate.BehaviorTools, afterTool, tools, 24, 2, 0, 0, nil},     // the tool-result lead
		{generate.BehaviorTools, afterTool, tools, 3, 2, 0, 0, nil},      // the lead, cut
		{generate.BehaviorTools, hello, tools, 24, 2, 0, 0, nil},         // tool calls: materialized
		{generate.BehaviorEcho, hello, nil, 24, 2, 0, 0, nil},            // echo: materialized
		{generate.BehaviorChat, hello, nil, 32, 2, 0, 0, []string{"a"}},  // stop: materialized
	} {
		req := &protocol.Request{N: c.n, Messages: c.msgs, Tools: c.tools, MaxTokens: c.max, Stop: c.stop}
		in := generate.Input{Model: "m", Behavior: c.behavior, DefaultTokens: c.def, Request: req, MaxResponseBytes: c.bytes}
		want, prepared := generate.Generate(in), generate.Prepare(in)
		if prepared.Choices[0].Lazy() {
			lazy++
		}
		if got, want := streamBytes(t, prepared, true), streamBytes(t, want, true); !bytes.Equal(got, want) {
			t.Errorf("%+v: the prepared stream differs:\n%.2000s\nwant\n%.2000s", c, got, want)
		}
	}
	if lazy != 6 {
		t.Errorf("%d lazy answers, want 6", lazy)
	}
}

// TestToolCallFramesAllocateNothing: a tool call's frames — its header and each argument
// fragment — are made and encoded without an allocation a frame, as content pieces are.
func TestToolCallFramesAllocateNothing(t *testing.T) {
	res := generate.Result{Choices: []generate.Choice{{FinishReason: "tool_calls", ToolCalls: []generate.ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: generate.PiecesOf(`{"`, `city`, `":"`, `Paris`, `"}`)},
		{ID: "call_2", Name: "get_time", Arguments: generate.PiecesOf(`{}`)},
	}}}}
	c := &dialect.Call{ID: "chatcmpl-x", Created: 1, Model: &catalog.Model{ID: "mock-tools"}, Result: res}
	s, ev := &sink{}, newEvents(c)
	var frames int
	walk := func() {
		ev.frames = framesOf(res)
		frames = 0
		for {
			_, more, _ := ev.Next(context.Background(), s)
			if !more {
				break
			}
			s.buf = s.buf[:0]
			frames++
		}
	}
	walk() // the buffer grows once
	// framesOf is one allocation for the stream (its cursors).
	if n := testing.AllocsPerRun(20, walk); n > 1 {
		t.Errorf("%v allocations for %d frames, want at most 1 (the stream's, none a frame)", n, frames)
	}
	if frames != 1+(1+5)+(1+1)+1 { // role, each call's header and fragments, finish
		t.Errorf("%d frames", frames)
	}
}
