package main

// The Responses API (POST /v1/responses) with the official Go SDK
// (github.com/openai/openai-go/v3, client.Responses.New and NewStreaming), unmodified, against
// the real service: text, a stream accumulated from its deltas, the stateless function-calling
// loop with mock-tools (the model's function_call sent back as it came, then a
// function_call_output), json_schema structured output, max_output_tokens → incomplete, and
// previous_response_id refused by the stateless mock.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// respWeatherTool is a strict function tool with a nested enum.
func respWeatherTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        "get_weather",
		Description: openai.String("Get the current weather in a city."),
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"city": map[string]any{"type": "string", "description": "City name"},
				"unit": map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
			},
			"required":             []string{"city", "unit"},
			"additionalProperties": false,
		},
		Strict: openai.Bool(true),
	}}
}

// respCitySchema is the json_schema of the structured-output tests.
var respCitySchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city":       map[string]any{"type": "string"},
		"population": map[string]any{"type": "integer"},
		"landmarks":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required":             []string{"city", "population", "landmarks"},
	"additionalProperties": false,
}

func respInput(text string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(text)}
}

// checkRespUsage asserts the usage arithmetic of a finished response.
func checkRespUsage(t *testing.T, r *responses.Response) {
	t.Helper()
	u := r.Usage
	if u.InputTokens <= 0 || u.OutputTokens <= 0 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage = %+v (raw %s)", u, u.RawJSON())
	}
}

// respStream reads a whole Responses stream and checks what every stream promises:
// sequence_number 0, 1, 2, … without a gap, response.created and response.in_progress first,
// one terminal event (the last one). It returns the events.
func respStream(t *testing.T, client openai.Client, params responses.ResponseNewParams, terminal string) []responses.ResponseStreamEventUnion {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := client.Responses.NewStreaming(ctx, params)
	defer stream.Close()
	var events []responses.ResponseStreamEventUnion
	for stream.Next() {
		events = append(events, stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(events) < 3 {
		t.Fatalf("only %d events", len(events))
	}
	for i, ev := range events {
		if ev.SequenceNumber != int64(i) {
			t.Fatalf("event %d (%s) has sequence_number %d", i, ev.Type, ev.SequenceNumber)
		}
	}
	if events[0].Type != "response.created" || events[1].Type != "response.in_progress" {
		t.Errorf("first events %s, %s", events[0].Type, events[1].Type)
	}
	if last := events[len(events)-1]; last.Type != terminal {
		t.Errorf("last event %s, want %s", last.Type, terminal)
	}
	n := 0
	for _, ev := range events {
		switch ev.Type {
		case "response.completed", "response.incomplete", "response.failed", "error":
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d terminal events, want 1", n)
	}
	return events
}

func TestResponsesGoSDKText(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	var raw *http.Response
	r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        "mock-chat",
		Instructions: openai.String("You are a helpful assistant."),
		Input:        respInput("Tell me about Paris."),
	}, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if raw.Header.Get("X-Request-Id") == "" {
		t.Error("no x-request-id")
	}
	if !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.Status != responses.ResponseStatusCompleted || r.Model != "mock-chat" {
		t.Errorf("id=%q object=%q status=%q model=%q", r.ID, r.Object, r.Status, r.Model)
	}
	if len(r.Output) != 1 || r.Output[0].Type != "message" {
		t.Fatalf("output = %s", r.RawJSON())
	}
	msg := r.Output[0].AsMessage()
	if msg.Role != "assistant" || msg.Status != "completed" || len(msg.Content) != 1 || msg.Content[0].Type != "output_text" {
		t.Errorf("message = %s", msg.RawJSON())
	}
	if r.OutputText() == "" {
		t.Error("empty output text")
	}
	checkRespUsage(t, r)
}

func TestResponsesGoSDKStream(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	params := responses.ResponseNewParams{
		Model: "mock-chat",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Be brief.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage("Tell me about Paris.", responses.EasyInputMessageRoleUser),
		}},
	}
	events := respStream(t, client, params, "response.completed")
	var text strings.Builder
	deltas := 0
	var doneText string
	for _, ev := range events {
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
			deltas++
		case "response.output_text.done":
			doneText = ev.Text
		}
	}
	final := events[len(events)-1].Response
	if final.Status != responses.ResponseStatusCompleted {
		t.Errorf("status %q", final.Status)
	}
	if text.Len() == 0 || text.String() != final.OutputText() || doneText != text.String() {
		t.Errorf("deltas %q, output_text.done %q, final %q", text.String(), doneText, final.OutputText())
	}
	checkRespUsage(t, &final)
	if int64(deltas) != final.Usage.OutputTokens {
		t.Errorf("%d deltas, usage.output_tokens %d", deltas, final.Usage.OutputTokens)
	}
	// The same request without stream gives the same text.
	whole, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if whole.OutputText() != text.String() {
		t.Errorf("JSON answer %q, stream %q", whole.OutputText(), text.String())
	}
}

