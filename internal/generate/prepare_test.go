package generate

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"mockgateway/internal/protocol"
)

// readLazy reads a lazy choice to its end.
func readLazy(c *Choice) []string {
	pieces := []string{}
	for {
		p, ok := c.Next()
		if !ok {
			return pieces
		}
		pieces = append(pieces, p)
	}
}

// prepareGrid is every kind of request Prepare meets: lazy prose (chat, mock-tools' prose with
// and without the tool-result lead, the default length, the ceiling in pieces, in bytes — cutting
// a piece or dropping it —, the context window, the budget), and what it leaves to Generate.
func prepareGrid(yield func(name string, in Input) bool) {
	weather := weatherTools()
	afterTool := []protocol.Message{
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: `{"temp":21}`},
	}
	type kind struct {
		name     string
		behavior Behavior
		msgs     []protocol.Message
		tools    []protocol.Tool
		format   string
		stop     []string
	}
	kinds := []kind{
		{"chat", BehaviorChat, userRequest("hello").Messages, nil, "", nil},
		{"chat-text-format", BehaviorChat, userRequest("hi").Messages, nil, protocol.FormatText, nil},
		{"tools-no-tools", BehaviorTools, userRequest("hello").Messages, nil, "", nil},
		{"tools-after-tool", BehaviorTools, afterTool, weather, "", nil},
		{"tools-calls", BehaviorTools, userRequest("weather?").Messages, weather, "", nil}, // not lazy
		{"echo", BehaviorEcho, userRequest("say this back please").Messages, nil, "", nil}, // not lazy
		{"chat-json", BehaviorChat, userRequest("hello").Messages, nil, protocol.FormatJSONObject, nil},
		{"chat-stop", BehaviorChat, userRequest("hello").Messages, nil, "", []string{"e"}},
	}
	for _, k := range kinds {
		for n := 1; n <= 5; n++ {
			for _, def := range []int{0, 1, 4, 6, 7, 15, 300} {
				for _, perChoice := range []int{0, 1, 9, 41, 400} {
					for _, budget := range []int{0, 1, 6, 1000} {
						for _, ceiling := range []struct{ tokens, window int }{{0, 0}, {3, 0}, {0, 40}} {
							req := &protocol.Request{N: n, Messages: k.msgs, Tools: k.tools, MaxTokens: budget, Stop: k.stop}
							req.ResponseFormat.Type = k.format
							if n == 2 {
								req.Seed = ptr(int64(def))
							}
							in := Input{Model: "mock-" + string(k.behavior), Behavior: k.behavior, DefaultTokens: def,
								Request: req, TokenCeiling: ceiling.tokens, ContextWindow: ceiling.window, MaxResponseBytes: perChoice * n}
							name := fmt.Sprintf("%s/n=%d/default=%d/bytes=%d/budget=%d/ceiling=%v", k.name, n, def, perChoice, budget, ceiling)
							if !yield(name, in) {
								return
							}
						}
					}
				}
			}
		}
	}
}

// TestPrepareIsGenerate: a lazy choice yields exactly Generate's pieces, finish reason and
// tokens, whether they are known up front or once read; what is not lazy is Generate's result.
func TestPrepareIsGenerate(t *testing.T) {
	var lazy, known, cutBytes, total int
	for name, in := range prepareGrid {
		total++
		want, got := Generate(in), Prepare(in)
		if got.PromptTokens != want.PromptTokens || len(got.Choices) != len(want.Choices) {
			t.Fatalf("%s: prompt %d / %d choices, want %d / %d", name, got.PromptTokens, len(got.Choices), want.PromptTokens, len(want.Choices))
		}
		if !got.Choices[0].Lazy() {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: not lazy, and not Generate's result:\n%+v\n%+v", name, got, want)
			}
			continue
		}
		lazy++
		upFront := got.Choices[0].FinishReason != ""
		if upFront {
			known++
			if got.CompletionTokens != want.CompletionTokens {
				t.Fatalf("%s: completion tokens up front %d, want %d", name, got.CompletionTokens, want.CompletionTokens)
			}
		}
		for i := range got.Choices {
			c, w := &got.Choices[i], want.Choices[i]
			if c.Index != w.Index || !c.Content.IsNil() || !c.Lazy() || (c.FinishReason != "") != upFront {
				t.Fatalf("%s: choice %d: %+v", name, i, *c)
			}
			if upFront && (c.FinishReason != w.FinishReason || c.Tokens() != w.Tokens()) {
				t.Fatalf("%s: choice %d up front: %s %d, want %s %d", name, i, c.FinishReason, c.Tokens(), w.FinishReason, w.Tokens())
			}
			pieces := readLazy(c)
			if !slices.Equal(pieces, w.Content.Strings()) {
				t.Fatalf("%s: choice %d pieces\n%q\nwant\n%q", name, i, pieces, w.Content.Strings())
			}
			if c.FinishReason != w.FinishReason || c.Tokens() != w.Tokens() {
				t.Fatalf("%s: choice %d: %s %d, want %s %d", name, i, c.FinishReason, c.Tokens(), w.FinishReason, w.Tokens())
			}
			if c.lazy.cut {
				cutBytes++
			}
			if p, ok := c.Next(); ok {
				t.Fatalf("%s: choice %d: %q after its end", name, i, p)
			}
		}
		got.Settle()
		if got.CompletionTokens != want.CompletionTokens {
			t.Fatalf("%s: completion tokens %d, want %d", name, got.CompletionTokens, want.CompletionTokens)
		}
	}
	t.Logf("%d requests: %d lazy, %d of them known up front, %d choices cut by bytes", total, lazy, known, cutBytes)
	if lazy == 0 || known == 0 || known == lazy || cutBytes == 0 {
		t.Fatal("the grid misses a case")
	}
}

// TestSettle: a stream that ends early still reports Generate's finish reasons and tokens.
func TestSettle(t *testing.T) {
	for name, in := range prepareGrid {
		want, got := Generate(in), Prepare(in)
		for i := range got.Choices {
			for range i { // choice i is read i pieces in
				got.Choices[i].Next()
			}
		}
		got.Settle()
		for i, c := range got.Choices {
			if c.FinishReason != want.Choices[i].FinishReason || c.Tokens() != want.Choices[i].Tokens() {
				t.Fatalf("%s: choice %d settled %s %d, want %s %d", name, i, c.FinishReason, c.Tokens(), want.Choices[i].FinishReason, want.Choices[i].Tokens())
			}
		}
		if got.CompletionTokens != want.CompletionTokens {
			t.Fatalf("%s: completion tokens %d, want %d", name, got.CompletionTokens, want.CompletionTokens)
		}
	}
}

// TestPrepareHoldsPositions: a lazy choice of 4096 pieces holds a few hundred bytes, not its
// text, and its pieces point into the word table instead of being allocated.
func TestPrepareHoldsPositions(t *testing.T) {
	in := Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096,
		Request: &protocol.Request{N: 128, MaxTokens: 4096, Messages: userRequest("hi").Messages}}
	var res Result
	allocs := testing.AllocsPerRun(5, func() { res = Prepare(in) })
	if allocs > 8 {
		t.Errorf("Prepare: %.0f allocations for 128 choices", allocs)
	}
	if size := reflect.TypeFor[lazyProse]().Size(); size > 512 {
		t.Errorf("a lazy choice holds %d bytes", size)
	}
	c := &res.Choices[0]
	if allocs := testing.AllocsPerRun(100, func() { c.Next() }); allocs != 0 {
		t.Errorf("Next: %.1f allocations a piece", allocs)
	}
}
