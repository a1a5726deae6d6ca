package generate

import (
	"encoding/json"
	"strings"
	"testing"

	"mockgateway/internal/protocol"
)

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
			req := &protocol.Request{N: 3, Messages: msgs, ResponseFormat: tt.format}
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
	req := &protocol.Request{N: 1, Messages: []protocol.Message{{Role: "user", Content: "x"}},
		ResponseFormat: protocol.ResponseFormat{Type: "json_object"}, MaxTokens: 3}
	c := chat(req).Choices[0]
	if got := c.Text(); got != `{"answer":` || c.FinishReason != "length" {
		t.Fatalf("got %q %s, want the first 3 pieces and length", got, c.FinishReason)
	}
}
