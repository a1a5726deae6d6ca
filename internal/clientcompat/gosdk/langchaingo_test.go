package gosdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

func langchainGo(t *testing.T, model string) *openai.LLM {
	t.Helper()
	llm, err := openai.New(openai.WithBaseURL(baseURL(t)), openai.WithToken("dummy"), openai.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	return llm
}

func TestLangchaingoChat(t *testing.T) {
	ctx := context.Background()
	llm := langchainGo(t, "mock-echo")
	out, err := llms.GenerateFromSinglePrompt(ctx, llm, "hello from langchaingo")
	if err != nil {
		t.Fatal(err)
	}
	if out != "echo: hello from langchaingo" {
		t.Errorf("got %q", out)
	}
}

func TestLangchaingoStream(t *testing.T) {
	ctx := context.Background()
	llm := langchainGo(t, "mock-chat")
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "tell me something")}
	var streamed strings.Builder
	chunks := 0
	resp, err := llm.GenerateContent(ctx, msgs, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		streamed.Write(chunk)
		chunks++
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := llm.GenerateContent(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if chunks < 2 || streamed.String() != whole.Choices[0].Content || resp.Choices[0].Content != whole.Choices[0].Content {
		t.Errorf("%d chunks %q; streamed answer %q; JSON answer %q", chunks, streamed.String(), resp.Choices[0].Content, whole.Choices[0].Content)
	}
}

// TestLangchaingoToolRoundTrip follows langchaingo's examples/openai-function-call-example: the
// tool calls go back as an AI message's parts, the results as llms.ToolCallResponse parts.
func TestLangchaingoToolRoundTrip(t *testing.T) {
	ctx := context.Background()
	llm := langchainGo(t, "mock-tools")
	tools := []llms.Tool{{
		Type: "function",
		Function: &llms.FunctionDefinition{
			Name:        "getCurrentWeather",
			Description: "Get the current weather in a given location",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"location": map[string]any{"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
					"unit":     map[string]any{"type": "string", "enum": []string{"fahrenheit", "celsius"}},
				},
				"required": []string{"location"},
			},
		},
	}}
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "What is the weather like in Boston?")}
	for _, streaming := range []bool{false, true} {
		opts := []llms.CallOption{llms.WithTools(tools)}
		if streaming {
			opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		}
		resp, err := llm.GenerateContent(ctx, history, opts...)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Choices[0].ToolCalls
		if len(calls) != 1 || calls[0].FunctionCall.Name != "getCurrentWeather" {
			t.Fatalf("streaming %v: tool calls %+v", streaming, calls)
		}
		var args struct {
			Location string `json:"location"`
		}
		if err := json.Unmarshal([]byte(calls[0].FunctionCall.Arguments), &args); err != nil || args.Location == "" {
			t.Fatalf("streaming %v: arguments %q: %v", streaming, calls[0].FunctionCall.Arguments, err)
		}
		turn := append([]llms.MessageContent{}, history...)
		turn = append(turn,
			llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{calls[0]}},
			llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{
				ToolCallID: calls[0].ID, Name: calls[0].FunctionCall.Name, Content: `{"temperature":"72","unit":"fahrenheit"}`,
			}}},
		)
		final, err := llm.GenerateContent(ctx, turn, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if c := final.Choices[0]; len(c.ToolCalls) != 0 || !strings.HasPrefix(c.Content, "Based on the tool result,") {
			t.Errorf("streaming %v: final answer %+v", streaming, c)
		}
	}
}

func TestLangchaingoJSONMode(t *testing.T) {
	llm := langchainGo(t, "mock-chat")
	resp, err := llm.GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Answer in JSON.")}, llms.WithJSONMode())
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(resp.Choices[0].Content), &v); err != nil {
		t.Errorf("%q: %v", resp.Choices[0].Content, err)
	}
}
