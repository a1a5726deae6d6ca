package gosdk

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// goOpenAI is a go-openai client configured as its README documents for an OpenAI-compatible
// server: DefaultConfig with BaseURL replaced.
func goOpenAI() *openai.Client {
	cfg := openai.DefaultConfig("dummy")
	cfg.BaseURL = serviceURL
	return openai.NewClientWithConfig(cfg)
}

// checkUsage: the usage block is present and adds up.
func checkUsage(t *testing.T, u openai.Usage) {
	t.Helper()
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v", u)
	}
}

func TestGoOpenAIChat(t *testing.T) {
	resp, err := goOpenAI().CreateChatCompletion(testContext(t), openai.ChatCompletionRequest{
		Model:    "mock-chat",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hello!"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ID == "" || resp.Object != "chat.completion" || resp.Model != "mock-chat" || len(resp.Choices) != 1 {
		t.Fatalf("response %+v", resp)
	}
	c := resp.Choices[0]
	if c.Message.Role != openai.ChatMessageRoleAssistant || strings.TrimSpace(c.Message.Content) == "" || c.FinishReason != openai.FinishReasonStop {
		t.Errorf("choice %+v", c)
	}
	checkUsage(t, resp.Usage)

	// mock-echo: what the client sent is what the mock read.
	resp, err = goOpenAI().CreateChatCompletion(testContext(t), openai.ChatCompletionRequest{
		Model:    "mock-echo",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello from go-openai"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; !strings.Contains(got, "hello from go-openai") {
		t.Errorf("mock-echo content %q", got)
	}
}

// TestGoOpenAIStream reads a stream as go-openai's README does (Recv until io.EOF), with
// stream_options.include_usage; the text is the same as the non-streamed answer's.
func TestGoOpenAIStream(t *testing.T) {
	c := goOpenAI()
	ctx := testContext(t)
	req := openai.ChatCompletionRequest{
		Model:         "mock-chat",
		Messages:      []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Lorem ipsum"}},
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	stream, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var text strings.Builder
	var usage *openai.Usage
	chunks, finish := 0, openai.FinishReason("")
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %d chunks: %v", chunks, err)
		}
		chunks++
		for _, ch := range chunk.Choices {
			text.WriteString(ch.Delta.Content)
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
	}
	// The stream ended cleanly: Recv keeps answering io.EOF.
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after the end: %v", err)
	}
	if chunks < 3 || text.Len() == 0 || finish != openai.FinishReasonStop {
		t.Errorf("%d chunks, text %q, finish_reason %q", chunks, text.String(), finish)
	}
	if usage == nil {
		t.Fatal("no usage chunk with include_usage")
	}
	checkUsage(t, *usage)

	req.Stream, req.StreamOptions = false, nil
	whole, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != whole.Choices[0].Message.Content || usage.CompletionTokens != whole.Usage.CompletionTokens {
		t.Errorf("stream %q (usage %+v); JSON %q (usage %+v)", text.String(), *usage, whole.Choices[0].Message.Content, whole.Usage)
	}
}

// weatherTool is the tool of go-openai's examples/completion-with-tool, as it writes it.
func weatherTool() openai.FunctionDefinition {
	return openai.FunctionDefinition{
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
}

// checkWeatherArgs: the arguments are JSON with the schema's required location, and unit (when
// there) one of its enum.
func checkWeatherArgs(t *testing.T, raw string) {
	t.Helper()
	var args struct {
		Location *string `json:"location"`
		Unit     *string `json:"unit"`
	}
	if err := json.Unmarshal([]byte(raw), &args); err != nil || args.Location == nil {
		t.Fatalf("arguments %q: %v", raw, err)
	}
	if args.Unit != nil && *args.Unit != "celsius" && *args.Unit != "fahrenheit" {
		t.Errorf("arguments %q: unit outside the enum", raw)
	}
}

// TestGoOpenAIToolRoundTrip is go-openai's own example, examples/completion-with-tool, step by
// step: the assistant message appended as it came back, then a tool message with Name and
// ToolCallID set, and the same tools sent again.
func TestGoOpenAIToolRoundTrip(t *testing.T) {
	client := goOpenAI()
	ctx := testContext(t)
	f := weatherTool()
	tool := openai.Tool{Type: openai.ToolTypeFunction, Function: &f}

	dialogue := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "What is the weather in Boston today?"},
	}
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: "mock-tools", Messages: dialogue, Tools: []openai.Tool{tool},
	})
	if err != nil || len(resp.Choices) != 1 {
		t.Fatalf("completion: err %v, %d choices", err, len(resp.Choices))
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) != 1 {
		t.Fatalf("tool calls %+v", msg.ToolCalls)
	}
	call := msg.ToolCalls[0]
	if call.ID == "" || call.Type != openai.ToolTypeFunction || call.Function.Name != f.Name || resp.Choices[0].FinishReason != openai.FinishReasonToolCalls {
		t.Fatalf("tool call %+v, finish_reason %q", call, resp.Choices[0].FinishReason)
	}
	checkWeatherArgs(t, call.Function.Arguments)
	checkUsage(t, resp.Usage)

	dialogue = append(dialogue, msg)
	dialogue = append(dialogue, openai.ChatCompletionMessage{
		Role:       openai.ChatMessageRoleTool,
		Content:    "Sunny and 80 degrees.",
		Name:       msg.ToolCalls[0].Function.Name,
		ToolCallID: msg.ToolCalls[0].ID,
	})
	resp, err = client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: "mock-tools", Messages: dialogue, Tools: []openai.Tool{tool},
	})
	if err != nil || len(resp.Choices) != 1 {
		t.Fatalf("2nd completion: err %v, %d choices", err, len(resp.Choices))
	}
	final := resp.Choices[0]
	if len(final.Message.ToolCalls) != 0 || strings.TrimSpace(final.Message.Content) == "" || final.FinishReason != openai.FinishReasonStop {
		t.Errorf("final answer %+v", final)
	}
	checkUsage(t, resp.Usage)
}

