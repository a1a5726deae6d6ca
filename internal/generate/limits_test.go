package generate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"mockgateway/internal/protocol"
)

// The cases of issue 18: requests that cost unbounded CPU or memory before each answer had a
// ceiling. Each must now stay within the ceiling in tokens and bytes, and say "length" where it
// was cut. Nothing here measures time: the bounds are on what was produced, which is what the
// work is linear in (BenchmarkGenerateHugeSchema shows the linearity).

const testCeiling = protocol.DefaultMaxTokensCeiling

// repeatJSON joins n copies of item (with %d replaced by the index) with commas.
func repeatJSON(n int, item string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strings.ReplaceAll(item, "%d", fmt.Sprint(i)))
	}
	return b.String()
}

func schemaRequest(schema string, n int) *protocol.Request {
	return &protocol.Request{N: n, Messages: userRequest("x").Messages,
		ResponseFormat: protocol.ResponseFormat{Type: protocol.FormatJSONSchema, Schema: json.RawMessage(schema)}}
}

func toolsRequest(parameters string, n int) *protocol.Request {
	return &protocol.Request{N: n, Messages: userRequest("x").Messages,
		Tools: []protocol.Tool{{Name: "f", Parameters: json.RawMessage(parameters)}}}
}

// checkCeiling checks every choice against the default ceiling and returns the total bytes.
func checkCeiling(t *testing.T, res Result, wantCut bool) int {
	t.Helper()
	n := len(res.Choices)
	perChoice := DefaultMaxResponseBytes / n
	total := 0
	for _, c := range res.Choices {
		size := len(c.Text())
		for _, call := range c.ToolCalls {
			size += len(call.Arguments.Text())
		}
		total += size
		if c.Tokens() > testCeiling {
			t.Fatalf("choice %d: %d tokens, ceiling %d", c.Index, c.Tokens(), testCeiling)
		}
		if size > perChoice {
			t.Fatalf("choice %d: %d bytes, ceiling %d", c.Index, size, perChoice)
		}
		if wantCut && c.FinishReason != finishLength {
			t.Fatalf("choice %d: finish_reason %q, want length", c.Index, c.FinishReason)
		}
	}
	if total > DefaultMaxResponseBytes {
		t.Fatalf("answer of %d bytes, ceiling %d", total, DefaultMaxResponseBytes)
	}
	return total
}

var longPattern = strings.Repeat("[a-z]{1000}", 16)

func TestCeilingLongPattern(t *testing.T) {
	schema := `{"type":"object","properties":{"s":{"type":"string","pattern":"` + longPattern + `"}},"required":["s"]}`
	res := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(schema, 1)})
	checkCeiling(t, res, false)
	var v struct{ S string }
	if err := json.Unmarshal([]byte(res.Choices[0].Text()), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.S) != 16000 || strings.Trim(v.S, "abcdefghijklmnopqrstuvwxyz") != "" {
		t.Fatalf("value of %d bytes does not match %s", len(v.S), "[a-z]{1000}×16")
	}
}

func TestCeilingLongPatternArray(t *testing.T) {
	schema := `{"type":"array","minItems":64,"maxItems":64,"items":{"type":"string","pattern":"` + longPattern + `"}}`
	for _, n := range []int{1, 128} {
		res := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(schema, n)})
		total := checkCeiling(t, res, n == 128)
		if n == 1 && total < 64*16000 {
			t.Fatalf("n=1: %d bytes, want the whole array of 64 values", total)
		}
	}
}

func TestCeilingManyPropertiesAndRequired(t *testing.T) {
	props := `{"type":"object","properties":{` + repeatJSON(60000, `"p%d":{"type":"integer"}`) + `}}`
	required := `{"type":"object","required":[` + repeatJSON(80000, `"r%d"`) + `]}`
	both := `{"type":"object","properties":{` + repeatJSON(60000, `"p%d":{"type":"null"}`) +
		`},"required":[` + repeatJSON(80000, `"p%d"`) + `]}`
	for name, schema := range map[string]string{"properties": props, "required": required, "both": both} {
		t.Run(name, func(t *testing.T) {
			res := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(schema, 2)})
			checkCeiling(t, res, true)
			if got := res.Choices[0].Tokens(); got != testCeiling {
				t.Fatalf("%d tokens, want the ceiling %d", got, testCeiling)
			}
		})
	}
}

// grid is a 64×64 array of leaf.
func grid(leaf string) string {
	return `{"type":"object","properties":{"g":{"type":"array","minItems":64,"items":{"type":"array","minItems":64,"items":` +
		leaf + `}}},"required":["g"]}`
}

func TestCeilingLongStrings(t *testing.T) {
	schema := grid(`{"type":"string","minLength":4096}`)
	res := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(schema, 128)})
	checkCeiling(t, res, true)

	tools := Generate(Input{Model: "mock-tools", Behavior: BehaviorTools, Request: toolsRequest(schema, 128)})
	checkCeiling(t, tools, true)
	if c := tools.Choices[5]; len(c.ToolCalls) != 1 || c.ToolCalls[0].Name != "f" {
		t.Fatalf("choice 5 calls %+v", c.ToolCalls)
	}
}

