package protocol

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// Requests as real clients send them. Each must decode.
func TestDecodeChatRequestClientBodies(t *testing.T) {
	bodies := map[string]string{
		"curl": `{"model": "mock-echo", "messages": [{"role": "user", "content": "Hello!"}]}`,

		// openai-python: client.chat.completions.create(...) sends only what was given.
		"openai-python create": `{"messages":[{"role":"developer","content":"Talk like a pirate."},{"role":"user","content":"How do I check if a Python object is an instance of a class?"}],"model":"mock-chat"}`,
		"openai-python stream": `{"messages":[{"role":"user","content":"Say this is a test"}],"model":"mock-chat","stream":true,"stream_options":{"include_usage":true}}`,
		// client.chat.completions.parse(response_format=Model): strict json_schema.
		"openai-python parse": `{"messages":[{"role":"system","content":"Extract the event information."},{"role":"user","content":"Alice and Bob are going to a science fair on Friday."}],"model":"mock-chat","response_format":{"type":"json_schema","json_schema":{"schema":{"properties":{"name":{"title":"Name","type":"string"},"date":{"title":"Date","type":"string"},"participants":{"items":{"type":"string"},"title":"Participants","type":"array"}},"required":["name","date","participants"],"title":"CalendarEvent","type":"object","additionalProperties":false},"name":"CalendarEvent","strict":true}}}`,
		// messages.append(completion.choices[0].message): model_dump(exclude_unset=True) of the contract's response.
		"openai-python send back message": `{"messages":[{"role":"user","content":"hi"},{"content":"echo: hi","refusal":null,"role":"assistant","annotations":[]},{"role":"user","content":"again"}],"model":"mock-echo","n":2,"temperature":0.2,"seed":42}`,
		// Appending a parse()/stream-helper message: parsed, tool_calls with index and parsed_arguments.
		"openai-python send back parsed tool call": `{"messages":[{"role":"user","content":"weather in Paris?"},{"content":null,"refusal":null,"role":"assistant","annotations":[],"tool_calls":[{"index":0,"id":"call_abc","function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather","parsed_arguments":{"city":"Paris"}},"type":"function"}],"parsed":null},{"role":"tool","tool_call_id":"call_abc","content":"sunny"}],"model":"mock-tools","tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true}}]}`,

		// openai-node: runTools() keeps the parsed message (parsed: null, tool_calls with
		// parsed_arguments, refusal: null, annotations: []) and sends it back with stream: false.
		"openai-node runTools":          `{"model":"mock-tools","messages":[{"role":"user","content":"How is the weather this week?"},{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":"call_1","type":"function","function":{"name":"getWeather","arguments":"{\"location\":\"Paris\"}","parsed_arguments":null}}],"parsed":null},{"role":"tool","tool_call_id":"call_1","content":"{\"temperature\":20}"}],"tool_choice":"auto","tools":[{"type":"function","function":{"name":"getWeather","parameters":{"type":"object","properties":{"location":{"type":"string"}}},"description":"Get the weather"}}],"stream":false}`,
		"openai-node stream":            `{"model":"mock-chat","messages":[{"role":"user","content":"Say this is a test"}],"stream":true}`,
		"openai-node zodResponseFormat": `{"model":"mock-chat","messages":[{"role":"user","content":"solve 8x + 31 = 2"}],"response_format":{"type":"json_schema","json_schema":{"name":"math_response","strict":true,"schema":{"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"explanation":{"type":"string"},"output":{"type":"string"}},"required":["explanation","output"],"additionalProperties":false}},"final_answer":{"type":"string"}},"required":["steps","final_answer"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}}}}`,

		// Vercel AI SDK (@ai-sdk/openai, openai.chat(...)): doGenerate and doStream bodies.
		"vercel generate":  `{"model":"mock-chat","max_tokens":100,"temperature":0,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello"}]}`,
		"vercel stream":    `{"model":"mock-chat","messages":[{"role":"user","content":[{"type":"text","text":"Hello"},{"type":"text","text":"World"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		"vercel tools":     `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":20}"}],"tools":[{"type":"function","function":{"name":"weather","description":"Get the weather","parameters":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":false}}],"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true}}`,
		"vercel object":    `{"model":"mock-chat","messages":[{"role":"user","content":"a recipe"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false},"strict":false,"name":"response","description":"A recipe"}},"seed":7,"stop":["\n\n"],"max_completion_tokens":64,"store":false,"metadata":{"app":"demo"},"parallel_tool_calls":false,"user":"u-1"}`,
		"vercel json mode": `{"model":"mock-chat","messages":[{"role":"user","content":"json please"}],"response_format":{"type":"json_object"}}`,

		// LangChain (ChatOpenAI): defaults it has sent across versions, streaming with usage,
		// and a tool round trip (AIMessage with tool calls has content null).
		"langchain-python invoke":            `{"messages":[{"content":"hi","role":"user"}],"model":"mock-chat","stream":false,"n":1,"temperature":0.7}`,
		"langchain-python stream":            `{"messages":[{"content":"hi","role":"user"}],"model":"mock-chat","stream":true,"stream_options":{"include_usage":true}}`,
		"langchain-python tools":             `{"messages":[{"content":"You are helpful","role":"system"},{"content":"what is 3 * 12?","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"type":"function","id":"call_1","function":{"name":"multiply","arguments":"{\"a\": 3, \"b\": 12}"}}]},{"content":"36","role":"tool","tool_call_id":"call_1"}],"model":"mock-tools","stream":false,"parallel_tool_calls":false,"tool_choice":{"type":"function","function":{"name":"multiply"}},"tools":[{"type":"function","function":{"name":"multiply","description":"Multiply a and b.","parameters":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}}}]}`,
		"langchain-python structured output": `{"messages":[{"content":"Tell me a joke","role":"user"}],"model":"mock-chat","stream":false,"response_format":{"type":"json_schema","json_schema":{"name":"Joke","description":"Joke to tell user.","strict":true,"schema":{"properties":{"setup":{"type":"string"},"punchline":{"type":"string"}},"required":["setup","punchline"],"type":"object","additionalProperties":false}}}}`,
		"langchain-js invoke":                `{"model":"mock-chat","temperature":1,"top_p":1,"frequency_penalty":0,"presence_penalty":0,"n":1,"stream":false,"messages":[{"role":"user","content":"hi","name":"alice"}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeChatRequest([]byte(body), Limits{}); err != nil {
				t.Fatalf("%s param=%q: %s", err.Code, err.Param, err.Message)
			}
		})
	}
}

