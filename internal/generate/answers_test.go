package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"mockgateway/internal/protocol"
)

// The tests of this file pin generated answers to their exact bytes — content and refusal
// pieces, tool-call ids, names and argument fragments, finish reasons, token counts — so that a
// change made for speed is seen to change nothing a client receives. The golden values were
// written by the code before the allocation work of issue 16 and must never be regenerated to
// make a speed change pass: a difference here is a changed answer.

// renderResult writes everything a client can see of a result, piece by piece. A lazy choice
// (Prepare) is read to its end first, as a stream reads it.
func renderResult(res Result) string {
	var b strings.Builder
	for i := range res.Choices {
		c := &res.Choices[i]
		var content []string
		if c.Lazy() {
			content = readLazy(c)
		} else {
			content = c.Content.Strings()
		}
		fmt.Fprintf(&b, "choice %d finish=%q tokens=%d nil=%v\n", c.Index, c.FinishReason, c.Tokens(), c.Content.IsNil() && !c.Lazy())
		fmt.Fprintf(&b, "  content %q\n", content)
		if !c.Refusal.IsNil() {
			fmt.Fprintf(&b, "  refusal %q\n", c.Refusal.Strings())
		}
		for _, tc := range c.ToolCalls {
			fmt.Fprintf(&b, "  call %s %s %q\n", tc.ID, tc.Name, tc.Arguments.Strings())
		}
	}
	res.Settle()
	fmt.Fprintf(&b, "usage prompt=%d completion=%d scripted=%v\n", res.PromptTokens, res.CompletionTokens, res.ScriptedUsage())
	return b.String()
}

// loadTestMessage is the load test's user message: mock-echo answers it with 16 pieces.
const loadTestMessage = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"

// echo16 is the load test's JSON request as the server hands it to Generate.
func echo16() Input {
	return Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: userRequest(loadTestMessage),
		TokenCeiling: protocol.DefaultMaxTokensCeiling, ContextWindow: 128000, PromptTokens: PromptTokens(userRequest(loadTestMessage))}
}

