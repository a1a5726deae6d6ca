package generate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"mockgateway/internal/protocol"
)

func userRequest(text string) *protocol.Request {
	return &protocol.Request{N: 1, Messages: []protocol.Message{{Role: "user", Content: text}}}
}

func ptr[T any](v T) *T { return &v }

func chat(req *protocol.Request) Result {
	return Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 40, Request: req})
}

func TestGenerateIsDeterministic(t *testing.T) {
	weather := protocol.Tool{Name: "get_weather", Parameters: json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}`)}
	tests := []struct {
		name string
		in   Input
	}{
		{"echo", Input{Model: "mock-echo", Behavior: BehaviorEcho, DefaultTokens: 10, Request: userRequest("hi there")}},
		{"chat", Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 50, Request: userRequest("hi")}},
		{"tools", Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 20, Request: &protocol.Request{
			N: 3, Messages: userRequest("weather?").Messages, Tools: []protocol.Tool{weather}, ParallelToolCalls: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Generate(tt.in), Generate(tt.in)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
			}
		})
	}
}

// TestGenerateGolden pins a few outputs, so that an accidental change of the word list, the seed
// derivation or the random stream (which would change every answer users see) fails a test.
func TestGenerateGolden(t *testing.T) {
	res := Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 8, Request: userRequest("hello")})
	got := res.Choices[0].Text()
	const want = "Cabin elegant focus detail table calm village horizon."
	if got != want {
		t.Errorf("mock-chat answer to \"hello\" = %q, want %q", got, want)
	}
}

func TestGenerateInputsChangeContent(t *testing.T) {
	base := userRequest("Tell me a story")
	seeded := func(seed int64) *protocol.Request {
		r := userRequest("Tell me a story")
		r.Seed = ptr(seed)
		return r
	}
	tests := []struct {
		name string
		a, b *protocol.Request
	}{
		{"seed absent vs set", base, seeded(1)},
		{"different seeds", seeded(1), seeded(2)},
		{"different messages", base, userRequest("Tell me a poem")},
		{"different roles", base, &protocol.Request{N: 1, Messages: []protocol.Message{{Role: "system", Content: "Tell me a story"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := chat(tt.a).Choices[0].Text(), chat(tt.b).Choices[0].Text()
			if a == b {
				t.Fatalf("same content %q for different inputs", a)
			}
		})
	}
	t.Run("different models", func(t *testing.T) {
		a := Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 20, Request: base})
		b := Generate(Input{Model: "mock-chat-2", Behavior: BehaviorChat, DefaultTokens: 20, Request: base})
		if a.Choices[0].Text() == b.Choices[0].Text() {
			t.Fatal("same content for different models")
		}
	})
}

func TestGenerateChoicesDiffer(t *testing.T) {
	req := userRequest("hello")
	req.N = 3
	res := chat(req)
	if len(res.Choices) != 3 {
		t.Fatalf("got %d choices, want 3", len(res.Choices))
	}
	seen := map[string]bool{}
	total := 0
	for i, c := range res.Choices {
		if c.Index != i {
			t.Errorf("choice %d has Index %d", i, c.Index)
		}
		if seen[c.Text()] {
			t.Errorf("choice %d repeats an earlier choice: %q", i, c.Text())
		}
		seen[c.Text()] = true
		total += c.Tokens()
	}
	if res.CompletionTokens != total {
		t.Errorf("CompletionTokens = %d, want the sum %d", res.CompletionTokens, total)
	}
	// n only adds choices: choice 0 is the same as with n=1.
	if one := chat(userRequest("hello")); one.Choices[0].Text() != res.Choices[0].Text() {
		t.Errorf("choice 0 depends on n")
	}
}

func weatherTools() []protocol.Tool {
	return []protocol.Tool{
		{Name: "get_weather", Parameters: json.RawMessage(
			`{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}`)},
		{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
		{Name: "no_params"},
		{Name: "fourth", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
}

// checkJSONPieces checks rule 7: structural characters are pieces of their own and every other
// piece is one whole literal.
func checkJSONPieces(t *testing.T, pieces []string, isJSON bool) {
	t.Helper()
	if !isJSON {
		return
	}
	for _, p := range pieces {
		switch {
		case p == "":
			t.Errorf("empty piece in %q", pieces)
		case len(p) == 1 && strings.Contains("{}[],:", p):
		case json.Valid([]byte(p)) && !strings.ContainsAny(p[:1], "{["):
		default:
			t.Errorf("piece %q is not one JSON token (pieces %q)", p, pieces)
		}
	}
}
