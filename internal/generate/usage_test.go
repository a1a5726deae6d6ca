package generate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"mockgateway/internal/protocol"
)

func TestCountTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"   ", 0},
		{"a", 1},
		{"a b", 2},
		{"hello", 2},     // 5 runes
		{"tokenizer", 3}, // 9 runes
		{"four", 1},
		{"  spaced\tout\n", 3},              // "spaced" (6 runes) is 2, "out" is 1
		{"héllo wörld", 4},                  // runes, not bytes
		{"You are a helpful assistant.", 8}, // 1+1+1+2+3
		{`{"type":"object"}`, 5},            // 17 runes, one word
		{"日本語のテキスト", 2},                     // 8 runes, one word
	}
	for _, tt := range tests {
		if got := CountTokens(tt.in); got != tt.want {
			t.Errorf("CountTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestUsageWorkedExamples are the examples of the README, computed by hand.
func TestUsageWorkedExamples(t *testing.T) {
	t.Run("echo", func(t *testing.T) {
		req := &protocol.Request{N: 1, Messages: []protocol.Message{
			{Role: "system", Content: "You are a helpful assistant."}, // 4 + 8
			{Role: "user", Content: "Say hello to the world"},         // 4 + 7
		}}
		res := Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, DefaultTokens: 64, Request: req})
		// 3 + 12 + 11; "echo: Say hello to the world" is 6 pieces.
		if res.PromptTokens != 26 || res.CompletionTokens != 6 {
			t.Fatalf("usage %d/%d, want 26/6", res.PromptTokens, res.CompletionTokens)
		}
	})
	t.Run("tools", func(t *testing.T) {
		req := &protocol.Request{N: 1,
			Messages: []protocol.Message{
				{Role: "user", Content: "What is the weather in Paris?"}, // 4 + 8
				{Role: "assistant", ToolCalls: []protocol.ToolCall{ // 4 + 3 + 4
					{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
				{Role: "tool", ToolCallID: "call_1", Content: `{"temp_c":21}`}, // 4 + 4
			},
			Tools: []protocol.Tool{{ // 8 + 3 + 4 + 20 (77 runes)
				Name: "get_weather", Description: "Get the weather",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
			}},
			ParallelToolCalls: true,
		}
		if got := PromptTokens(req); got != 69 {
			t.Fatalf("PromptTokens = %d, want 69", got)
		}
		// After the tool result mock-tools answers with its default length of prose.
		res := Generate(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 24, Request: req})
		if res.PromptTokens != 69 || res.CompletionTokens != 24 {
			t.Fatalf("usage %d/%d, want 69/24", res.PromptTokens, res.CompletionTokens)
		}
	})
	t.Run("names count", func(t *testing.T) {
		req := &protocol.Request{Messages: []protocol.Message{{Role: "user", Name: "alice", Content: ""}}}
		if got := PromptTokens(req); got != 3+4+2 {
			t.Fatalf("PromptTokens = %d, want 9", got)
		}
	})
	t.Run("nil request", func(t *testing.T) {
		if got := PromptTokens(nil); got != 3 {
			t.Fatalf("PromptTokens(nil) = %d, want 3", got)
		}
	})
}

// TestCountTokensMatchesIsSpace: the counter's ASCII shortcut splits words exactly where
// unicode.IsSpace does, for every rune up to U+3000 and the edges around them.
func TestCountTokensMatchesIsSpace(t *testing.T) {
	ref := func(s string) int {
		n, runes := 0, 0
		for _, r := range s {
			if unicode.IsSpace(r) {
				n += (runes + 3) / 4
				runes = 0
				continue
			}
			runes++
		}
		return n + (runes+3)/4
	}
	for r := rune(-1); r <= 0x3000; r++ {
		s := "abcde" + string(r) + "fghij" + string(r)
		if got, want := CountTokens(s), ref(s); got != want {
			t.Fatalf("rune %U: %d tokens, want %d", r, got, want)
		}
	}
}

// BenchmarkCountTokens: a 64 KB ASCII prompt (the per-byte cost of the scaling table's
// prompt dimension).
func BenchmarkCountTokens(b *testing.B) {
	s := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit ", 1150)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		CountTokens(s)
	}
}

// TestImageAndPDFTokens: the documented rule for images and PDFs, at its edges.
func TestImageAndPDFTokens(t *testing.T) {
	for _, tc := range []struct {
		w, h, want int
	}{
		{1, 1, 1},
		{150, 100, 20},
		{750, 1, 1},
		{751, 1, 2},
		{1568, 100, 210},   // the long edge at the bound: not scaled
		{3000, 200, 218},   // scaled to 1568×104
		{100000, 1, 3},     // scaled to 1568×1, the short edge kept at 1
		{1092, 1092, 1590}, // Anthropic's table: about 1,600
		{1568, 1568, 1600}, // over the most an image counts
		{1 << 31, 1 << 31, 1600},
		{0, 100, 1600}, // unknown size
		{0, 0, 1600},
	} {
		if got := ImageTokens(protocol.ImageSize{Width: tc.w, Height: tc.h}); got != tc.want {
			t.Errorf("ImageTokens(%d×%d) = %d, want %d", tc.w, tc.h, got, tc.want)
		}
	}
	for _, tc := range []struct{ size, want int }{{0, 3000}, {9, 3000}, {50000, 3000}, {50001, 6000}, {60000, 6000}} {
		if got := PDFTokens(tc.size); got != tc.want {
			t.Errorf("PDFTokens(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
}