func TestCeilingManyIntegers(t *testing.T) {
	schema := `{"type":"array","minItems":64,"items":{"type":"array","minItems":64,"items":{"type":"array","minItems":64,"items":{"type":"integer"}}}}`
	res := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(schema, 128)})
	checkCeiling(t, res, true)
	if got := res.CompletionTokens; got != 128*testCeiling {
		t.Fatalf("%d completion tokens, want %d", got, 128*testCeiling)
	}
}

func TestCeilingEcho(t *testing.T) {
	prompt := strings.Repeat("lorem ipsum dolor sit amet ", 40000) // ~1 MB
	req := userRequest(prompt)
	req.N = 128
	res := Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req})
	checkCeiling(t, res, true)
	if got := res.Choices[0].Tokens(); got != testCeiling {
		t.Fatalf("%d tokens, want the ceiling %d", got, testCeiling)
	}
	if !strings.HasPrefix(prompt, strings.TrimPrefix(res.Choices[127].Text(), "echo: ")) {
		t.Fatal("the echo is not a prefix of the prompt")
	}

	// One word of a megabyte is one piece: the byte ceiling cuts it.
	req = userRequest(strings.Repeat("x", 1<<20))
	req.N = 128
	res = Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req})
	checkCeiling(t, res, true)
	if got := len(res.Choices[0].Text()); got != DefaultMaxResponseBytes/128 {
		t.Fatalf("%d bytes, want the choice's share %d", got, DefaultMaxResponseBytes/128)
	}

	// json_object wraps the whole prompt in one string: cut the same way.
	req.ResponseFormat.Type = protocol.FormatJSONObject
	res = Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req})
	checkCeiling(t, res, true)
}

// TestCeilingEveryFormat: the ceiling cuts every model and format, also without a budget and
// whatever the model's default length.
func TestCeilingEveryFormat(t *testing.T) {
	const ceiling = 50
	schema := `{"type":"object","properties":{"a":{"type":"array","minItems":64,"items":{"type":"string"}}}}`
	tests := []struct {
		name string
		in   Input
	}{
		{"echo", Input{Behavior: BehaviorEcho, Request: userRequest(strings.Repeat("word ", 100))}},
		{"prose", Input{Behavior: BehaviorChat, DefaultTokens: 1000, Request: userRequest("x")}},
		{"tool answer prose", Input{Behavior: BehaviorTools, DefaultTokens: 1000, Request: &protocol.Request{
			Messages: []protocol.Message{{Role: "tool", Content: "r"}}, Tools: weatherTools()}}},
		{"json_schema", Input{Behavior: BehaviorChat, Request: schemaRequest(schema, 1)}},
		{"tool arguments", Input{Behavior: BehaviorTools, Request: toolsRequest(schema, 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Model, tt.in.TokenCeiling = "m", ceiling
			c := Generate(tt.in).Choices[0]
			if c.Tokens() != ceiling || c.FinishReason != finishLength {
				t.Fatalf("%d tokens, finish %q; want %d and length", c.Tokens(), c.FinishReason, ceiling)
			}
		})
	}
	// json_object is one string piece: the byte ceiling cuts it.
	req := userRequest("x")
	req.ResponseFormat.Type = protocol.FormatJSONObject
	c := Generate(Input{Model: "m", Behavior: BehaviorChat, DefaultTokens: 5000, Request: req,
		MaxResponseBytes: 300}).Choices[0]
	if len(c.Text()) != 300 || c.FinishReason != finishLength || !strings.HasPrefix(c.Text(), `{"answer":"`) {
		t.Fatalf("got %d bytes, finish %q", len(c.Text()), c.FinishReason)
	}
}

// TestCeilingKeepsPrefixes: a budget below the ceiling cuts the same text, so the answer is a
// prefix of the one without a budget, and stop still wins where it occurs first.
func TestCeilingKeepsPrefixes(t *testing.T) {
	schema := grid(`{"type":"string","minLength":50}`)
	full := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(schema, 1)}).Choices[0]
	for _, budget := range []int{1, 7, 100, testCeiling - 1} {
		req := schemaRequest(schema, 1)
		req.MaxTokens = budget
		c := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: req}).Choices[0]
		if c.Tokens() != budget || !strings.HasPrefix(full.Text(), c.Text()) || c.FinishReason != finishLength {
			t.Fatalf("budget %d: %d tokens, finish %q, prefix %v", budget, c.Tokens(), c.FinishReason,
				strings.HasPrefix(full.Text(), c.Text()))
		}
	}
	req := schemaRequest(schema, 1)
	req.Stop = []string{full.Content.At(20)}
	c := Generate(Input{Model: "m", Behavior: BehaviorChat, Request: req}).Choices[0]
	if c.FinishReason != finishStop || !strings.HasPrefix(full.Text(), c.Text()) || c.Tokens() > 20 {
		t.Fatalf("stop: %d tokens, finish %q", c.Tokens(), c.FinishReason)
	}
}

