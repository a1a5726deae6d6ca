package main

// End-to-end tests with the official Go SDK (github.com/openai/openai-go/v3): the real service
// runs through run on port 0, and an unmodified client talks to it (this file and the other
// *_sdk_test.go files). Where these tests and the SDK disagree with docs/protocol.md, the SDK is
// the judge.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

const chatRoute = "/v1/chat/completions"

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
	if want := []string{"mock-chat", "mock-echo", "mock-flaky", "mock-gateway", "mock-reasoning", "mock-slow", "mock-tools"}; !slices.Equal(ids, want) {
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
