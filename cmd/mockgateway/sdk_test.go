package main

// End-to-end tests with the official Go SDK (github.com/openai/openai-go/v3): the real service
// runs through run on port 0, and an unmodified client talks to it. Where this file and the
// SDK disagree with docs/protocol.md, the SDK is the judge.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"
)

const chatRoute = "/v1/chat/completions"

// slowCatalog is a catalog with one mock whose stream takes about 2.5 s (50 tokens, 50 ms
// apart), to hold streams and requests open.
const slowCatalog = `models:
  - id: mock-slow
    kind: mock
    behavior: chat
    default_tokens: 50
    capabilities: {streaming: true, tools: false}
    latency: {between_chunks: 50ms}
`

// writeSlowCatalog writes slowCatalog to a temporary file and returns its path.
func writeSlowCatalog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(slowCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sdkClient returns an SDK client for in with a dummy key and no retries, on a transport of its
// own whose idle connections are closed when the test ends. opts come last and win.
func sdkClient(t *testing.T, in *instance, opts ...option.RequestOption) (openai.Client, *http.Transport) {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	base := []option.RequestOption{
		option.WithBaseURL(in.URL + "/v1"),
		option.WithAPIKey("dummy"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	}
	return openai.NewClient(append(base, opts...)...), tr
}

// userChat is a request with one user message.
func userChat(model, text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
}

// checkAPIError asserts that err is the SDK's *openai.Error with the contract's status, type,
// code and param, and that the response carried an x-request-id.
func checkAPIError(t *testing.T, err error, status int, typ, code, param string) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error = %v (%T), want *openai.Error", err, err)
	}
	if apiErr.StatusCode != status || apiErr.Type != typ || apiErr.Code != code || apiErr.Param != param {
		t.Errorf("got %d type=%q code=%q param=%q, want %d type=%q code=%q param=%q (raw %s)",
			apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Param, status, typ, code, param, apiErr.RawJSON())
	}
	if apiErr.Message == "" {
		t.Errorf("empty error message (raw %s)", apiErr.RawJSON())
	}
	if apiErr.Response == nil || apiErr.Response.Header.Get("X-Request-Id") == "" {
		t.Error("the error response has no x-request-id")
	}
	return apiErr
}

// waitForChatLog waits for the access log line of the chat request.
func waitForChatLog(t *testing.T, in *instance) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, rec := range in.Logs.Records(t) {
			if rec["msg"] == "request" && rec["route"] == chatRoute {
				return rec
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no access log line for %s in:\n%s", chatRoute, strings.Join(in.Logs.Lines(), "\n"))
	return nil
}

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

func TestSDKModels(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()

	page, err := client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.OwnedBy != "mockgateway" || m.Created != 1767225600 {
			t.Errorf("model %s: object=%q owned_by=%q created=%d", m.ID, m.Object, m.OwnedBy, m.Created)
		}
	}
	slices.Sort(ids)
	if want := []string{"mock-chat", "mock-echo", "mock-flaky", "mock-gateway", "mock-slow", "mock-tools"}; !slices.Equal(ids, want) {
		t.Errorf("listed ids = %v, want %v (external models must not be listed)", ids, want)
	}

	// The auto-pager must see the same list and stop: the list has no next page.
	var paged []string
	iter := client.Models.ListAutoPaging(ctx)
	for iter.Next() {
		paged = append(paged, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(paged)
	if !slices.Equal(paged, ids) {
		t.Errorf("auto-paged ids = %v, want %v", paged, ids)
	}

	for _, id := range []string{"mock-echo", "mock-chat", "mock-tools"} {
		m, err := client.Models.Get(ctx, id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		if m.ID != id || m.Object != "model" {
			t.Errorf("Get(%s) = %+v", id, m)
		}
	}
	for _, id := range []string{"gpt-4o", "claude-sonnet-4", "no-such-model"} {
		_, err := client.Models.Get(ctx, id)
		checkAPIError(t, err, 404, "invalid_request_error", "model_not_found", "model")
	}
}

func TestSDKChatEcho(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	tests := []struct {
		name     string
		messages []openai.ChatCompletionMessageParamUnion
		want     string
	}{
		{"one user message", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello there")}, "echo: hello there"},
		{"unicode", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("grüße, 世界!")}, "echo: grüße, 世界!"},
		{"last user message of a conversation", []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("be brief"),
			openai.UserMessage("first question"),
			openai.AssistantMessage("first answer"),
			openai.UserMessage("second question"),
		}, "echo: second question"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw *http.Response
			resp, err := client.Chat.Completions.New(context.Background(),
				openai.ChatCompletionNewParams{Model: "mock-echo", Messages: tc.messages},
				option.WithResponseInto(&raw))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Choices) != 1 {
				t.Fatalf("choices = %d", len(resp.Choices))
			}
			c := resp.Choices[0]
			if c.Message.Content != tc.want || c.Message.Role != "assistant" || c.FinishReason != "stop" {
				t.Errorf("choice = content %q role %q finish %q, want content %q", c.Message.Content, c.Message.Role, c.FinishReason, tc.want)
			}
			if !strings.HasPrefix(resp.ID, "chatcmpl-") || resp.Object != "chat.completion" || resp.Model != "mock-echo" {
				t.Errorf("identity: id=%q object=%q model=%q", resp.ID, resp.Object, resp.Model)
			}
			u := resp.Usage
			if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage = %+v", u)
			}
			if raw.Header.Get("X-Request-Id") == "" {
				t.Error("no x-request-id")
			}
			if v := raw.Header.Get("Openai-Version"); v != "2020-10-01" {
				t.Errorf("openai-version = %q", v)
			}
		})
	}
}