// pinnedAnswers are the answers pinned one by one, each kind of output at least once.
func pinnedAnswers() []struct {
	name string
	make func() Result
} {
	weather := weatherTools()
	rich := schemaCases[2].schema // nested objects, pattern, numbers
	afterTool := []protocol.Message{
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: `{"temp":21}`},
	}
	req := func(n, budget int, stop []string, msgs []protocol.Message) *protocol.Request {
		return &protocol.Request{N: n, MaxTokens: budget, Stop: stop, Messages: msgs}
	}
	user := func(s string) []protocol.Message { return userRequest(s).Messages }
	gen := func(in Input) func() Result { return func() Result { return Generate(in) } }
	prep := func(in Input) func() Result { return func() Result { return Prepare(in) } }
	text, refusal := "It is sunny in Paris today.", "I can't help with that."
	withSeed := req(1, 0, nil, user("Tell me a story"))
	withSeed.Seed = ptr(int64(42))
	jsonObject := func(b Behavior, n int) Input {
		r := req(n, 0, nil, user("give me json"))
		r.ResponseFormat.Type = protocol.FormatJSONObject
		return Input{Model: "mock-" + string(b), Behavior: b, DefaultTokens: 12, Request: r}
	}
	parallel := &protocol.Request{N: 2, Messages: user("weather?"), Tools: weather, ParallelToolCalls: true}
	toolBudget := &protocol.Request{N: 1, MaxTokens: 7, Messages: user("weather?"), Tools: weather, ParallelToolCalls: true}
	richTool := &protocol.Request{N: 1, Messages: user("x"), Tools: []protocol.Tool{{Name: "f", Parameters: json.RawMessage(rich)}}}
	unicodeEcho := "  héllo\u3000wörld\u00a0nbsp \u0085next\ttab\n\nend  "
	return []struct {
		name string
		make func() Result
	}{
		{"echo/16-token", gen(echo16())},
		{"echo/16-token/stream", prep(echo16())},
		{"echo/n=3 budget=4", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(3, 4, nil, user(loadTestMessage))})},
		{"echo/stop", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(1, 0, []string{"ve"}, user(loadTestMessage))})},
		{"echo/no user", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(1, 0, nil, nil)})},
		{"echo/empty user", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(2, 0, nil, user(""))})},
		{"echo/unicode spaces", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(1, 0, nil, user(unicodeEcho))})},
		{"echo/byte ceiling mid-rune", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, MaxResponseBytes: 14, Request: req(1, 0, nil, user("ab héllo wörld"))})},
		{"echo/token ceiling", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, TokenCeiling: 5, Request: req(1, 0, nil, user(loadTestMessage))})},
		{"chat/64", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 64, Request: userRequest("Tell me something")})},
		{"chat/default length", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, Request: withSeed})},
		{"chat/n=3 budget=10", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 32, Request: req(3, 10, nil, user("hello"))})},
		{"chat/stop", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 40, Request: req(2, 0, []string{"er", "zz"}, user("hello"))})},
		{"chat/byte ceiling", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 40, MaxResponseBytes: 2 * 37, Request: req(2, 0, nil, user("hello"))})},
		{"chat/context window", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 40, ContextWindow: 20, Request: req(1, 0, nil, user("hello"))})},
		{"chat/stream n=2 budget=5", prep(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 12, Request: req(2, 5, nil, user("hello"))})},
		{"tools/parallel n=2", gen(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 24, Request: parallel})},
		{"tools/budget=7", gen(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 24, Request: toolBudget})},
		{"tools/rich schema", gen(Input{Model: "mock-tools", Behavior: BehaviorTools, Request: richTool})},
		{"tools/after tool", gen(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 9, Request: &protocol.Request{N: 1, Messages: afterTool, Tools: weather}})},
		{"json_object/chat", gen(jsonObject(BehaviorChat, 1))},
		{"json_object/echo n=2", gen(jsonObject(BehaviorEcho, 2))},
		{"json_schema/n=2", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, Request: schemaRequest(rich, 2)})},
		{"json_schema/echo", gen(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: schemaRequest(rich, 1)})},
		{"json_schema/budget=9", gen(Input{Model: "mock-chat", Behavior: BehaviorChat, Request: func() *protocol.Request {
			r := schemaRequest(rich, 1)
			r.MaxTokens = 9
			return r
		}()})},
		{"script/content n=2", func() Result {
			return Script(Input{Model: "m", Behavior: BehaviorChat, Request: req(2, 0, []string{" in"}, nil)}, Scripted{Content: &text})
		}},
		{"script/refusal", func() Result {
			return Script(Input{Model: "m", Behavior: BehaviorChat, Request: req(1, 3, nil, nil)}, Scripted{Refusal: &refusal})
		}},
		{"script/tools n=2", func() Result {
			return Script(Input{Model: "m", Behavior: BehaviorTools, Request: req(2, 0, nil, user("x"))}, Scripted{
				ToolCalls: []ScriptedCall{{Name: "a", Arguments: `{"city":"Paris","days":[1,2]}`}, {Name: "b", Arguments: `{}`}},
				Usage:     &ScriptedUsage{PromptTokens: 5, CompletionTokens: 6}})
		}},
	}
}

const goldenAnswers = "testdata/answers.golden"

// TestAnswersPinned holds the answers of pinnedAnswers to testdata/answers.golden. With
// GENERATE_WRITE_GOLDEN=1 it writes the file instead (only ever from code known to be right).
func TestAnswersPinned(t *testing.T) {
	var b strings.Builder
	for _, a := range pinnedAnswers() {
		fmt.Fprintf(&b, "=== %s\n%s", a.name, renderResult(a.make()))
	}
	got := b.String()
	if os.Getenv("GENERATE_WRITE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(goldenAnswers), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenAnswers, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenAnswers)
	if err != nil {
		t.Fatal(err)
	}
	if got == string(want) {
		return
	}
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gotLines), len(wantLines)) {
		if gotLines[i] != wantLines[i] {
			t.Fatalf("answers differ from %s at line %d:\n got %s\nwant %s", goldenAnswers, i+1, gotLines[i], wantLines[i])
		}
	}
	t.Fatalf("answers differ from %s in length: %d lines, want %d", goldenAnswers, len(gotLines), len(wantLines))
}

