package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// agentStep is one step of a conversation an agent loop has had so far: a user message, the
// model's calls, or the results of the calls just made (in the order they were made).
type agentStep struct {
	user    string
	calls   []string
	results bool
}

// TestMockToolsPlaysAWholeAgent holds mock-tools to its table in docs/protocol.md ("mock-tools
// plays a whole agent"), row by row, over both dialects: the same conversation, sent as chat
// messages and as Responses items, gets the same calls — or a text answer (no calls).
func TestMockToolsPlaysAWholeAgent(t *testing.T) {
	tools := []string{"search", "lookup", "extract_answer", "fourth"}
	ask := []agentStep{{user: "What is the answer?"}}
	afterSearch := append(ask[:1:1], agentStep{calls: []string{"search"}}, agentStep{results: true})
	afterAll := append(ask[:1:1], agentStep{calls: []string{"search", "lookup"}}, agentStep{results: true},
		agentStep{calls: []string{"extract_answer", "fourth"}}, agentStep{results: true})
	handoff := append(ask[:1:1], agentStep{calls: []string{"transfer_to_Refunds"}}, agentStep{results: true})
	for _, row := range []struct {
		name     string
		choice   string // "" (absent), auto, none, required, or a function's name
		parallel bool
		steps    []agentStep
		want     []string // nil: a text answer
	}{
		{"auto, fresh turn: the first tool", "", false, ask, []string{"search"}},
		{"auto, fresh turn, parallel: each tool once, at most three", "auto", true, ask, []string{"search", "lookup", "extract_answer"}},
		{"auto, after a result: text", "auto", false, afterSearch, nil},
		{"auto, after a handoff: a fresh turn", "", false, handoff, []string{"search"}},
		{"auto, after a handoff, parallel", "", true, handoff, []string{"search", "lookup", "extract_answer"}},
		{"required, fresh turn: the first tool", "required", false, ask, []string{"search"}},
		{"required, after a result: the next tool not called", "required", false, afterSearch, []string{"lookup"}},
		{"required, after a result, parallel: the tools not called", "required", true, afterSearch, []string{"lookup", "extract_answer", "fourth"}},
		{"required, every tool called: the last", "required", false, afterAll, []string{"fourth"}},
		{"required, after a handoff: a fresh turn", "required", false, handoff, []string{"search"}},
		{"a named function: that function", "lookup", true, ask, []string{"lookup"}},
		{"a named function, after its result: that function again", "lookup", false, afterSearch, []string{"lookup"}},
		{"none: text", "none", true, ask, nil},
		{"none, after a handoff: text", "none", false, handoff, nil},
	} {
		for _, dialect := range []string{chatPath, "/v1/responses"} {
			t.Run(row.name+" "+dialect, func(t *testing.T) {
				h := newHarness(t)
				body := agentBody(dialect, tools, row.choice, row.parallel, row.steps)
				rr := h.do(http.MethodPost, dialect, body)
				if rr.Code != http.StatusOK {
					t.Fatalf("status %d: %s\n%s", rr.Code, rr.Body.String(), body)
				}
				if got := calledTools(t, dialect, rr.Body.Bytes()); strings.Join(got, ",") != strings.Join(row.want, ",") {
					t.Errorf("called %q, want %q", got, row.want)
				}
			})
		}
	}
}

// agentBody writes the conversation as a request of the dialect to mock-tools.
func agentBody(dialect string, tools []string, choice string, parallel bool, steps []agentStep) string {
	responses := dialect == "/v1/responses"
	req := map[string]any{"model": "mock-tools", "parallel_tool_calls": parallel}
	var defs []any
	for _, name := range tools {
		params := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
		if responses {
			defs = append(defs, map[string]any{"type": "function", "name": name, "parameters": params})
		} else {
			defs = append(defs, map[string]any{"type": "function", "function": map[string]any{"name": name, "parameters": params}})
		}
	}
	req["tools"] = defs
	switch choice {
	case "":
	case "auto", "none", "required":
		req["tool_choice"] = choice
	default:
		if responses {
			req["tool_choice"] = map[string]any{"type": "function", "name": choice}
		} else {
			req["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": choice}}
		}
	}
	var msgs []any
	var last []string // the ids of the calls just made
	for i, s := range steps {
		switch {
		case s.user != "":
			msgs = append(msgs, map[string]any{"role": "user", "content": s.user})
		case s.calls != nil:
			last = last[:0]
			var calls []any
			for k, name := range s.calls {
				id := fmt.Sprintf("call_%d_%d", i, k)
				last = append(last, id)
				if responses {
					msgs = append(msgs, map[string]any{"type": "function_call", "call_id": id, "name": name, "arguments": "{}"})
				} else {
					calls = append(calls, map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": "{}"}})
				}
			}
			if !responses {
				msgs = append(msgs, map[string]any{"role": "assistant", "content": nil, "tool_calls": calls})
			}
		case s.results:
			for _, id := range last {
				if responses {
					msgs = append(msgs, map[string]any{"type": "function_call_output", "call_id": id, "output": "done"})
				} else {
					msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": id, "content": "done"})
				}
			}
		}
	}
	if responses {
		req["input"] = msgs
	} else {
		req["messages"] = msgs
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// calledTools reads the names of the functions a JSON answer of the dialect calls.
func calledTools(t *testing.T, dialect string, body []byte) []string {
	t.Helper()
	var names []string
	if dialect == "/v1/responses" {
		var r struct {
			Output []struct{ Type, Name string } `json:"output"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Output {
			if it.Type == "function_call" {
				names = append(names, it.Name)
			}
		}
		return names
	}
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct{ Name string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("not one choice: %s", body)
	}
	for _, tc := range c.Choices[0].Message.ToolCalls {
		names = append(names, tc.Function.Name)
	}
	return names
}
