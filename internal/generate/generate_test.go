package generate

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"mockgateway/internal/protocol"
)

func userRequest(text string) *protocol.ChatRequest {
	return &protocol.ChatRequest{N: 1, Messages: []protocol.Message{{Role: "user", Content: text}}}
}

func ptr[T any](v T) *T { return &v }

func chat(req *protocol.ChatRequest) Result {
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
		{"tools", Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 20, Request: &protocol.ChatRequest{
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
	seeded := func(seed int64) *protocol.ChatRequest {
		r := userRequest("Tell me a story")
		r.Seed = ptr(seed)
		return r
	}
	tests := []struct {
		name string
		a, b *protocol.ChatRequest
	}{
		{"seed absent vs set", base, seeded(1)},
		{"different seeds", seeded(1), seeded(2)},
		{"different messages", base, userRequest("Tell me a poem")},
		{"different roles", base, &protocol.ChatRequest{N: 1, Messages: []protocol.Message{{Role: "system", Content: "Tell me a story"}}}},
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
				Request: &protocol.ChatRequest{N: 1, Messages: tt.msgs}})
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

func TestStopAndBudget(t *testing.T) {
	full := chat(userRequest("cut me")).Choices[0]
	text := full.Text()
	// Pick stop strings from the uncut output, so the test knows where they occur.
	stopAt := func(k int) string { return strings.TrimSpace(full.Content.At(k))[:3] }

	tests := []struct {
		name       string
		stop       []string
		budget     int
		wantPieces int
		wantFinish string
	}{
		{"no cut", nil, 0, 40, "stop"},
		{"budget above length", nil, 100, 40, "stop"},
		{"budget equal to length", nil, 40, 40, "stop"},
		{"budget cuts", nil, 5, 5, "length"},
		{"stop cuts", []string{stopAt(10)}, 0, -1, "stop"},
		{"stop before budget", []string{stopAt(3)}, 20, -1, "stop"},
		{"budget before stop", []string{stopAt(30)}, 4, 4, "length"},
		{"empty stop ignored", []string{""}, 0, 40, "stop"},
		{"stop not found", []string{"§§"}, 0, 40, "stop"},
		{"stop at the start", []string{full.Content.At(0)[:2]}, 0, 0, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := userRequest("cut me")
			req.Stop, req.MaxTokens = tt.stop, tt.budget
			c := chat(req).Choices[0]
			if c.FinishReason != tt.wantFinish {
				t.Errorf("finish = %s, want %s", c.FinishReason, tt.wantFinish)
			}
			if tt.wantPieces >= 0 && c.Content.Len() != tt.wantPieces {
				t.Errorf("%d pieces, want %d", c.Content.Len(), tt.wantPieces)
			}
			if c.Content.IsNil() {
				t.Error("Content is nil for a text choice")
			}
			// Cuts never change the words: the output is a prefix of the uncut one, piece by
			// piece (only the last piece may be shortened by a stop).
			got := c.Text()
			if !strings.HasPrefix(text, got) {
				t.Fatalf("%q is not a prefix of the uncut %q", got, text)
			}
			for k := range max(c.Content.Len()-1, 0) {
				if c.Content.At(k) != full.Content.At(k) {
					t.Fatalf("piece %d changed: %q vs %q", k, c.Content.At(k), full.Content.At(k))
				}
			}
			for _, s := range tt.stop {
				if s != "" && strings.Contains(got, s) {
					t.Errorf("output %q contains stop %q", got, s)
				}
			}
			if tt.budget > 0 && c.Content.Len() > tt.budget {
				t.Errorf("%d pieces exceed the budget %d", c.Content.Len(), tt.budget)
			}
		})
	}
}

func TestStopSpanningPieces(t *testing.T) {
	req := userRequest("hello brave new world")
	req.Stop = []string{"o b", "new"} // "o b" spans " hello" and " brave"; the earliest wins
	c := Generate(Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: req}).Choices[0]
	if want := []string{"echo:", " hell"}; !slices.Equal(c.Content.Strings(), want) || c.FinishReason != "stop" {
		t.Fatalf("got %q %s, want %q stop", c.Content.Strings(), c.FinishReason, want)
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

func TestToolCalls(t *testing.T) {
	user := []protocol.Message{{Role: "user", Content: "weather in Paris?"}}
	afterTool := []protocol.Message{
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: `{"temp_c":21,"secret":"do-not-repeat"}`},
	}
	tests := []struct {
		name      string
		tools     []protocol.Tool
		choice    protocol.ToolChoice
		parallel  bool
		msgs      []protocol.Message
		wantCalls []string // nil: a text answer
		wantLead  bool
	}{
		{"first tool", weatherTools(), protocol.ToolChoice{}, false, user, []string{"get_weather"}, false},
		{"auto first tool", weatherTools(), protocol.ToolChoice{Mode: "auto"}, false, user, []string{"get_weather"}, false},
		{"parallel at most three", weatherTools(), protocol.ToolChoice{}, true, user, []string{"get_weather", "get_time", "no_params"}, false},
		{"parallel one tool", weatherTools()[:1], protocol.ToolChoice{}, true, user, []string{"get_weather"}, false},
		{"named", weatherTools(), protocol.ToolChoice{Mode: "function", Function: "get_time"}, true, user, []string{"get_time"}, false},
		{"required", weatherTools(), protocol.ToolChoice{Mode: "required"}, false, user, []string{"get_weather"}, false},
		{"none", weatherTools(), protocol.ToolChoice{Mode: "none"}, true, user, nil, false},
		{"no tools", nil, protocol.ToolChoice{}, true, user, nil, false},
		{"after tool result", weatherTools(), protocol.ToolChoice{}, true, afterTool, nil, true},
		{"required after tool result", weatherTools(), protocol.ToolChoice{Mode: "required"}, false, afterTool, []string{"get_weather"}, false},
		{"named after tool result", weatherTools(), protocol.ToolChoice{Mode: "function", Function: "no_params"}, false, afterTool, []string{"no_params"}, false},
		{"none after tool result", weatherTools(), protocol.ToolChoice{Mode: "none"}, false, afterTool, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &protocol.ChatRequest{N: 2, Messages: tt.msgs, Tools: tt.tools, ToolChoice: tt.choice, ParallelToolCalls: tt.parallel}
			res := Generate(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 12, Request: req})
			ids := map[string]bool{}
			for _, c := range res.Choices {
				if tt.wantCalls == nil {
					if c.ToolCalls != nil || c.FinishReason != "stop" || c.Content.Len() != 12 {
						t.Fatalf("want a 12-piece text answer, got %+v", c)
					}
					if got := strings.HasPrefix(c.Text(), "Based on the tool result, "); got != tt.wantLead {
						t.Errorf("lead present = %v, want %v: %q", got, tt.wantLead, c.Text())
					}
					if strings.Contains(c.Text(), "do-not-repeat") || strings.Contains(c.Text(), "21") {
						t.Errorf("answer repeats the tool result: %q", c.Text())
					}
					continue
				}
				if !c.Content.IsNil() || c.FinishReason != "tool_calls" {
					t.Fatalf("want tool calls, got %+v", c)
				}
				var names []string
				for _, tc := range c.ToolCalls {
					names = append(names, tc.Name)
					if len(tc.ID) != 29 || !strings.HasPrefix(tc.ID, "call_") || strings.Trim(tc.ID[5:], "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
						t.Errorf("bad id %q", tc.ID)
					}
					if ids[tc.ID] {
						t.Errorf("id %q repeated", tc.ID)
					}
					ids[tc.ID] = true
					args := tc.Arguments.Text()
					var v map[string]any
					if err := json.Unmarshal([]byte(args), &v); err != nil {
						t.Errorf("arguments %q are not a JSON object: %v", args, err)
					}
				}
				if !slices.Equal(names, tt.wantCalls) {
					t.Errorf("calls %v, want %v", names, tt.wantCalls)
				}
			}
		})
	}
}