// TestDecodeChatRequestOpenAIGo marshals requests with the openai-go SDK types exactly as
// client.Chat.Completions.New / NewStreaming would send them, including assistant messages
// rebuilt from the contract's response shapes with Message.ToParam().
func TestDecodeChatRequestOpenAIGo(t *testing.T) {
	// The contract's non-streaming shapes: a text answer and a tool call answer.
	var text, call openai.ChatCompletion
	unmarshalOrFatal(t, `{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"mock-echo",
		"choices":[{"index":0,"message":{"role":"assistant","content":"echo: hi","refusal":null,"annotations":[]},
		"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},
		"system_fingerprint":"fp_mockgateway_4_2","service_tier":"default"}`, &text)
	unmarshalOrFatal(t, `{"id":"chatcmpl-2","object":"chat.completion","created":1767225600,"model":"mock-tools",
		"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
		"tool_calls":[{"id":"call_x","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		"logprobs":null,"finish_reason":"tool_calls"}]}`, &call)

	// A streamed tool call, accumulated the way the SDK's ChatCompletionAccumulator does.
	var acc openai.ChatCompletionAccumulator
	for _, chunk := range []string{
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_y","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`,
		`{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"mock-tools","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	} {
		var c openai.ChatCompletionChunk
		unmarshalOrFatal(t, chunk, &c)
		acc.AddChunk(c)
	}
	if len(acc.Choices) == 0 {
		t.Fatal("accumulator produced no choice")
	}

	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Get the weather"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
		Strict: openai.Bool(true),
	})

	cases := []struct {
		name   string
		params openai.ChatCompletionNewParams
		stream bool
		check  func(*testing.T, *Request)
	}{
		{name: "minimal", params: openai.ChatCompletionNewParams{
			Model:    "mock-echo",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hi")},
		}},
		{name: "streaming with usage", stream: true, params: openai.ChatCompletionNewParams{
			Model:         "mock-chat",
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		}, check: func(t *testing.T, r *Request) {
			if !r.Stream || !r.IncludeUsage {
				t.Errorf("stream %v include_usage %v", r.Stream, r.IncludeUsage)
			}
		}},
		{name: "every supported field", params: openai.ChatCompletionNewParams{
			Model: "mock-tools",
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.DeveloperMessage([]openai.ChatCompletionContentPartTextParam{{Text: "rules"}}),
				openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("a"), openai.TextContentPart("b")}),
			},
			MaxCompletionTokens: openai.Int(64),
			MaxTokens:           openai.Int(32),
			N:                   openai.Int(2),
			Seed:                openai.Int(-7),
			Temperature:         openai.Float(0.5),
			TopP:                openai.Float(0.9),
			PresencePenalty:     openai.Float(0.1),
			FrequencyPenalty:    openai.Float(-0.1),
			LogitBias:           map[string]int64{"50256": -100},
			Logprobs:            openai.Bool(false),
			Stop:                openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", "STOP"}},
			Tools:               []openai.ChatCompletionToolUnionParam{weather},
			ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{
				OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
					Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"},
				},
			},
			ParallelToolCalls:    openai.Bool(false),
			User:                 openai.String("u"),
			SafetyIdentifier:     openai.String("s"),
			PromptCacheKey:       openai.String("k"),
			Metadata:             shared.Metadata{"k": "v"},
			Store:                openai.Bool(false),
			ServiceTier:          openai.ChatCompletionNewParamsServiceTierFlex,
			ReasoningEffort:      shared.ReasoningEffortLow,
			Verbosity:            openai.ChatCompletionNewParamsVerbosityLow,
			PromptCacheRetention: openai.ChatCompletionNewParamsPromptCacheRetentionInMemory,
			PromptCacheOptions:   openai.ChatCompletionNewParamsPromptCacheOptions{Mode: "explicit", Ttl: "30m"},
			Modalities:           []string{"text"},
		}, check: func(t *testing.T, r *Request) {
			if r.MaxTokens != 64 || r.MaxTokensParam != "max_completion_tokens" || r.N != 2 || *r.Seed != -7 ||
				*r.Temperature != 0.5 || !slices.Equal(r.Stop, []string{"END", "STOP"}) || r.ParallelToolCalls ||
				r.ToolChoice != (ToolChoice{Mode: ToolChoiceFunction, Function: "get_weather"}) ||
				len(r.Tools) != 1 || !r.Tools[0].Strict || r.Messages[1].Content != "ab" {
				t.Errorf("decoded %+v", r)
			}
		}},
		{name: "structured output", params: openai.ChatCompletionNewParams{
			Model:    "mock-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "answer",
					Strict: openai.Bool(true),
					Schema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
				}},
			},
		}, check: func(t *testing.T, r *Request) {
			if r.ResponseFormat.Type != FormatJSONSchema || r.ResponseFormat.Name != "answer" || r.ResponseFormat.Schema == nil {
				t.Errorf("response_format %+v", r.ResponseFormat)
			}
		}},
		{name: "conversation sent back with ToParam", params: openai.ChatCompletionNewParams{
			Model: "mock-tools",
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.UserMessage("hi"),
				text.Choices[0].Message.ToParam(),
				openai.UserMessage("weather?"),
				call.Choices[0].Message.ToParam(),
				openai.ToolMessage("sunny", "call_x"),
				acc.Choices[0].Message.ToParam(),
				openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: "cloudy"}}, "call_y"),
			},
			Tools: []openai.ChatCompletionToolUnionParam{weather},
		}, check: func(t *testing.T, r *Request) {
			m := r.Messages
			if m[1].Content != "echo: hi" || len(m[3].ToolCalls) != 1 || m[3].ToolCalls[0].ID != "call_x" ||
				m[3].ToolCalls[0].Arguments != `{"city":"Paris"}` || m[4].ToolCallID != "call_x" ||
				len(m[5].ToolCalls) != 1 || m[5].ToolCalls[0].ID != "call_y" || m[6].Content != "cloudy" {
				t.Errorf("messages %+v", m)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stream { // NewStreaming adds "stream": true to the marshalled params.
				var m map[string]json.RawMessage
				unmarshalOrFatal(t, string(body), &m)
				m["stream"] = json.RawMessage("true")
				body, _ = json.Marshal(m)
			}
			r, apiErr := DecodeChatRequest(body, Limits{})
			if apiErr != nil {
				t.Fatalf("%s param=%q: %s\nbody: %s", apiErr.Code, apiErr.Param, apiErr.Message, body)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func unmarshalOrFatal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}
