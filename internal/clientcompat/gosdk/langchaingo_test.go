package gosdk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/jsonschema"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"
)

// langchainGo is langchaingo's OpenAI LLM pointed at the service, as its docs configure an
// OpenAI-compatible server.
func langchainGo(t *testing.T, model string) *openai.LLM {
	t.Helper()
	llm, err := openai.New(openai.WithBaseURL(serviceURL), openai.WithToken("x"), openai.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	return llm
}

// checkGenerationInfo: langchaingo copied the usage block into GenerationInfo, and it adds up.
func checkGenerationInfo(t *testing.T, c *llms.ContentChoice) {
	t.Helper()
	p, _ := c.GenerationInfo["PromptTokens"].(int)
	n, _ := c.GenerationInfo["CompletionTokens"].(int)
	total, _ := c.GenerationInfo["TotalTokens"].(int)
	if p <= 0 || n <= 0 || total != p+n {
		t.Errorf("usage in GenerationInfo: prompt %v, completion %v, total %v", c.GenerationInfo["PromptTokens"], c.GenerationInfo["CompletionTokens"], c.GenerationInfo["TotalTokens"])
	}
}

func TestLangchaingoChat(t *testing.T) {
	ctx := testContext(t)
	llm := langchainGo(t, "mock-chat")
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, "You are a helpful assistant."),
		llms.TextParts(llms.ChatMessageTypeHuman, "Tell me a fact."),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 {
		t.Fatalf("%d choices", len(resp.Choices))
	}
	c := resp.Choices[0]
	if strings.TrimSpace(c.Content) == "" || c.StopReason != "stop" || len(c.ToolCalls) != 0 {
		t.Errorf("choice %+v", c)
	}
	checkGenerationInfo(t, c)

	// The single-prompt helper; mock-echo shows the prompt arrived as sent.
	out, err := llms.GenerateFromSinglePrompt(ctx, langchainGo(t, "mock-echo"), "hello from langchaingo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "hello from langchaingo") {
		t.Errorf("mock-echo answered %q", out)
	}
}

// TestLangchaingoStream streams with llms.WithStreamingFunc: the chunks arrive one by one, make
// up the returned content, and match the non-streamed answer.
func TestLangchaingoStream(t *testing.T) {
	ctx := testContext(t)
	llm := langchainGo(t, "mock-chat")
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Tell me a story.")}
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
	if chunks < 2 || streamed.Len() == 0 || streamed.String() != resp.Choices[0].Content {
		t.Errorf("%d chunks %q; returned content %q", chunks, streamed.String(), resp.Choices[0].Content)
	}
	if resp.Choices[0].StopReason != "stop" {
		t.Errorf("stop reason %q", resp.Choices[0].StopReason)
	}
	whole, err := llm.GenerateContent(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Choices[0].Content != resp.Choices[0].Content {
		t.Errorf("streamed %q, JSON %q", resp.Choices[0].Content, whole.Choices[0].Content)
	}
}

// availableTools is the tool list of langchaingo's examples/openai-function-call-example.
var availableTools = []llms.Tool{
	{
		Type: "function",
		Function: &llms.FunctionDefinition{
			Name:        "getCurrentWeather",
			Description: "Get the current weather in a given location",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"location": map[string]any{
						"type":        "string",
						"description": "The city and state, e.g. San Francisco, CA",
					},
					"unit": map[string]any{
						"type": "string",
						"enum": []string{"fahrenheit", "celsius"},
					},
				},
				"required": []string{"location"},
			},
		},
	},
}

// updateMessageHistory is the example's: the assistant's text as a text part, then its tool
// calls as parts of the same AI message.
func updateMessageHistory(messageHistory []llms.MessageContent, resp *llms.ContentResponse) []llms.MessageContent {
	respchoice := resp.Choices[0]
	assistantResponse := llms.TextParts(llms.ChatMessageTypeAI, respchoice.Content)
	for _, tc := range respchoice.ToolCalls {
		assistantResponse.Parts = append(assistantResponse.Parts, tc)
	}
	return append(messageHistory, assistantResponse)
}

// executeToolCalls is the example's: each call's result goes back as a tool message holding an
// llms.ToolCallResponse. The weather itself is a stub (the mock's locations are made up).
func executeToolCalls(t *testing.T, messageHistory []llms.MessageContent, resp *llms.ContentResponse) []llms.MessageContent {
	t.Helper()
	for _, toolCall := range resp.Choices[0].ToolCalls {
		if toolCall.FunctionCall.Name != "getCurrentWeather" {
			t.Fatalf("unsupported tool: %s", toolCall.FunctionCall.Name)
		}
		var args struct {
			Location *string `json:"location"`
			Unit     string  `json:"unit"`
		}
		if err := json.Unmarshal([]byte(toolCall.FunctionCall.Arguments), &args); err != nil || args.Location == nil {
			t.Fatalf("arguments %q: %v", toolCall.FunctionCall.Arguments, err)
		}
		response, _ := json.Marshal("72 and sunny")
		messageHistory = append(messageHistory, llms.MessageContent{
			Role: llms.ChatMessageTypeTool,
			Parts: []llms.ContentPart{
				llms.ToolCallResponse{
					ToolCallID: toolCall.ID,
					Name:       toolCall.FunctionCall.Name,
					Content:    string(response),
				},
			},
		})
	}
	return messageHistory
}