func TestSDKStreamingMatchesJSON(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()
	tests := []struct {
		name         string
		n            int64
		includeUsage bool
	}{
		{"one choice", 1, false},
		{"one choice with usage", 1, true},
		{"three choices with usage", 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params := userChat("mock-chat", "Tell me about rivers.")
			if tc.n != 1 {
				params.N = openai.Int(tc.n)
			}
			want, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}

			if tc.includeUsage {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			var raw *http.Response
			stream := client.Chat.Completions.NewStreaming(ctx, params, option.WithResponseInto(&raw))
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				if !acc.AddChunk(stream.Current()) {
					t.Fatalf("the accumulator rejected chunk %s", stream.Current().RawJSON())
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if ct := raw.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" || raw.Header.Get("X-Request-Id") == "" {
				t.Errorf("stream headers: content-type %q, x-request-id %q", ct, raw.Header.Get("X-Request-Id"))
			}

			if !strings.HasPrefix(acc.ID, "chatcmpl-") || acc.Model != "mock-chat" {
				t.Errorf("accumulated identity: id=%q model=%q", acc.ID, acc.Model)
			}
			if len(acc.Choices) != len(want.Choices) {
				t.Fatalf("stream has %d choices, JSON %d", len(acc.Choices), len(want.Choices))
			}
			for i, got := range acc.Choices {
				w := want.Choices[i]
				if got.Index != int64(i) || got.Message.Content != w.Message.Content {
					t.Errorf("choice %d: stream content %q, JSON content %q", i, got.Message.Content, w.Message.Content)
				}
				if got.FinishReason == "" || got.FinishReason != w.FinishReason {
					t.Errorf("choice %d: stream finish_reason %q, JSON %q", i, got.FinishReason, w.FinishReason)
				}
			}
			u, wu := acc.Usage, want.Usage
			switch {
			case tc.includeUsage && (u.PromptTokens != wu.PromptTokens || u.CompletionTokens != wu.CompletionTokens || u.TotalTokens != wu.TotalTokens):
				t.Errorf("stream usage %+v, JSON usage %+v", u, wu)
			case !tc.includeUsage && u.TotalTokens != 0:
				t.Errorf("usage without include_usage: %+v", u)
			}
		})
	}
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

