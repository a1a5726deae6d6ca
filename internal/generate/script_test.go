package generate

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"mockgateway/internal/protocol"
)

func TestScript(t *testing.T) {
	text := "It is sunny in Paris today."
	refusal := "I can't help with that."
	args := `{"city":"Paris","days":[1,2],"metric":true,"note":"a \"quoted\", comma"}`
	for _, tt := range []struct {
		name    string
		req     protocol.Request
		s       Scripted
		content []string
		finish  string
		tokens  int
	}{
		{"content", protocol.Request{N: 1}, Scripted{Content: &text},
			[]string{"It", " is", " sunny", " in", " Paris", " today."}, "stop", 6},
		{"cut by max_tokens", protocol.Request{N: 1, MaxTokens: 2}, Scripted{Content: &text},
			[]string{"It", " is"}, "length", 2},
		{"cut by stop", protocol.Request{N: 1, Stop: []string{" in"}}, Scripted{Content: &text},
			[]string{"It", " is", " sunny"}, "stop", 3},
		{"finish override", protocol.Request{N: 1}, Scripted{Content: &text, FinishReason: "length"},
			[]string{"It", " is", " sunny", " in", " Paris", " today."}, "length", 6},
		{"empty content", protocol.Request{N: 1}, Scripted{Content: new(string)}, []string{}, "stop", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := Script(Input{Model: "m", Behavior: BehaviorChat, Request: &tt.req}, tt.s)
			c := res.Choices[0]
			if got := c.Content.Strings(); !slices.Equal(got, tt.content) || c.FinishReason != tt.finish || res.CompletionTokens != tt.tokens {
				t.Errorf("got %q %s %d, want %q %s %d", got, c.FinishReason, res.CompletionTokens, tt.content, tt.finish, tt.tokens)
			}
		})
	}

	t.Run("n choices, tool calls", func(t *testing.T) {
		req := protocol.Request{N: 3}
		res := Script(Input{Model: "m", Behavior: BehaviorTools, Request: &req},
			Scripted{ToolCalls: []ScriptedCall{{Name: "get_weather", Arguments: args}, {Name: "now", Arguments: "{}"}}})
		if len(res.Choices) != 3 {
			t.Fatalf("%d choices", len(res.Choices))
		}
		for i, c := range res.Choices {
			if c.Index != i || len(c.ToolCalls) != 2 || c.FinishReason != "tool_calls" || !c.Content.IsNil() {
				t.Fatalf("choice %d: %+v", i, c)
			}
			tc := c.ToolCalls[0]
			if tc.Name != "get_weather" || tc.Arguments.Text() != args || c.ToolCalls[1].Arguments.Text() != "{}" {
				t.Errorf("choice %d: %s(%s)", i, tc.Name, tc.Arguments.Text())
			}
			if want := []string{`{`, `"city":`, `"Paris"`, `,`, `"days":`, `[`, `1`, `,`, `2`, `]`, `,`, `"metric":`, `true`, `,`, `"note":`, `"a \"quoted\", comma"`, `}`}; !slices.Equal(tc.Arguments.Strings(), want) {
				t.Errorf("argument pieces %q", tc.Arguments.Strings())
			}
			if len(tc.ID) != len("call_")+24 || tc.ID == c.ToolCalls[1].ID { // per choice and call, as Generate's
				t.Errorf("call id %q", tc.ID)
			}
		}
	})

	t.Run("refusal and usage", func(t *testing.T) {
		req := protocol.Request{N: 1}
		res := Script(Input{Model: "m", Behavior: BehaviorChat, Request: &req},
			Scripted{Refusal: &refusal, Usage: &ScriptedUsage{PromptTokens: 12, CompletionTokens: 5}})
		c := res.Choices[0]
		if c.Refusal.Text() != refusal || !c.Content.IsNil() || c.FinishReason != "stop" || res.PromptTokens != 12 || res.CompletionTokens != 5 {
			t.Errorf("got %+v, usage %d/%d", c, res.PromptTokens, res.CompletionTokens)
		}
		if res.Settle(); res.CompletionTokens != 5 || !res.ScriptedUsage() {
			t.Errorf("settled, a scripted usage became %d", res.CompletionTokens)
		}
	})
}

// TestScriptSharesPieces: the n choices of a scripted answer share one copy of its text.
func TestScriptSharesPieces(t *testing.T) {
	text := strings.Repeat("word ", 6000)
	req := protocol.Request{N: 128, Stream: true}
	res := Script(Input{Model: "m", Behavior: BehaviorChat, Request: &req}, Scripted{Content: &text})
	first := res.Choices[0].Content.Text()
	for i, c := range res.Choices {
		if c.Index != i || c.Content.Text() != first {
			t.Fatalf("choice %d differs", i)
		}
		if unsafe.StringData(c.Content.Text()) != unsafe.StringData(first) {
			t.Fatalf("choice %d holds a copy of the text", i)
		}
	}
}
