package main

// Part of the end-to-end tests with the official Go SDK; sdk_test.go explains the setup.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles a JSON Schema given as Go values (draft 2020-12 by default).
func compileSchema(t *testing.T, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validateJSON reports whether text is JSON and an instance of sch.
func validateJSON(sch *jsonschema.Schema, text string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// tripSchema is a tool's parameters: an object with a required string, an enum, a bounded
// integer and an array of objects.
var tripSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"destination":  map[string]any{"type": "string", "description": "City to travel to"},
		"travel_class": map[string]any{"type": "string", "enum": []any{"economy", "business", "first"}},
		"nights":       map[string]any{"type": "integer", "minimum": 1, "maximum": 14},
		"stops": map[string]any{
			"type":     "array",
			"minItems": 1,
			"items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"city": map[string]any{"type": "string"},
					"days": map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
				},
				"required":             []any{"city", "days"},
				"additionalProperties": false,
			},
		},
	},
	"required":             []any{"destination", "travel_class", "nights", "stops"},
	"additionalProperties": false,
}

func TestSDKToolsRoundTrip(t *testing.T) {
	t.Parallel()
	sch := compileSchema(t, tripSchema)
	// The validator must really check what the test relies on.
	for _, bad := range []string{
		`{}`,
		`{"destination":"x","travel_class":"coach","nights":3,"stops":[{"city":"y","days":1}]}`,
		`{"destination":"x","travel_class":"first","nights":15,"stops":[{"city":"y","days":1}]}`,
		`{"destination":"x","travel_class":"first","nights":2,"stops":[{"city":"y"}]}`,
	} {
		if validateJSON(sch, bad) == nil {
			t.Fatalf("the schema accepts %s", bad)
		}
	}

	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()
	user := openai.UserMessage("Plan a trip to Lisbon.")
	params := openai.ChatCompletionNewParams{
		Model:    "mock-tools",
		Messages: []openai.ChatCompletionMessageParamUnion{user},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:        "plan_trip",
			Description: openai.String("Plan a trip with stops."),
			Parameters:  tripSchema,
		})},
	}

	first, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	choice := first.Choices[0]
	if choice.FinishReason != "tool_calls" || len(choice.Message.ToolCalls) != 1 {
		t.Fatalf("finish_reason %q with %d tool calls, want tool_calls with 1", choice.FinishReason, len(choice.Message.ToolCalls))
	}
	call := choice.Message.ToolCalls[0]
	if call.Type != "function" || call.Function.Name != "plan_trip" || !strings.HasPrefix(call.ID, "call_") {
		t.Errorf("tool call: type %q name %q id %q", call.Type, call.Function.Name, call.ID)
	}
	if err := validateJSON(sch, call.Function.Arguments); err != nil {
		t.Errorf("arguments %s are not an instance of the schema: %v", call.Function.Arguments, err)
	}
	if first.Usage.CompletionTokens <= 0 || first.Usage.TotalTokens != first.Usage.PromptTokens+first.Usage.CompletionTokens {
		t.Errorf("usage = %+v", first.Usage)
	}

	t.Run("tool result gets a text answer", func(t *testing.T) {
		next := params
		next.Messages = []openai.ChatCompletionMessageParamUnion{
			user,
			choice.Message.ToParam(),
			openai.ToolMessage(`{"booked":true,"reference":"LIS-42"}`, call.ID),
		}
		second, err := client.Chat.Completions.New(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		c := second.Choices[0]
		if c.FinishReason != "stop" || len(c.Message.ToolCalls) != 0 || c.Message.Content == "" {
			t.Errorf("after the tool result: finish %q, %d tool calls, content %q", c.FinishReason, len(c.Message.ToolCalls), c.Message.Content)
		}
		if strings.Contains(c.Message.Content, "LIS-42") {
			t.Errorf("the answer repeats the tool result: %q", c.Message.Content)
		}
	})

	t.Run("stream accumulates the same call", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		var finished []openai.FinishedChatCompletionToolCall
		for stream.Next() {
			if !acc.AddChunk(stream.Current()) {
				t.Fatalf("the accumulator rejected chunk %s", stream.Current().RawJSON())
			}
			if tc, ok := acc.JustFinishedToolCall(); ok {
				finished = append(finished, tc)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if len(acc.Choices) != 1 || acc.Choices[0].FinishReason != "tool_calls" || len(acc.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("accumulated: %s", acc.RawJSON())
		}
		got := acc.Choices[0].Message.ToolCalls[0]
		if !json.Valid([]byte(got.Function.Arguments)) {
			t.Fatalf("accumulated arguments are not JSON: %q", got.Function.Arguments)
		}
		if got.Function.Arguments != call.Function.Arguments || got.Function.Name != call.Function.Name || got.ID != call.ID {
			t.Errorf("stream call %s(%s) id %s, JSON call %s(%s) id %s",
				got.Function.Name, got.Function.Arguments, got.ID, call.Function.Name, call.Function.Arguments, call.ID)
		}
		if len(finished) != 1 || finished[0].Arguments != call.Function.Arguments || finished[0].ID != call.ID {
			t.Errorf("JustFinishedToolCall reported %+v", finished)
		}
	})
}
