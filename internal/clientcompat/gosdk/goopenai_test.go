package gosdk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

func goOpenAI(t *testing.T) *openai.Client {
	cfg := openai.DefaultConfig("dummy")
	cfg.BaseURL = baseURL(t)
	return openai.NewClientWithConfig(cfg)
}

func TestGoOpenAIChat(t *testing.T) {
	resp, err := goOpenAI(t).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "mock-echo",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello from go-openai"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "echo: hello from go-openai" {
		t.Errorf("content %q", got)
	}
	if u := resp.Usage; u.CompletionTokens != 4 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v", u)
	}
}

func TestGoOpenAIStream(t *testing.T) {
	c := goOpenAI(t)
	req := openai.ChatCompletionRequest{
		Model:         "mock-chat",
		Messages:      []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "tell me something"}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var text strings.Builder
	var usage *openai.Usage
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
	}
	req.StreamOptions = nil
	whole, err := c.CreateChatCompletion(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != whole.Choices[0].Message.Content || text.Len() == 0 {
		t.Errorf("stream %q, JSON %q", text.String(), whole.Choices[0].Message.Content)
	}
	if usage == nil || usage.CompletionTokens != whole.Usage.CompletionTokens {
		t.Errorf("stream usage %+v, JSON usage %+v", usage, whole.Usage)
	}
}

// TestGoOpenAIToolRoundTrip is go-openai's own example, examples/completion-with-tool: the
// assistant message appended as it came, then a tool message with Name set.
func TestGoOpenAIToolRoundTrip(t *testing.T) {
	c := goOpenAI(t)
	ctx := context.Background()
	f := openai.FunctionDefinition{
		Name:        "get_current_weather",
		Description: "Get the current weather in a given location",
		Parameters: jsonschema.Definition{
			Type: jsonschema.Object,
			Properties: map[string]jsonschema.Definition{
				"location": {Type: jsonschema.String, Description: "The city and state, e.g. San Francisco, CA"},
				"unit":     {Type: jsonschema.String, Enum: []string{"celsius", "fahrenheit"}},
			},
			Required: []string{"location"},
		},
	}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &f}}
	dialogue := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is the weather in Boston today?"}}
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "mock-tools", Messages: dialogue, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != f.Name {
		t.Fatalf("tool calls %+v", msg.ToolCalls)
	}
	var args struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal([]byte(msg.ToolCalls[0].Function.Arguments), &args); err != nil || args.Location == "" {
		t.Fatalf("arguments %q: %v", msg.ToolCalls[0].Function.Arguments, err)
	}
	dialogue = append(dialogue, msg, openai.ChatCompletionMessage{
		Role:       openai.ChatMessageRoleTool,
		Content:    "Sunny and 80 degrees.",
		Name:       msg.ToolCalls[0].Function.Name,
		ToolCallID: msg.ToolCalls[0].ID,
	})
	resp, err = c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "mock-tools", Messages: dialogue, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message; len(got.ToolCalls) != 0 || !strings.HasPrefix(got.Content, "Based on the tool result,") {
		t.Errorf("final answer %+v", got)
	}
}

func TestGoOpenAIStructuredOutput(t *testing.T) {
	type person struct {
		Name string `json:"name"`
		Age  int    `json:"age"`
	}
	schema, err := jsonschema.GenerateSchemaForType(person{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := goOpenAI(t).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "mock-chat",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Invent a person."}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "person", Schema: schema, Strict: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var p person
	if err := schema.Unmarshal(resp.Choices[0].Message.Content, &p); err != nil {
		t.Fatalf("%q: %v", resp.Choices[0].Message.Content, err)
	}
}

// TestGoOpenAIErrors: the mock's errors reach go-openai as *openai.APIError with OpenAI's
// status, type and code.
func TestGoOpenAIErrors(t *testing.T) {
	_, err := goOpenAI(t).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "no-such-model",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Type != "invalid_request_error" {
		t.Errorf("got %#v", err)
	}
}
