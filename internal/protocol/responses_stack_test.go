//go:build !race

package protocol

import (
	"runtime/debug"
	"testing"
	"unsafe"
)

// TestResponsesDecodeStack holds the Responses decoder to the stack chat's needs: no Responses
// request here decodes deeper than the deepest of their chat counterparts. Decoding is the deepest
// moment of a stream's life before it parks, and Go keeps a goroutine's stack at the size its
// deepest moment needed, so a Responses stream whose decoding goes deeper than chat's may hold
// 16 KB of stack where chat's holds 8 (internal/server's TestParkedStreamStack,
// docs/performance.md). Content parts and tool outputs took Responses streams there, when input
// items were decoded into items that were copied after, and the echo walked its values through
// one large frame per level.
//
// Not built with -race, whose instrumentation enlarges every frame.
func TestResponsesDecodeStack(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection could shrink the stacks measured
	cases := []struct{ name, responses, chat string }{
		{"string", `{"model":"m","input":"hi"}`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"item", `{"model":"m","input":[{"role":"user","content":"hi"}]}`, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"content part", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{"content parts", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`},
		{"tool round trip", `{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"}]}]}`},
		{"echoed members", `{"model":"m","input":"hi","metadata":{"a":"b"},"reasoning":{"effort":"low"},"text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object"}},"verbosity":"low"}}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"a":"b"},"reasoning_effort":"low","response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"}}}}`},
	}
	chatLeast := 8 << 10 // the least headroom of the chat requests: the deepest one's
	for _, c := range cases {
		body := []byte(c.chat)
		chatLeast = min(chatLeast, stackHeadroom(t, func() {
			if _, e := DecodeChatRequest(body, Limits{}); e != nil {
				t.Error(e)
			}
		}))
	}
	for _, c := range cases {
		body := []byte(c.responses)
		h := stackHeadroom(t, func() {
			if _, _, e := DecodeResponsesRequest(body, Limits{}); e != nil {
				t.Error(e)
			}
		})
		if h < chatLeast {
			t.Errorf("%s: decoding it needs %d bytes more stack than the deepest chat request", c.name, chatLeast-h)
		}
	}
}

// stackHeadroom is how many bytes of frames f can be called below before its goroutine's stack
// grows past 8 KB, to within headroomStep: the less, the deeper f goes.
func stackHeadroom(t *testing.T, f func()) int {
	t.Helper()
	for above := 0; above <= 8<<10; above += headroomStep {
		if growsPast8KB(func() { below(above, f) }) {
			return above
		}
	}
	t.Fatal("the stack never grew past 8 KB")
	return 0
}

const headroomStep = 128

// growsPast8KB reports whether running f grows a goroutine's stack past 8 KB. The goroutine's
// stack is first grown to 8 KB; a stack that grows again is copied, which moves its frames.
func growsPast8KB(f func()) bool {
	moved := make(chan bool)
	go func() {
		below(5<<10, func() {})
		var frame byte
		at := uintptr(unsafe.Pointer(&frame))
		f()
		moved <- uintptr(unsafe.Pointer(&frame)) != at
	}()
	return <-moved
}

var headroomSink byte

// below calls f under frames of about n bytes.
//
//go:noinline
func below(n int, f func()) {
	var frame [headroomStep]byte
	frame[n%headroomStep] = byte(n)
	if n > 0 {
		below(n-headroomStep, f)
	} else {
		f()
	}
	headroomSink = frame[(n+1)%headroomStep]
}