func TestSDKChatOptions(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()

	uncut, err := client.Chat.Completions.New(ctx, userChat("mock-chat", "Describe the sea."))
	if err != nil {
		t.Fatal(err)
	}
	full := uncut.Choices[0].Message.Content
	if n := uncut.Usage.CompletionTokens; n <= 5 {
		t.Fatalf("the uncut answer has only %d tokens", n)
	}

	answerSchema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"title":  map[string]any{"type": "string", "minLength": 3},
			"rating": map[string]any{"type": "integer", "minimum": 0, "maximum": 10},
			"mood":   map[string]any{"type": "string", "enum": []any{"calm", "stormy"}},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 3},
		},
		"required":             []any{"title", "rating", "mood", "tags"},
		"additionalProperties": false,
	}
	answerValidator := compileSchema(t, answerSchema)

	// cutOf checks an answer cut by stop or the budget: a strict prefix of the uncut one.
	cutOf := func(t *testing.T, got string) {
		t.Helper()
		if !strings.HasPrefix(full, got) || len(got) >= len(full) {
			t.Errorf("cut answer %q is not a strict prefix of %q", got, full)
		}
	}

	tests := []struct {
		name  string
		edit  func(p *openai.ChatCompletionNewParams)
		check func(t *testing.T, resp *openai.ChatCompletion)
	}{
		{"n=3", func(p *openai.ChatCompletionNewParams) { p.N = openai.Int(3) }, func(t *testing.T, resp *openai.ChatCompletion) {
			if len(resp.Choices) != 3 {
				t.Fatalf("choices = %d", len(resp.Choices))
			}
			for i, c := range resp.Choices {
				if c.Index != int64(i) || c.Message.Content == "" || c.FinishReason != "stop" {
					t.Errorf("choice %d: index %d finish %q content %q", i, c.Index, c.FinishReason, c.Message.Content)
				}
			}
			if resp.Usage.CompletionTokens <= uncut.Usage.CompletionTokens {
				t.Errorf("usage of 3 choices %+v is not above one choice's %+v", resp.Usage, uncut.Usage)
			}
		}},
		{"max_tokens", func(p *openai.ChatCompletionNewParams) { p.MaxTokens = openai.Int(5) }, func(t *testing.T, resp *openai.ChatCompletion) {
			c := resp.Choices[0]
			if c.FinishReason != "length" || resp.Usage.CompletionTokens != 5 {
				t.Errorf("finish %q with %d completion tokens, want length with 5", c.FinishReason, resp.Usage.CompletionTokens)
			}
			cutOf(t, c.Message.Content)
		}},
		{"max_completion_tokens wins", func(p *openai.ChatCompletionNewParams) {
			p.MaxTokens = openai.Int(9)
			p.MaxCompletionTokens = openai.Int(3)
		}, func(t *testing.T, resp *openai.ChatCompletion) {
			c := resp.Choices[0]
			if c.FinishReason != "length" || resp.Usage.CompletionTokens != 3 {
				t.Errorf("finish %q with %d completion tokens, want length with 3", c.FinishReason, resp.Usage.CompletionTokens)
			}
			cutOf(t, c.Message.Content)
		}},
		{"stop", func(p *openai.ChatCompletionNewParams) {
			// The third word of the uncut answer is a stop sequence.
			p.Stop.OfStringArray = []string{strings.Fields(full)[2]}
		}, func(t *testing.T, resp *openai.ChatCompletion) {
			c := resp.Choices[0]
			if c.FinishReason != "stop" {
				t.Errorf("finish %q, want stop", c.FinishReason)
			}
			if strings.Contains(c.Message.Content, strings.Fields(full)[2]) {
				t.Errorf("content %q contains the stop sequence", c.Message.Content)
			}
			cutOf(t, c.Message.Content)
		}},
		{"response_format json_schema", func(p *openai.ChatCompletionNewParams) {
			p.ResponseFormat.OfJSONSchema = &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "review", Strict: openai.Bool(true), Schema: answerSchema},
			}
		}, func(t *testing.T, resp *openai.ChatCompletion) {
			c := resp.Choices[0]
			if err := validateJSON(answerValidator, c.Message.Content); err != nil {
				t.Errorf("content %q is not an instance of the schema: %v", c.Message.Content, err)
			}
			if c.FinishReason != "stop" {
				t.Errorf("finish %q, want stop", c.FinishReason)
			}
		}},
		{"response_format json_object", func(p *openai.ChatCompletionNewParams) {
			p.ResponseFormat.OfJSONObject = &openai.ResponseFormatJSONObjectParam{}
		}, func(t *testing.T, resp *openai.ChatCompletion) {
			var obj map[string]any
			if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &obj); err != nil {
				t.Errorf("content %q is not a JSON object: %v", resp.Choices[0].Message.Content, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params := userChat("mock-chat", "Describe the sea.")
			tc.edit(&params)
			resp, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Choices) == 0 {
				t.Fatal("no choices")
			}
			if u := resp.Usage; u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage = %+v", u)
			}
			tc.check(t, resp)
		})
	}
}