// TestGoOpenAIStreamToolCalls: a streamed tool call, assembled from its deltas by index as
// go-openai's stream types describe it, is the same call the JSON answer gives.
func TestGoOpenAIStreamToolCalls(t *testing.T) {
	client := goOpenAI()
	ctx := testContext(t)
	f := weatherTool()
	req := openai.ChatCompletionRequest{
		Model:    "mock-tools",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is the weather in Boston today?"}},
		Tools:    []openai.Tool{{Type: openai.ToolTypeFunction, Function: &f}},
	}
	stream, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var calls []openai.ToolCall
	finish := openai.FinishReason("")
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunk.Choices {
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("tool call delta without index: %+v", d)
				}
				for len(calls) <= *d.Index {
					calls = append(calls, openai.ToolCall{})
				}
				c := &calls[*d.Index]
				if d.ID != "" {
					c.ID = d.ID
				}
				if d.Type != "" {
					c.Type = d.Type
				}
				c.Function.Name += d.Function.Name
				c.Function.Arguments += d.Function.Arguments
			}
		}
	}
	if len(calls) != 1 || calls[0].ID == "" || calls[0].Function.Name != f.Name || finish != openai.FinishReasonToolCalls {
		t.Fatalf("streamed calls %+v, finish_reason %q", calls, finish)
	}
	checkWeatherArgs(t, calls[0].Function.Arguments)

	whole, err := client.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if w := whole.Choices[0].Message.ToolCalls; len(w) != 1 || w[0].Function.Arguments != calls[0].Function.Arguments {
		t.Errorf("streamed %+v, JSON %+v", calls, w)
	}
}

// TestGoOpenAIStructuredOutput is go-openai's own live test of json_schema
// (TestChatCompletionResponseFormat_JSONSchema in api_integration_test.go): a schema from its
// jsonschema.GenerateSchemaForType, strict, and the answer read back with schema.Unmarshal.
func TestGoOpenAIStructuredOutput(t *testing.T) {
	type MyStructuredResponse struct {
		PascalCase string `json:"pascal_case" required:"true" description:"PascalCase"`
		CamelCase  string `json:"camel_case" required:"true" description:"CamelCase"`
		KebabCase  string `json:"kebab_case" required:"true" description:"KebabCase"`
		SnakeCase  string `json:"snake_case" required:"true" description:"SnakeCase"`
	}
	var result MyStructuredResponse
	schema, err := jsonschema.GenerateSchemaForType(result)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := goOpenAI().CreateChatCompletion(testContext(t), openai.ChatCompletionRequest{
		Model: "mock-chat",
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "Convert the string into PascalCase, camelCase, kebab-case and snake_case."},
			{Role: openai.ChatMessageRoleUser, Content: "Hello World"},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   "cases",
				Schema: schema,
				Strict: true,
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	content := resp.Choices[0].Message.Content
	if err := schema.Unmarshal(content, &result); err != nil {
		t.Fatalf("%q: %v", content, err)
	}
	var keys map[string]any
	if err := json.Unmarshal([]byte(content), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range schema.Required {
		if _, ok := keys[k].(string); !ok {
			t.Errorf("%q: required %q missing or not a string", content, k)
		}
	}
	checkUsage(t, resp.Usage)
}

// TestGoOpenAIStrictToolChoice is go-openai's own live test of strict function calling
// (TestChatCompletionStructuredOutputsFunctionCalling): a strict tool, named by tool_choice.
func TestGoOpenAIStrictToolChoice(t *testing.T) {
	required := []string{"PascalCase", "CamelCase", "KebabCase", "SnakeCase"}
	props := map[string]jsonschema.Definition{}
	for _, k := range required {
		props[k] = jsonschema.Definition{Type: jsonschema.String}
	}
	resp, err := goOpenAI().CreateChatCompletion(testContext(t), openai.ChatCompletionRequest{
		Model: "mock-tools",
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "Convert the string into the four naming conventions."},
			{Role: openai.ChatMessageRoleUser, Content: "Hello World"},
		},
		Tools: []openai.Tool{{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:   "display_cases",
				Strict: true,
				Parameters: &jsonschema.Definition{
					Type:                 jsonschema.Object,
					Properties:           props,
					Required:             required,
					AdditionalProperties: false,
				},
			},
		}},
		ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "display_cases"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "display_cases" {
		t.Fatalf("tool calls %+v", calls)
	}
	result := map[string]string{}
	if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &result); err != nil {
		t.Fatalf("arguments %q: %v", calls[0].Function.Arguments, err)
	}
	for _, k := range required {
		if _, ok := result[k]; !ok {
			t.Errorf("arguments %q: %s missing", calls[0].Function.Arguments, k)
		}
	}
}

// TestGoOpenAIErrors: the mock's errors reach go-openai as *openai.APIError with OpenAI's
// status, type and code.
func TestGoOpenAIErrors(t *testing.T) {
	_, err := goOpenAI().CreateChatCompletion(testContext(t), openai.ChatCompletionRequest{
		Model:    "no-such-model",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" || apiErr.Type != "invalid_request_error" || apiErr.Message == "" {
		t.Errorf("got %#v", err)
	}
}
