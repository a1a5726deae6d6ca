package generate

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"mockgateway/internal/protocol"
)

func TestToolCalls(t *testing.T) {
	user := []protocol.Message{{Role: "user", Content: "weather in Paris?"}}
	afterTool := []protocol.Message{
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: `{"temp_c":21,"secret":"do-not-repeat"}`},
	}
	// A handoff: the result answers transfer_to_Refunds, which this agent's request does not offer.
	afterHandoff := []protocol.Message{
		{Role: "user", Content: "a refund, please"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_h", Name: "transfer_to_Refunds", Arguments: `{}`}}},
		{Role: "tool", ToolCallID: "call_h", Content: `{"assistant":"Refunds"}`},
	}
	// Every tool called since the last user message; an earlier turn's calls do not count.
	afterAll := []protocol.Message{
		{Role: "user", Content: "first question"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_0", Name: "get_time", Arguments: `{}`}}},
		{Role: "tool", ToolCallID: "call_0", Content: "noon"},
		{Role: "assistant", Content: "It is noon."},
		{Role: "user", Content: "weather in Paris?"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "get_weather"}, {ID: "call_2", Name: "get_time"}}},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"},
		{Role: "tool", ToolCallID: "call_2", Content: "noon"},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_3", Name: "no_params"}, {ID: "call_4", Name: "fourth"}}},
		{Role: "tool", ToolCallID: "call_3", Content: "x"},
		{Role: "tool", ToolCallID: "call_4", Content: "y"},
	}
	// A result whose call the request does not carry (an item_reference stood for it): a
	// result all the same.
	unmatched := []protocol.Message{{Role: "user", Content: "q"}, {Role: "tool", ToolCallID: "call_x", Content: "r"}}
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
		{"required after tool result: the next tool not called", weatherTools(), protocol.ToolChoice{Mode: "required"}, false, afterTool, []string{"get_time"}, false},
		{"required after tool result, parallel", weatherTools(), protocol.ToolChoice{Mode: "required"}, true, afterTool, []string{"get_time", "no_params", "fourth"}, false},
		{"required with every tool called: the last", weatherTools(), protocol.ToolChoice{Mode: "required"}, true, afterAll, []string{"fourth"}, false},
		{"after a handoff: a fresh turn", weatherTools()[:1], protocol.ToolChoice{}, false, afterHandoff, []string{"get_weather"}, false},
		{"after a handoff, parallel", weatherTools(), protocol.ToolChoice{}, true, afterHandoff, []string{"get_weather", "get_time", "no_params"}, false},
		{"after a handoff, required", weatherTools(), protocol.ToolChoice{Mode: "required"}, false, afterHandoff, []string{"get_weather"}, false},
		{"after a handoff, none", weatherTools(), protocol.ToolChoice{Mode: "none"}, false, afterHandoff, nil, true},
		{"a result without its call", weatherTools(), protocol.ToolChoice{}, false, unmatched, nil, true},
		{"named after tool result", weatherTools(), protocol.ToolChoice{Mode: "function", Function: "no_params"}, false, afterTool, []string{"no_params"}, false},
		{"none after tool result", weatherTools(), protocol.ToolChoice{Mode: "none"}, false, afterTool, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &protocol.Request{N: 2, Messages: tt.msgs, Tools: tt.tools, ToolChoice: tt.choice, ParallelToolCalls: tt.parallel}
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
	req := &protocol.Request{N: 8, Messages: []protocol.Message{{Role: "user", Content: "go"}}, Tools: tools, ParallelToolCalls: true}
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
	req := &protocol.Request{N: 1, Messages: []protocol.Message{{Role: "user", Content: "go"}}, Tools: weatherTools(), ParallelToolCalls: true}
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

// TestToolCallNameIsItsOwn: a tool call's name is a copy, not the request's string — which the
// decoder cuts from one copy of the whole body, that an open stream would otherwise keep alive.
func TestToolCallNameIsItsOwn(t *testing.T) {
	body := strings.Repeat("x", 1<<20) + "get_weather"
	tools := weatherTools()
	tools[0].Name = body[len(body)-len("get_weather"):]
	req := &protocol.Request{N: 1, Messages: []protocol.Message{{Role: "user", Content: "weather?"}}, Tools: tools}
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