func TestSDKErrors(t *testing.T) {
	// What the SDK sends without a key is part of the test, so OPENAI_API_KEY must not leak in
	// from the environment (t.Setenv forbids t.Parallel, which is why this test is serial).
	t.Setenv("OPENAI_API_KEY", "")
	if err := os.Unsetenv("OPENAI_API_KEY"); err != nil {
		t.Fatal(err)
	}

	in := startService(t, nil)
	keyed := startService(t, nil, "--api-key", "test-local-key")
	small := startService(t, nil, "--max-body-bytes", "2048")
	client, _ := sdkClient(t, in)

	// noKey is a client configured as a user would without a key: no WithAPIKey at all. It
	// records the Authorization header the SDK actually sent.
	var sentAuth []string
	noKeyTr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(noKeyTr.CloseIdleConnections)
	noKey := openai.NewClient(
		option.WithBaseURL(keyed.URL+"/v1"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: noKeyTr}),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			sentAuth = append(sentAuth, r.Header.Values("Authorization")...)
			return next(r)
		}),
	)
	wrongKey, _ := sdkClient(t, keyed, option.WithAPIKey("wrong-key-7f3a"))
	rightKey, _ := sdkClient(t, keyed, option.WithAPIKey("test-local-key"))
	smallClient, _ := sdkClient(t, small)

	chat := func(c openai.Client, p openai.ChatCompletionNewParams, opts ...option.RequestOption) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.Chat.Completions.New(ctx, p, opts...)
			return err
		}
	}
	echo := userChat("mock-echo", "hi")
	with := func(edit func(p *openai.ChatCompletionNewParams)) openai.ChatCompletionNewParams {
		p := userChat("mock-echo", "hi")
		edit(&p)
		return p
	}
	const badReq = "invalid_request_error"
	tests := []struct {
		name      string
		call      func(context.Context) error
		status    int
		typ, code string
		param     string
	}{
		{name: "unknown field", call: chat(client, echo, option.WithJSONSet("bogus_field", 1)),
			status: 400, typ: badReq, code: "unknown_parameter", param: "bogus_field"},
		{name: "audio output", call: chat(client, echo, option.WithJSONSet("audio", map[string]any{"voice": "alloy", "format": "mp3"})),
			status: 400, typ: badReq, code: "unsupported_parameter", param: "audio"},
		{name: "audio modality", call: chat(client, with(func(p *openai.ChatCompletionNewParams) { p.Modalities = []string{"text", "audio"} })),
			status: 400, typ: badReq, code: "unsupported_parameter", param: "modalities"},
		{name: "logprobs", call: chat(client, with(func(p *openai.ChatCompletionNewParams) { p.Logprobs = openai.Bool(true) })),
			status: 400, typ: badReq, code: "unsupported_parameter", param: "logprobs"},
		{name: "temperature out of range", call: chat(client, with(func(p *openai.ChatCompletionNewParams) { p.Temperature = openai.Float(3) })),
			status: 400, typ: badReq, code: "invalid_value", param: "temperature"},
		{name: "budget above the ceiling", call: chat(client, with(func(p *openai.ChatCompletionNewParams) { p.MaxTokens = openai.Int(5000) })),
			status: 400, typ: badReq, code: "invalid_value", param: "max_tokens"},
		{name: "messages missing", call: chat(client, echo, option.WithJSONDel("messages")),
			status: 400, typ: badReq, code: "missing_required_parameter", param: "messages"},
		{name: "external model", call: chat(client, userChat("gpt-4o", "hi")),
			status: 400, typ: badReq, code: "model_not_executable", param: "model"},
		{name: "tools to mock-echo", call: chat(client, with(func(p *openai.ChatCompletionNewParams) {
			p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "f"})}
		})), status: 400, typ: badReq, code: "tools_not_supported", param: "tools"},
		{name: "unknown model", call: chat(client, userChat("no-such-model", "hi")),
			status: 404, typ: badReq, code: "model_not_found", param: "model"},
		{name: "embeddings surface", call: func(ctx context.Context) error {
			_, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
				Model: "text-embedding-3-small", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")},
			})
			return err
		}, status: 404, typ: badReq, code: "unsupported_surface"},
		{name: "missing key", call: chat(noKey, echo),
			status: 401, typ: badReq, code: "missing_api_key"},
		{name: "wrong key", call: chat(wrongKey, echo),
			status: 401, typ: badReq, code: "invalid_api_key"},
		{name: "wrong key on models", call: func(ctx context.Context) error {
			_, err := wrongKey.Models.List(ctx)
			return err
		}, status: 401, typ: badReq, code: "invalid_api_key"},
		{name: "body over the limit", call: chat(smallClient, userChat("mock-echo", strings.Repeat("a", 4096))),
			status: 413, typ: badReq, code: "request_too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(context.Background())
			checkAPIError(t, err, tc.status, tc.typ, tc.code, tc.param)
		})
	}
	if len(sentAuth) != 0 {
		t.Errorf("without a key the SDK sent Authorization %q", sentAuth)
	}

	// The right key is accepted.
	resp, err := rightKey.Chat.Completions.New(context.Background(), echo)
	if err != nil || resp.Choices[0].Message.Content != "echo: hi" {
		t.Errorf("right key: %v", err)
	}
	for _, line := range keyed.Logs.Lines() {
		if strings.Contains(line, "test-local-key") || strings.Contains(line, "wrong-key-7f3a") {
			t.Errorf("a key reached the log: %s", line)
		}
	}
}