// gridDigest is the SHA-256 of the answers to every request of prepareGrid (by Generate and by
// Prepare read to its end) and of every schema of schemaCases (as json_schema content with n=2
// and as tool arguments with a budget): tens of thousands of answers, pinned at once.
const gridDigest = "978e66069a220f16fcbefdc607724f925b679ab8c47799f98e12c983c043a7a0"

func TestAnswerGridPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("the grid takes a few seconds")
	}
	h := sha256.New()
	req := func(n, budget int, stop []string, text string) *protocol.Request {
		return &protocol.Request{N: n, MaxTokens: budget, Stop: stop, Messages: userRequest(text).Messages}
	}
	prepareGrid(func(name string, in Input) bool {
		fmt.Fprintf(h, "=== %s\n%s%s", name, renderResult(Generate(in)), renderResult(Prepare(in)))
		return true
	})
	// Requests of every size around the request seed's buffers (its canonical encoding from a
	// few hundred bytes to several KiB, in messages and in tool parameters).
	for size := 0; size <= 5000; size += 7 {
		msgs := []protocol.Message{{Role: "system", Content: strings.Repeat("s", size)}, {Role: "user", Content: "hi"}}
		fmt.Fprintf(h, "=== size %d\n%s", size, renderResult(Generate(Input{Model: "mock-chat", Behavior: BehaviorChat,
			DefaultTokens: 3, Request: &protocol.Request{N: 1, Messages: msgs}})))
		tools := toolsRequest(`{"type":"object","description":"`+strings.Repeat("d", size)+`"}`, 1)
		fmt.Fprintf(h, "%s", renderResult(Generate(Input{Model: "m", Behavior: BehaviorTools, Request: tools})))
	}
	// Long answers: 4,096 pieces of prose, and a long prompt echoed under the ceiling.
	long := strings.Repeat("lorem ipsum dolor sit amet ", 8000)
	for _, in := range []Input{
		{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: req(2, 0, nil, "hello")},
		{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: req(1, 0, []string{"zenith"}, "hello")},
		{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(4, 0, nil, long)},
		{Model: "mock-echo", Behavior: BehaviorEcho, Request: req(1, 16, nil, long)},
		{Model: "mock-echo", Behavior: BehaviorEcho, MaxResponseBytes: 1000, Request: req(3, 0, nil, long)},
	} {
		fmt.Fprintf(h, "=== long\n%s%s", renderResult(Generate(in)), renderResult(Prepare(in)))
	}
	for _, sc := range schemaCases {
		fmt.Fprintf(h, "=== %s\n%s", sc.name, renderResult(Generate(Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(sc.schema, 2)})))
		tools := toolsRequest(sc.schema, 1)
		tools.MaxTokens = 11
		fmt.Fprintf(h, "%s", renderResult(Generate(Input{Model: "m", Behavior: BehaviorTools, Request: tools})))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != gridDigest {
		t.Fatalf("grid digest %s, want %s: some answer changed", got, gridDigest)
	}
}

// TestSplitPiecesMatchesIsSpace: pieceEnd's ASCII shortcuts split exactly where unicode.IsSpace
// does, for every rune up to U+3000 between, before and after words.
func TestSplitPiecesMatchesIsSpace(t *testing.T) {
	ref := func(s string) []string {
		var pieces []string
		start, inRun := 0, false
		for i, r := range s {
			if unicode.IsSpace(r) && inRun {
				pieces, start = append(pieces, s[start:i]), i
			}
			inRun = !unicode.IsSpace(r)
		}
		if start < len(s) {
			pieces = append(pieces, s[start:])
		}
		return pieces
	}
	for r := rune(-1); r <= 0x3000; r++ {
		c := string(r)
		for _, s := range []string{"ab" + c + "cd" + c, c + "ab" + c + c + "cd", "a\x80" + c + "\xff b"} {
			if got, want := SplitPieces(s), ref(s); !slices.Equal(got, want) {
				t.Fatalf("rune %U: %q, want %q", r, got, want)
			}
		}
	}
}
