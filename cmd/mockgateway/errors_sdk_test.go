package main

// Part of the end-to-end tests with the official Go SDK; sdk_test.go explains the setup.

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

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
		{name: "budget above the model's output limit", call: chat(client, with(func(p *openai.ChatCompletionNewParams) { p.MaxTokens = openai.Int(40000) })),
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