func TestSDKServerBusy(t *testing.T) {
	t.Parallel()
	in := startService(t, nil, "--max-concurrent", "1", "--catalog", writeSlowCatalog(t))
	client, _ := sdkClient(t, in)
	ctx := context.Background()

	// A stream holds the only slot while it is open.
	stream := client.Chat.Completions.NewStreaming(ctx, userChat("mock-slow", "hold on"))
	if !stream.Next() {
		t.Fatalf("stream: %v", stream.Err())
	}

	_, err := client.Models.List(ctx)
	apiErr := checkAPIError(t, err, 429, "rate_limit_error", "server_busy", "")
	if apiErr.Response.Header.Get("Retry-After") == "" {
		t.Error("429 without retry-after")
	}
	_, err = client.Chat.Completions.New(ctx, userChat("mock-slow", "me too"))
	checkAPIError(t, err, 429, "rate_limit_error", "server_busy", "")

	// Closing the stream frees the slot.
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := client.Models.List(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot was not freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inFlight reads mockgateway_http_requests_in_flight from /metrics.
func inFlight(t *testing.T, c *http.Client, in *instance) float64 {
	t.Helper()
	resp, err := c.Get(in.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "mockgateway_http_requests_in_flight "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatal("no mockgateway_http_requests_in_flight in /metrics")
	return 0
}

func TestSDKShutdown(t *testing.T) {
	t.Parallel()

	t.Run("open stream ends with shutting_down", func(t *testing.T) {
		t.Parallel()
		in := startService(t, nil, "--catalog", writeSlowCatalog(t), "--drain-timeout", "200ms")
		client, _ := sdkClient(t, in)
		stream := client.Chat.Completions.NewStreaming(context.Background(), userChat("mock-slow", "a long story"))
		defer stream.Close()
		for i := range 2 {
			if !stream.Next() {
				t.Fatalf("chunk %d: %v", i, stream.Err())
			}
		}

		stopped := make(chan error, 1)
		go func() { stopped <- in.Stop() }()
		chunks := 2
		for stream.Next() {
			chunks++
		}
		if chunks >= 50 {
			t.Errorf("the stream ran to its end (%d chunks)", chunks)
		}
		err := stream.Err()
		var streamErr *ssestream.StreamError
		if !errors.As(err, &streamErr) {
			t.Fatalf("stream error = %v (%T), want *ssestream.StreamError", err, err)
		}
		var frame struct {
			Error struct{ Message, Type, Code string }
		}
		if err := json.Unmarshal(streamErr.Event.Data, &frame); err != nil {
			t.Fatalf("error frame %q: %v", streamErr.Event.Data, err)
		}
		if frame.Error.Code != "shutting_down" || frame.Error.Type != "server_error" || frame.Error.Message == "" {
			t.Errorf("error frame = %s", streamErr.Event.Data)
		}
		if !strings.Contains(err.Error(), "shutting_down") {
			t.Errorf("the SDK's error message does not name shutting_down: %v", err)
		}

		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("Stop: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Stop did not return")
		}
		rec := waitForChatLog(t, in)
		if rec["stream_outcome"] != "aborted" || rec["error_code"] != "shutting_down" {
			t.Errorf("access log: %v", rec)
		}
	})

	t.Run("JSON request in flight completes", func(t *testing.T) {
		t.Parallel()
		in := startService(t, nil, "--catalog", writeSlowCatalog(t), "--drain-timeout", "200ms")
		client, tr := sdkClient(t, in)
		metrics := &http.Client{Transport: tr}
		idle := inFlight(t, metrics, in)

		params := userChat("mock-slow", "short answer please")
		params.MaxTokens = openai.Int(6) // 6 tokens 50 ms apart: about 300 ms, past the drain deadline
		type result struct {
			resp *openai.ChatCompletion
			raw  *http.Response
			err  error
		}
		done := make(chan result, 1)
		go func() {
			var r result
			r.resp, r.err = client.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&r.raw))
			done <- r
		}()
		for deadline := time.Now().Add(5 * time.Second); inFlight(t, metrics, in) <= idle; {
			if time.Now().After(deadline) {
				t.Fatal("the chat request never arrived")
			}
			time.Sleep(5 * time.Millisecond)
		}

		if err := in.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("in-flight request: %v", r.err)
		}
		if r.raw.StatusCode != 200 || r.resp.Choices[0].FinishReason != "length" || r.resp.Usage.CompletionTokens != 6 {
			t.Errorf("in-flight request: status %d finish %q usage %+v", r.raw.StatusCode, r.resp.Choices[0].FinishReason, r.resp.Usage)
		}
	})
}

// TestSDKClientDisconnect is serial: goleak must not see other tests' goroutines.
func TestSDKClientDisconnect(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	in := startService(t, nil, "--catalog", writeSlowCatalog(t))
	client, tr := sdkClient(t, in)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := client.Chat.Completions.NewStreaming(ctx, userChat("mock-slow", "a long story"))
	for i := range 2 {
		if !stream.Next() {
			t.Fatalf("chunk %d: %v", i, stream.Err())
		}
	}
	cancel()
	for stream.Next() {
		// Chunks already buffered may still come; the cancellation surfaces after them.
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream error after cancel = %v, want context.Canceled", err)
	}
	stream.Close()

	rec := waitForChatLog(t, in)
	if rec["stream_outcome"] != "client_disconnected" {
		t.Errorf("stream_outcome = %v", rec["stream_outcome"])
	}
	if c, _ := rec["chunks"].(float64); c < 2 || c > 10 {
		t.Errorf("chunks = %v: generation did not stop soon after the client left", rec["chunks"])
	}

	tr.CloseIdleConnections()
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
}