// TestByteCeilingCutsWholeRunes: the byte ceiling never splits a character.
func TestByteCeilingCutsWholeRunes(t *testing.T) {
	req := userRequest(strings.Repeat("é", 100)) // 2 bytes each, one piece
	c := Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req, MaxResponseBytes: 16}).Choices[0]
	if got := c.Text(); got != "echo: "+strings.Repeat("é", 5) || c.FinishReason != finishLength {
		t.Fatalf("got %q, finish %q", got, c.FinishReason)
	}
}

func TestContextWindowCapsTheAnswer(t *testing.T) {
	req := userRequest("hello there") // 3 + 4 + 2 + 2 = 11 prompt tokens
	in := Input{Model: "m", Behavior: BehaviorChat, DefaultTokens: 100, Request: req, ContextWindow: 20}
	res := Generate(in)
	if res.PromptTokens != 11 || res.CompletionTokens != 9 || res.Choices[0].FinishReason != finishLength {
		t.Fatalf("prompt %d, completion %d, finish %q; want 11, 9, length", res.PromptTokens,
			res.CompletionTokens, res.Choices[0].FinishReason)
	}
	in.PromptTokens = 15 // counted by the caller: not counted again
	if res := Generate(in); res.PromptTokens != 15 || res.CompletionTokens != 5 {
		t.Fatalf("prompt %d, completion %d; want 15, 5", res.PromptTokens, res.CompletionTokens)
	}
}

func TestCheckContext(t *testing.T) {
	tests := []struct {
		prompt, budget, window int
		want                   string
	}{
		{100, 0, 0, ""},
		{128000, 0, 128000, ""},
		{127000, 1000, 128000, ""},
		{128001, 0, 128000, "This model's maximum context length is 128000 tokens. However, your messages resulted in 128001 tokens. Please reduce the length of the messages."},
		{127001, 1000, 128000, "This model's maximum context length is 128000 tokens. However, you requested 128001 tokens (127001 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."},
		// A budget at the int's limit: the sum must not wrap around to fit.
		{10, math.MaxInt, 128000, "This model's maximum context length is 128000 tokens. However, you requested 9223372036854775817 tokens (10 in the messages, 9223372036854775807 in the completion). Please reduce the length of the messages or completion."},
		{math.MaxInt, math.MaxInt, 128000, "This model's maximum context length is 128000 tokens. However, you requested 18446744073709551614 tokens (9223372036854775807 in the messages, 9223372036854775807 in the completion). Please reduce the length of the messages or completion."},
	}
	for _, tt := range tests {
		e := CheckContext(tt.prompt, tt.budget, tt.window)
		switch {
		case tt.want == "" && e != nil:
			t.Errorf("%+v: unexpected %v", tt, e)
		case tt.want != "" && (e == nil || e.Message != tt.want || e.Param != "messages" || e.Status != 400 ||
			e.Code != "context_length_exceeded"):
			t.Errorf("%+v: got %+v", tt, e)
		}
	}
}

// TestWorkBounded drives the schema generator directly on hostile schemas with a small ceiling
// and bounds what it did: the bytes it wrote (at most one piece past the ceiling, and a piece
// is clipped too) and the work units it spent.
func TestWorkBounded(t *testing.T) {
	const maxPieces, maxBytes = 4096, 64 << 10
	bigString := `"` + strings.Repeat("x", 1<<20) + `"`
	schemas := map[string]string{
		"const of a megabyte, 64 times": `{"type":"array","minItems":64,"items":{"const":` + bigString + `}}`,
		"enum of a megabyte":            `{"type":"array","minItems":64,"items":{"enum":[` + bigString + `]}}`,
		"long property name":            `{"type":"object","properties":{` + bigString + `:{"type":"null"}}}`,
		"long number literal":           `{"const":` + strings.Repeat("1", 1<<20) + `}`,
		"allOf of 5000 branches":        `{"allOf":[` + repeatJSON(5000, `{"properties":{"p%d":{"type":"null"}}}`) + `]}`,
		"long patterns":                 `{"type":"array","minItems":64,"items":{"type":"string","pattern":"` + longPattern + `"}}`,
		"long strings":                  grid(`{"type":"string","minLength":4096}`),
		"unique large items": `{"type":"array","minItems":64,"uniqueItems":true,"items":{"type":"array","minItems":64,` +
			`"items":{"const":"` + strings.Repeat("y", 4000) + `"}}}`,
	}
	for name, schema := range schemas {
		t.Run(name, func(t *testing.T) {
			v, err := parseJSON([]byte(schema))
			if err != nil {
				t.Fatal(err)
			}
			var r rng
			r.seed(subSeed([32]byte{}, "work", 0, 0))
			var b pieceBuilder
			b.limit(maxPieces, maxBytes)
			g := schemaGen{root: v, r: &r, b: &b, cache: newRequestCache()}
			g.value(v, genCtx{})
			if len(b.buf) > maxBytes+maxPatternBytes+16 {
				t.Errorf("wrote %d bytes under a ceiling of %d", len(b.buf), maxBytes)
			}
			if g.work > maxWork+2*5000 {
				t.Errorf("spent %d units of work, budget %d", g.work, maxWork)
			}
		})
	}
}
