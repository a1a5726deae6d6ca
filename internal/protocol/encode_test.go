package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// stdJSON is what encoding/json writes for v with SetEscapeHTML(false), as the server's
// encoders did before the hand-written appends, without the Encoder's trailing newline.
func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// encodeSamples builds chunks and completions of every shape the server sends — role, content,
// tool-call header and fragment, finish and usage chunks; text, tool-call and multi-choice
// completions — with s (and t) wherever the server puts text it did not choose.
func encodeSamples(s, t string, n int64) []any {
	usage, _ := json.Marshal(NewUsage(int(n), 7))
	reason := "stop"
	empty := ""
	chunk := func(d Delta, finish *string, u json.RawMessage) *Chunk {
		return &Chunk{ID: "chatcmpl-" + t, Object: "chat.completion.chunk", Created: n, Model: s,
			SystemFingerprint: SystemFingerprint, ServiceTier: ServiceTier,
			Choices: []ChunkChoice{{Index: int(n % 3), Delta: d, FinishReason: finish}}, Usage: u}
	}
	return []any{
		chunk(Delta{Role: "assistant", Content: &empty}, nil, nil),
		chunk(Delta{Content: &s}, nil, json.RawMessage("null")),
		chunk(Delta{Refusal: &s}, nil, nil),
		chunk(Delta{ToolCalls: []ToolCallDelta{{Index: 1, ID: t, Type: "function", Function: FunctionDelta{Name: s}}}}, nil, nil),
		chunk(Delta{ToolCalls: []ToolCallDelta{{Function: FunctionDelta{Arguments: s}}}}, nil, nil),
		chunk(Delta{}, &reason, nil),
		chunk(Delta{Role: "assistant"}, &t, nil),
		&Chunk{ID: s, Object: "chat.completion.chunk", Choices: []ChunkChoice{}, Usage: usage},
		&Chunk{ID: s},
		&Chunk{Choices: []ChunkChoice{{Logprobs: &struct{}{}}}},
		&Completion{ID: s, Object: "chat.completion", Created: -n, Model: t, Usage: NewUsage(1, int(n)),
			SystemFingerprint: SystemFingerprint, ServiceTier: ServiceTier,
			Choices: []CompletionChoice{
				{Index: 0, Message: AssistantMessage{Role: "assistant", Content: &s, Annotations: []struct{}{}}, FinishReason: "length"},
				{Index: 1, Message: AssistantMessage{Role: "assistant", Refusal: &t, ToolCalls: []ToolCallJSON{
					{ID: t, Type: "function", Function: FunctionCall{Name: s, Arguments: t}},
					{ID: s, Type: "function", Function: FunctionCall{Name: t, Arguments: s}},
				}, Annotations: []struct{}{{}, {}}}, Logprobs: &struct{}{}, FinishReason: "tool_calls"},
				{Message: AssistantMessage{}},
			}},
		&Completion{},
	}
}

type appender interface{ AppendJSON([]byte) []byte }

func checkAppendMatches(t *testing.T, s, u string, n int64) {
	t.Helper()
	for i, v := range encodeSamples(s, u, n) {
		got := v.(appender).AppendJSON(nil)
		want := stdJSON(t, v)
		if !bytes.Equal(got, want) {
			t.Fatalf("sample %d (%q, %q):\n got %s\nwant %s", i, s, u, got, want)
		}
		if c, ok := v.(*Chunk); ok { // and with its head encoded in advance, as a stream's are
			fixed := *c
			fixed.FixHead()
			if got := fixed.AppendJSON([]byte("x")); !bytes.Equal(got[1:], want) {
				t.Fatalf("sample %d with FixHead (%q, %q):\n got %s\nwant %s", i, s, u, got[1:], want)
			}
		}
	}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "hello world", `quote " and \ backslash`, "tab\tnl\ncr\rbs\bff\f", "\x00\x01\x1f\x7f",
		"<script>&amp;</script>", "café ☕ 😀", "bad \xff\xfe utf8 \xe2\x82", "line\u2028para\u2029", "\ud7ff\ue000\U0010ffff"} {
		checkAppendMatches(t, s, "x", 1700000000)
	}
}

// FuzzAppendMatchesEncodingJSON: whatever text ends up in a chunk or a completion, the
// hand-written encoding is encoding/json's, byte for byte.
func FuzzAppendMatchesEncodingJSON(f *testing.F) {
	f.Add("hello", "world", int64(0))
	f.Add("\"\\\n\x00<>&", "\u2028\xff", int64(-1))
	f.Add("é😀", "", int64(1<<62))
	f.Fuzz(func(t *testing.T, s, u string, n int64) {
		checkAppendMatches(t, s, u, n)
	})
}

// BenchmarkChunkAppendJSON is one content chunk of a stream, its head encoded per chunk and
// fixed in advance (what the server's streams do).
func BenchmarkChunkAppendJSON(b *testing.B) {
	text := " brown"
	for _, fixed := range []bool{false, true} {
		b.Run(map[bool]string{false: "per-chunk", true: "fixed-head"}[fixed], func(b *testing.B) {
			c := Chunk{ID: "chatcmpl-0123456789abcdef01234567", Object: "chat.completion.chunk", Created: 1764000000,
				Model: "mock-echo", SystemFingerprint: SystemFingerprint, ServiceTier: ServiceTier,
				Choices: []ChunkChoice{{Delta: Delta{Content: &text}}}}
			if fixed {
				c.FixHead()
			}
			buf := make([]byte, 0, 512)
			b.ReportAllocs()
			for b.Loop() {
				buf = c.AppendJSON(buf[:0])
			}
		})
	}
}

// TestFixHeadAllocates: a stream's chunk head is encoded into a buffer sized for it, one
// allocation, and is what encoding it from nothing gives.
func TestFixHeadAllocates(t *testing.T) {
	for _, c := range []Chunk{
		{ID: "chatcmpl-0123456789abcdef01234567", Object: "chat.completion.chunk", Created: 1795370166,
			Model: "mock-echo", SystemFingerprint: SystemFingerprint, ServiceTier: ServiceTier},
		{ID: "x", Object: "chat.completion.chunk", Created: -9223372036854775808, Model: "m"},
	} {
		if n := testing.AllocsPerRun(20, func() { c.FixHead() }); n != 1 {
			t.Errorf("%q: FixHead made %v allocations, want 1", c.ID, n)
		}
		if want := c.appendHead(nil); string(c.head) != string(want) {
			t.Errorf("head %s, want %s", c.head, want)
		}
	}
}