func TestResponsesGoSDKToolRoundTrip(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser),
	}
	params := responses.ResponseNewParams{
		Model: "mock-tools",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Tools: []responses.ToolUnionParam{respWeatherTool()},
	}
	first, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var calls []responses.ResponseFunctionToolCall
	for _, item := range first.Output {
		if item.Type == "function_call" {
			calls = append(calls, item.AsFunctionCall())
		}
	}
	if len(calls) != 1 {
		t.Fatalf("want one function call, got %s", first.RawJSON())
	}
	call := calls[0]
	var args struct {
		City string `json:"city"`
		Unit string `json:"unit"`
	}
	dec := json.NewDecoder(strings.NewReader(call.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil || args.City == "" || (args.Unit != "celsius" && args.Unit != "fahrenheit") {
		t.Fatalf("arguments %q: %v", call.Arguments, err)
	}
	if call.Name != "get_weather" || call.CallID == "" || call.ID == "" {
		t.Errorf("call = %s", call.RawJSON())
	}
	// Send the call back as it came, then its output: the whole input, no previous_response_id.
	p := call.ToParam()
	input = append(input,
		responses.ResponseInputItemUnionParam{OfFunctionCall: &p},
		responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(call.CallID),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(`{"temperature":21,"unit":"celsius"}`)},
		}},
	)
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	second, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if second.Status != responses.ResponseStatusCompleted || !strings.HasPrefix(second.OutputText(), "Based on the tool result,") {
		t.Errorf("status %q, text %q", second.Status, second.OutputText())
	}
	for _, item := range second.Output {
		if item.Type == "function_call" {
			t.Errorf("a second call: %s", second.RawJSON())
		}
	}
	checkRespUsage(t, second)

	// Streamed: the argument deltas add up to the call's arguments.
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input[:1]}
	events := respStream(t, client, params, "response.completed")
	var joined strings.Builder
	var done string
	deltas := 0
	for _, ev := range events {
		switch ev.Type {
		case "response.function_call_arguments.delta":
			joined.WriteString(ev.Delta)
			deltas++
		case "response.function_call_arguments.done":
			done = ev.Arguments
		}
	}
	final := events[len(events)-1].Response
	var streamed string
	for _, item := range final.Output {
		if item.Type == "function_call" {
			streamed = item.AsFunctionCall().Arguments
		}
	}
	if deltas < 2 || joined.String() != done || done != streamed || streamed == "" {
		t.Errorf("%d argument deltas %q, done %q, final %q", deltas, joined.String(), done, streamed)
	}
	if int64(deltas) != final.Usage.OutputTokens {
		t.Errorf("%d argument deltas, usage.output_tokens %d", deltas, final.Usage.OutputTokens)
	}
}

func TestResponsesGoSDKJSONSchema(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	sch := compileSchema(t, respCitySchema)
	params := responses.ResponseNewParams{
		Model: "mock-chat",
		Input: respInput("Describe Paris as JSON."),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
				Name:   "city",
				Schema: respCitySchema,
				Strict: openai.Bool(true),
			},
		}},
	}
	r, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != responses.ResponseStatusCompleted {
		t.Errorf("status %q", r.Status)
	}
	if err := validateJSON(sch, r.OutputText()); err != nil {
		t.Errorf("output %q is not an instance of the schema: %v", r.OutputText(), err)
	}
	var city struct {
		City       string   `json:"city"`
		Population int64    `json:"population"`
		Landmarks  []string `json:"landmarks"`
	}
	if err := json.Unmarshal([]byte(r.OutputText()), &city); err != nil {
		t.Errorf("unmarshal: %v", err)
	}
	events := respStream(t, client, params, "response.completed")
	var text strings.Builder
	for _, ev := range events {
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
	}
	if err := validateJSON(sch, text.String()); err != nil {
		t.Errorf("streamed output %q is not an instance of the schema: %v", text.String(), err)
	}
}

func TestResponsesGoSDKMaxOutputTokens(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	params := responses.ResponseNewParams{
		Model:           "mock-chat",
		Input:           respInput("Tell me a long story about Paris and its many bridges over the Seine."),
		MaxOutputTokens: openai.Int(16),
	}
	r, err := client.Responses.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != responses.ResponseStatusIncomplete || r.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("status %q, incomplete_details %s", r.Status, r.IncompleteDetails.RawJSON())
	}
	if r.Usage.OutputTokens != 16 || r.MaxOutputTokens != 16 {
		t.Errorf("output_tokens %d, max_output_tokens %d", r.Usage.OutputTokens, r.MaxOutputTokens)
	}
	events := respStream(t, client, params, "response.incomplete")
	final := events[len(events)-1].Response
	var text strings.Builder
	deltas := 0
	for _, ev := range events {
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
			deltas++
		}
	}
	if final.Status != responses.ResponseStatusIncomplete || final.IncompleteDetails.Reason != "max_output_tokens" || deltas != 16 {
		t.Errorf("stream: status %q, reason %q, %d deltas", final.Status, final.IncompleteDetails.Reason, deltas)
	}
	if text.String() != r.OutputText() {
		t.Errorf("stream %q, JSON %q", text.String(), r.OutputText())
	}
}

func TestResponsesGoSDKPreviousResponseID(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()
	first, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "mock-chat", Input: respInput("Tell me about Paris.")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model:              "mock-chat",
		Input:              respInput("And about Lyon?"),
		PreviousResponseID: openai.String(first.ID),
	})
	apiErr := checkAPIError(t, err, 400, "invalid_request_error", "unsupported_parameter", "previous_response_id")
	if id := apiErr.Response.Header.Get("X-Request-Id"); id == "" || !strings.Contains(string(apiErr.RawJSON()), "previous_response_id") {
		t.Errorf("x-request-id %q, error %s", id, apiErr.RawJSON())
	}

	// Streamed, the error comes before the stream starts: an *openai.Error too.
	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model:              "mock-chat",
		Input:              respInput("And about Lyon?"),
		PreviousResponseID: openai.String(first.ID),
	})
	defer stream.Close()
	for stream.Next() {
		t.Errorf("unexpected event %s", stream.Current().Type)
	}
	var streamErr *openai.Error
	if !errors.As(stream.Err(), &streamErr) || streamErr.StatusCode != 400 || streamErr.Code != "unsupported_parameter" {
		t.Errorf("stream error = %v", stream.Err())
	}
}