// TestLangchaingoToolRoundTrip follows langchaingo's examples/openai-function-call-example,
// non-streamed and streamed: the model's tool call, the example's history update and tool
// results, the answer after the results, and the example's own follow-up question.
func TestLangchaingoToolRoundTrip(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		name := "json"
		if streaming {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			llm := langchainGo(t, "mock-tools")
			opts := []llms.CallOption{llms.WithTools(availableTools)}
			if streaming {
				opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
			}
			messageHistory := []llms.MessageContent{
				llms.TextParts(llms.ChatMessageTypeHuman, "What is the weather like in Boston and Chicago?"),
			}
			resp, err := llm.GenerateContent(ctx, messageHistory, opts...)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Choices[0].ToolCalls
			if len(calls) != 1 || calls[0].ID == "" || calls[0].FunctionCall == nil || calls[0].FunctionCall.Name != "getCurrentWeather" {
				t.Fatalf("tool calls %+v", calls)
			}
			if resp.Choices[0].StopReason != "tool_calls" {
				t.Errorf("stop reason %q", resp.Choices[0].StopReason)
			}
			messageHistory = updateMessageHistory(messageHistory, resp)
			messageHistory = executeToolCalls(t, messageHistory, resp)

			// The answer to the tool result.
			final, err := llm.GenerateContent(ctx, messageHistory, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if c := final.Choices[0]; len(c.ToolCalls) != 0 || strings.TrimSpace(c.Content) == "" || c.StopReason != "stop" {
				t.Errorf("answer after the tool result %+v", c)
			}
			if !streaming {
				checkGenerationInfo(t, final.Choices[0])
			}

			// The example's next turn: a human question after the tool results. mock-tools,
			// offered tools and ending on a user message, calls the tool again.
			messageHistory = append(messageHistory, llms.TextParts(llms.ChatMessageTypeHuman, "Can you compare the two?"))
			again, err := llm.GenerateContent(ctx, messageHistory, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if c := again.Choices[0]; len(c.ToolCalls) == 0 && strings.TrimSpace(c.Content) == "" {
				t.Errorf("follow-up answer %+v", c)
			}
		})
	}
}

// TestLangchaingoStreamingFunctionCall is langchaingo's
// examples/openai-function-call-streaming-example: three tools described with its jsonschema
// package, a streamed request; the mock calls each tool (parallel calls), and langchaingo
// assembles them from the deltas.
func TestLangchaingoStreamingFunctionCall(t *testing.T) {
	def := func(extra map[string]jsonschema.Definition, required ...string) jsonschema.Definition {
		props := map[string]jsonschema.Definition{
			"rationale": {Type: jsonschema.String, Description: "The rationale for choosing this function call with these parameters"},
		}
		for k, v := range extra {
			props[k] = v
		}
		return jsonschema.Definition{Type: jsonschema.Object, Properties: props, Required: append([]string{"rationale"}, required...)}
	}
	location := map[string]jsonschema.Definition{
		"location": {Type: jsonschema.String, Description: "The city and state, e.g. San Francisco, CA"},
		"unit":     {Type: jsonschema.String, Enum: []string{"celsius", "fahrenheit"}},
	}
	tools := []llms.Tool{
		{Type: "function", Function: &llms.FunctionDefinition{Name: "getCurrentWeather", Description: "Get the current weather in a given location",
			Parameters: def(location, "location")}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "getTomorrowWeather", Description: "Get the predicted weather in a given location",
			Parameters: def(location, "location")}},
		{Type: "function", Function: &llms.FunctionDefinition{Name: "getSuggestedPrompts", Description: "Given the user's input prompt suggest some related prompts",
			Parameters: def(map[string]jsonschema.Definition{
				"suggestions": {Type: jsonschema.Array, Items: &jsonschema.Definition{Type: jsonschema.String, Description: "A suggested prompt"}},
			}, "suggestions")}},
	}
	required := map[string][]string{
		"getCurrentWeather":   {"rationale", "location"},
		"getTomorrowWeather":  {"rationale", "location"},
		"getSuggestedPrompts": {"rationale", "suggestions"},
	}

	llm := langchainGo(t, "mock-tools")
	chunks := 0
	resp, err := llm.GenerateContent(testContext(t),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "What is the weather like in Boston?")},
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			chunks++
			return nil
		}),
		llms.WithTools(tools))
	if err != nil {
		t.Fatal(err)
	}
	choice1 := resp.Choices[0]
	if choice1.FuncCall == nil || len(choice1.ToolCalls) == 0 {
		t.Fatalf("no function call: %+v", choice1)
	}
	seen := map[string]bool{}
	for _, tc := range choice1.ToolCalls {
		keys, ok := required[tc.FunctionCall.Name]
		if !ok || tc.ID == "" || seen[tc.ID] {
			t.Fatalf("tool call %+v (of %d)", tc, len(choice1.ToolCalls))
		}
		seen[tc.ID] = true
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.FunctionCall.Arguments), &args); err != nil {
			t.Fatalf("%s arguments %q: %v", tc.FunctionCall.Name, tc.FunctionCall.Arguments, err)
		}
		for _, k := range keys {
			if _, ok := args[k]; !ok {
				t.Errorf("%s arguments %q: %s missing", tc.FunctionCall.Name, tc.FunctionCall.Arguments, k)
			}
		}
	}
	if choice1.FuncCall.Name != choice1.ToolCalls[0].FunctionCall.Name {
		t.Errorf("FuncCall %+v, first tool call %+v", choice1.FuncCall, choice1.ToolCalls[0].FunctionCall)
	}
	if chunks == 0 {
		t.Error("the streaming func was never called")
	}
}

// TestLangchaingoJSONMode: llms.WithJSONMode is response_format json_object.
func TestLangchaingoJSONMode(t *testing.T) {
	llm := langchainGo(t, "mock-chat")
	resp, err := llm.GenerateContent(testContext(t),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Answer in JSON.")}, llms.WithJSONMode())
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(resp.Choices[0].Content), &v); err != nil || len(v) == 0 {
		t.Errorf("%q: %v", resp.Choices[0].Content, err)
	}
}