func TestToolCallArgumentsMatchSchema(t *testing.T) {
	tools := weatherTools()
	req := &protocol.ChatRequest{N: 8, Messages: []protocol.Message{{Role: "user", Content: "go"}}, Tools: tools, ParallelToolCalls: true}
	res := Generate(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 12, Request: req})
	for _, c := range res.Choices {
		for k, tc := range c.ToolCalls {
			schema := string(tools[k].Parameters)
			if schema == "" {
				if got := tc.Arguments.Text(); got != "{}" {
					t.Errorf("%s without parameters: arguments %q, want {}", tc.Name, got)
				}
				continue
			}
			validateInstance(t, schema, tc.Arguments.Text())
		}
	}
}

func TestToolCallBudget(t *testing.T) {
	req := &protocol.ChatRequest{N: 1, Messages: []protocol.Message{{Role: "user", Content: "go"}}, Tools: weatherTools(), ParallelToolCalls: true}
	in := Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 12, Request: req}
	full := Generate(in).Choices[0]
	first := full.ToolCalls[0].Arguments.Len()
	total := full.Tokens()

	tests := []struct {
		name       string
		budget     int
		wantCalls  int
		wantFinish string
	}{
		{"no budget", 0, 3, "tool_calls"},
		{"budget covers all", total, 3, "tool_calls"},
		{"one fragment", 1, 1, "length"},
		{"exactly the first call", first, 1, "length"},
		{"into the second call", first + 1, 2, "length"},
		{"one short", total - 1, 3, "length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := *req
			r.MaxTokens = tt.budget
			res := Generate(Input{Model: in.Model, Behavior: in.Behavior, DefaultTokens: in.DefaultTokens, Request: &r})
			c := res.Choices[0]
			if len(c.ToolCalls) != tt.wantCalls || c.FinishReason != tt.wantFinish {
				t.Fatalf("got %d calls, finish %s; want %d, %s", len(c.ToolCalls), c.FinishReason, tt.wantCalls, tt.wantFinish)
			}
			if tt.budget > 0 && c.Tokens() > tt.budget {
				t.Errorf("%d tokens exceed the budget %d", c.Tokens(), tt.budget)
			}
			if res.CompletionTokens != c.Tokens() {
				t.Errorf("CompletionTokens %d != Tokens %d", res.CompletionTokens, c.Tokens())
			}
			for k, tc := range c.ToolCalls { // a budget only cuts: ids, names and fragments stay
				want := full.ToolCalls[k]
				if tc.ID != want.ID || tc.Name != want.Name || !slices.Equal(tc.Arguments.Strings(), want.Arguments.Strings()[:tc.Arguments.Len()]) {
					t.Errorf("call %d changed under a budget: %+v vs %+v", k, tc, want)
				}
			}
		})
	}
}

