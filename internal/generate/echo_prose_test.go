package generate

import (
	"slices"
	"strings"
	"testing"

	"mockgateway/internal/protocol"
)

func TestEcho(t *testing.T) {
	tests := []struct {
		name   string
		msgs   []protocol.Message
		want   string
		pieces []string
	}{
		{"last user message", []protocol.Message{
			{Role: "system", Content: "be nice"},
			{Role: "user", Content: "first"},
			{Role: "assistant", Content: "ok"},
			{Role: "user", Content: "hello world"},
		}, "echo: hello world", []string{"echo:", " hello", " world"}},
		{"user before assistant", []protocol.Message{
			{Role: "user", Content: "ping"}, {Role: "assistant", Content: "pong"},
		}, "echo: ping", []string{"echo:", " ping"}},
		{"no user message", []protocol.Message{{Role: "system", Content: "x"}}, "echo:", []string{"echo:"}},
		{"whitespace kept", []protocol.Message{{Role: "user", Content: "a  b\n c "}},
			"echo: a  b\n c ", []string{"echo:", " a", "  b", "\n c", " "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// DefaultTokens does not cut mock-echo.
			res := Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, DefaultTokens: 1,
				Request: &protocol.Request{N: 1, Messages: tt.msgs}})
			c := res.Choices[0]
			if c.Text() != tt.want || !slices.Equal(c.Content.Strings(), tt.pieces) || c.FinishReason != "stop" {
				t.Fatalf("got %q %q %s, want %q %q stop", c.Text(), c.Content.Strings(), c.FinishReason, tt.want, tt.pieces)
			}
			if res.CompletionTokens != len(tt.pieces) {
				t.Errorf("CompletionTokens = %d, want %d", res.CompletionTokens, len(tt.pieces))
			}
		})
	}
}

func TestSplitPieces(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"echo: hello world", []string{"echo:", " hello", " world"}},
		{"  lead", []string{"  lead"}},
		{"trail  ", []string{"trail", "  "}},
		{"   ", []string{"   "}},
		{"a\tb\nc", []string{"a", "\tb", "\nc"}},
		{"héllo\u00a0wörld", []string{"héllo", "\u00a0wörld"}},
	}
	for _, tt := range tests {
		got := SplitPieces(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("SplitPieces(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("SplitPieces(%q) does not join back", tt.in)
		}
	}
}

func TestChatProse(t *testing.T) {
	for _, n := range []int{1, 2, 7, 40, 333} {
		res := Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: n, Request: userRequest("hi")})
		c := res.Choices[0]
		if c.Content.Len() != n || c.FinishReason != "stop" {
			t.Fatalf("n=%d: %d pieces, finish %s", n, c.Content.Len(), c.FinishReason)
		}
		sentence := 0
		for k, p := range c.Content.Strings() {
			w := p
			if k > 0 {
				if !strings.HasPrefix(p, " ") {
					t.Fatalf("piece %d %q has no leading space", k, p)
				}
				w = p[1:]
			}
			end := strings.HasSuffix(w, ".")
			w = strings.TrimSuffix(w, ".")
			if sentence == 0 && (w[0] < 'A' || w[0] > 'Z') {
				t.Fatalf("piece %d %q should start a sentence", k, p)
			}
			if !slices.Contains(words[:], strings.ToLower(w)) {
				t.Fatalf("piece %d %q is not from the word list", k, p)
			}
			sentence++
			if end {
				if sentence > maxSentenceWords || sentence < minSentenceWords && k != n-1 {
					t.Fatalf("sentence of %d words ends at piece %d", sentence, k)
				}
				sentence = 0
			}
		}
		if sentence != 0 {
			t.Fatalf("n=%d: prose does not end a sentence: %q", n, c.Text())
		}
	}
}