func TestResponseFormats(t *testing.T) {
	schema := `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":120},` +
		`"email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"type":"string"}}},` +
		`"required":["name","age","email","tags"],"additionalProperties":false}`
	afterTool := []protocol.Message{{Role: "user", Content: "x"}, {Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "c", Name: "t", Arguments: "{}"}}}, {Role: "tool", ToolCallID: "c", Content: "r"}}
	tests := []struct {
		name     string
		behavior Behavior
		msgs     []protocol.Message
		format   protocol.ResponseFormat
		check    func(t *testing.T, text string)
	}{
		{"echo json_object", BehaviorEcho, []protocol.Message{{Role: "user", Content: `say "hi"` + "\n<ok>"}}, protocol.ResponseFormat{Type: "json_object"},
			func(t *testing.T, text string) {
				if want := `{"echo":"say \"hi\"\n<ok>"}`; text != want {
					t.Errorf("got %s, want %s", text, want)
				}
			}},
		{"chat json_object", BehaviorChat, nil, protocol.ResponseFormat{Type: "json_object"},
			func(t *testing.T, text string) {
				var v struct{ Answer string }
				if err := json.Unmarshal([]byte(text), &v); err != nil || len(SplitPieces(v.Answer)) != 30 {
					t.Errorf("got %s (%v), want an answer of 30 words", text, err)
				}
			}},
		{"tools json_object after tool", BehaviorTools, afterTool, protocol.ResponseFormat{Type: "json_object"},
			func(t *testing.T, text string) {
				if !strings.HasPrefix(text, `{"answer":"Based on the tool result, `) {
					t.Errorf("got %s", text)
				}
			}},
		{"json_schema without schema", BehaviorChat, nil, protocol.ResponseFormat{Type: "json_schema", Name: "x"},
			func(t *testing.T, text string) {
				if !strings.HasPrefix(text, `{"answer":"`) {
					t.Errorf("got %s", text)
				}
			}},
		{"chat json_schema", BehaviorChat, nil, protocol.ResponseFormat{Type: "json_schema", Name: "person", Schema: json.RawMessage(schema)},
			func(t *testing.T, text string) { validateInstance(t, schema, text) }},
		{"echo json_schema", BehaviorEcho, nil, protocol.ResponseFormat{Type: "json_schema", Name: "person", Schema: json.RawMessage(schema)},
			func(t *testing.T, text string) { validateInstance(t, schema, text) }},
		{"text", BehaviorChat, nil, protocol.ResponseFormat{Type: "text"},
			func(t *testing.T, text string) {
				if json.Valid([]byte(text)) {
					t.Errorf("plain text %q is JSON", text)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := tt.msgs
			if msgs == nil {
				msgs = []protocol.Message{{Role: "user", Content: "give me JSON"}}
			}
			req := &protocol.ChatRequest{N: 3, Messages: msgs, ResponseFormat: tt.format}
			// A default length of 1 must not cut JSON.
			defaultTokens := 30
			if tt.behavior == BehaviorEcho {
				defaultTokens = 1
			}
			res := Generate(Input{Model: "m", Behavior: tt.behavior, DefaultTokens: defaultTokens, Request: req})
			for _, c := range res.Choices {
				text := c.Text()
				if tt.format.Type != "text" && !json.Valid([]byte(text)) {
					t.Fatalf("invalid JSON %q", text)
				}
				if c.FinishReason != "stop" {
					t.Errorf("finish %s", c.FinishReason)
				}
				checkJSONPieces(t, c.Content.Strings(), tt.format.Type != "text")
				tt.check(t, text)
			}
		})
	}
}

func TestResponseFormatBudgetCutsJSON(t *testing.T) {
	req := &protocol.ChatRequest{N: 1, Messages: []protocol.Message{{Role: "user", Content: "x"}},
		ResponseFormat: protocol.ResponseFormat{Type: "json_object"}, MaxTokens: 3}
	c := chat(req).Choices[0]
	if got := c.Text(); got != `{"answer":` || c.FinishReason != "length" {
		t.Fatalf("got %q %s, want the first 3 pieces and length", got, c.FinishReason)
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

// TestBudgetGeneratesOnlyWhatItKeeps: a budget stops the generation at what cutText can keep,
// with the same answer — the whole answer cut, the same finish reason — as generating it whole
// and cutting it, including a stop string that crosses the budget.
func TestBudgetGeneratesOnlyWhatItKeeps(t *testing.T) {
	whole := Generate(Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: userRequest("hi")})
	full := whole.Choices[0].Content
	for _, budget := range []int{1, 16, 100, 4095, 4096} {
		// No stop; a stop that starts at the budget's last piece and runs past it; one beyond.
		for _, stop := range []string{"", full.At(budget-1) + full.At(min(budget, full.Len()-1)), full.At(min(budget+5, full.Len()-1))} {
			req := userRequest("hi")
			req.MaxTokens = budget
			if stop != "" {
				req.Stop = []string{stop}
			}
			in := Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: req}
			got := newGeneration(in, req, 1).result(1).Choices[0]
			want, finish := newGeneration(in, req, 1).cutText(full)
			if !slices.Equal(got.Content.Strings(), want.Strings()) || got.FinishReason != finish {
				t.Errorf("budget %d stop %q: %d pieces %s, want %d %s", budget, stop, got.Content.Len(), got.FinishReason, want.Len(), finish)
			}
			if made := piecesMade(in); made > budget+len(stop)+1 {
				t.Errorf("budget %d stop %q: %d pieces made", budget, stop, made)
			}
		}
	}
}

// TestToolCallNameIsItsOwn: a tool call's name is a copy, not the request's string — which the
// decoder cuts from one copy of the whole body, that an open stream would otherwise keep alive.
func TestToolCallNameIsItsOwn(t *testing.T) {
	body := strings.Repeat("x", 1<<20) + "get_weather"
	tools := weatherTools()
	tools[0].Name = body[len(body)-len("get_weather"):]
	req := &protocol.ChatRequest{N: 1, Messages: []protocol.Message{{Role: "user", Content: "weather?"}}, Tools: tools}
	for _, res := range []Result{Generate(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 12, Request: req}),
		Prepare(Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 12, Request: req})} {
		calls := res.Choices[0].ToolCalls
		if len(calls) != 1 || calls[0].Name != "get_weather" {
			t.Fatalf("calls %v, want one to get_weather", calls)
		}
		if unsafe.StringData(calls[0].Name) == unsafe.StringData(tools[0].Name) {
			t.Error("the call's name is the request's string: it keeps the request's body alive")
		}
	}
}
