package main

// Anthropic's Messages API (POST /v1/messages) with Anthropic's official Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2), unmodified, against the real service: a JSON
// answer, a stream accumulated into the message (Message.Accumulate), the tool loop with
// mock-tools (the answer sent back as it came with Message.ToParam, then a tool_result),
// count_tokens against the answer's usage, stop sequences, the models list in Anthropic's shape,
// the SDK's typed errors, and its retry of mock-flaky's 529.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicClient returns an SDK client for in with a dummy key and no retries, on a transport
// of its own whose idle connections are closed when the test ends. opts come last and win.
func anthropicClient(t *testing.T, in *instance, opts ...option.RequestOption) anthropic.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	base := []option.RequestOption{
		option.WithBaseURL(in.URL),
		option.WithAPIKey("dummy"),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	}
	return anthropic.NewClient(append(base, opts...)...)
}

func anthropicWeatherTool() anthropic.ToolUnionParam {
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
		Name:        "get_weather",
		Description: anthropic.String("Get the current weather in a city."),
		InputSchema: anthropic.ToolInputSchemaParam{
			Properties: map[string]any{
				"city": map[string]any{"type": "string"},
				"unit": map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
			},
			Required: []string{"city", "unit"},
		},
	}}
}

func userMessage(text string) []anthropic.MessageParam {
	return []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}
}

func TestAnthropicSDK(t *testing.T) {
	in := startService(t, nil)
	client := anthropicClient(t, in)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("json", func(t *testing.T) {
		m, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model: "mock-echo", MaxTokens: 1024,
			System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
			Messages: userMessage("Say hello to the world"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Content) != 1 || m.Content[0].Text != "echo: Say hello to the world" || m.StopReason != anthropic.StopReasonEndTurn ||
			!strings.HasPrefix(m.ID, "msg_") || m.Usage.InputTokens <= 0 || m.Usage.OutputTokens != 6 {
			t.Fatalf("%+v (raw %s)", m, m.RawJSON())
		}
	})

	t.Run("stream accumulated", func(t *testing.T) {
		params := anthropic.MessageNewParams{Model: "mock-chat", MaxTokens: 12, Messages: userMessage("Tell me a story")}
		want, err := client.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		stream := client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var acc anthropic.Message
		events := 0
		for stream.Next() {
			if err := acc.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
			events++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		// A delta per token, and message_start, content_block_start and _stop, message_delta
		// and message_stop (the SDK keeps the ping to itself).
		if acc.Content[0].Text != want.Content[0].Text || acc.StopReason != anthropic.StopReasonMaxTokens || acc.Usage.OutputTokens != 12 || events != 12+5 {
			t.Fatalf("accumulated %q %s %d in %d events; JSON %q", acc.Content[0].Text, acc.StopReason, acc.Usage.OutputTokens, events, want.Content[0].Text)
		}
	})

	t.Run("tool loop", func(t *testing.T) {
		params := anthropic.MessageNewParams{
			Model: "mock-tools", MaxTokens: 1024,
			Tools:    []anthropic.ToolUnionParam{anthropicWeatherTool()},
			Messages: userMessage("What's the weather in Paris?"),
		}
		first, err := client.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if first.StopReason != anthropic.StopReasonToolUse || first.Content[0].Type != "tool_use" {
			t.Fatalf("first: %s", first.RawJSON())
		}
		call := first.Content[0].AsToolUse()
		var input struct{ City, Unit string }
		if err := json.Unmarshal(call.Input, &input); err != nil || input.City == "" || (input.Unit != "celsius" && input.Unit != "fahrenheit") {
			t.Fatalf("input %s: %v", call.Input, err)
		}
		params.Messages = append(params.Messages, first.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(call.ID, "Sunny, 21 C", false)))
		// The second turn streams: the loop's answer accumulated from its events.
		stream := client.Messages.NewStreaming(ctx, params)
		defer stream.Close()
		var acc anthropic.Message
		for stream.Next() {
			if err := acc.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.StopReason != anthropic.StopReasonEndTurn || !strings.HasPrefix(acc.Content[0].Text, "Based on the tool result") {
			t.Fatalf("after the tool: %+v", acc)
		}
	})

	t.Run("tool stream accumulated", func(t *testing.T) {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model: "mock-tools", MaxTokens: 1024, Tools: []anthropic.ToolUnionParam{anthropicWeatherTool()},
			Messages: userMessage("Weather?"),
		})
		defer stream.Close()
		var acc anthropic.Message
		for stream.Next() {
			if err := acc.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		var input map[string]any
		if acc.StopReason != anthropic.StopReasonToolUse || json.Unmarshal(acc.Content[0].Input, &input) != nil || input["city"] == nil {
			t.Fatalf("%+v input %s", acc, acc.Content[0].Input)
		}
	})

	t.Run("count tokens", func(t *testing.T) {
		msgs := userMessage("How many tokens is this?")
		n, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "mock-chat", Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		m, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: "mock-chat", MaxTokens: 8, Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if n.InputTokens <= 0 || n.InputTokens != m.Usage.InputTokens {
			t.Fatalf("count_tokens %d, usage %d", n.InputTokens, m.Usage.InputTokens)
		}
	})

	t.Run("stop sequence", func(t *testing.T) {
		m, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: "mock-echo", MaxTokens: 64,
			StopSequences: []string{"world"}, Messages: userMessage("Say hello to the world")})
		if err != nil {
			t.Fatal(err)
		}
		if m.Content[0].Text != "echo: Say hello to the " || m.StopReason != anthropic.StopReasonStopSequence || m.StopSequence != "world" {
			t.Fatalf("%s", m.RawJSON())
		}
	})

	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx, anthropic.ModelListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) == 0 || page.Data[0].ID != "mock-echo" || page.Data[0].CreatedAt.IsZero() {
			t.Fatalf("%s", page.RawJSON())
		}
		one, err := client.Models.Get(ctx, "mock-tools", anthropic.ModelGetParams{})
		if err != nil || one.ID != "mock-tools" {
			t.Fatalf("%v %+v", err, one)
		}
	})

	t.Run("typed errors", func(t *testing.T) {
		_, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: "no-such-model", MaxTokens: 8, Messages: userMessage("hi")})
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Type() != "not_found_error" ||
			apiErr.Message == "" || !strings.HasPrefix(apiErr.RequestID, "req_") {
			t.Fatalf("unknown model: %v", err)
		}
		_, err = client.Messages.New(ctx, anthropic.MessageNewParams{Model: "mock-chat", MaxTokens: 8, Messages: userMessage("hi")},
			option.WithHeader("x-mock-fault", "rate_limit"))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Type() != "rate_limit_error" {
			t.Fatalf("rate limit: %v", err)
		}
		_, err = client.Messages.New(ctx, anthropic.MessageNewParams{Model: "mock-chat", MaxTokens: 8, Messages: userMessage("hi")}, option.WithJSONSet("temperature", 1.5))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Type() != "invalid_request_error" {
			t.Fatalf("temperature 1.5: %v", err)
		}
	})

	t.Run("retries mock-flaky's 529", func(t *testing.T) {
		retrying := anthropicClient(t, in, option.WithMaxRetries(2))
		m, err := retrying.Messages.New(ctx, anthropic.MessageNewParams{Model: "mock-flaky", MaxTokens: 8, Messages: userMessage("hi")})
		if err != nil || m.StopReason != anthropic.StopReasonMaxTokens {
			t.Fatalf("%v %+v", err, m)
		}
		_, err = client.Messages.New(ctx, anthropic.MessageNewParams{Model: "mock-flaky", MaxTokens: 8, Messages: userMessage("hi")})
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || apiErr.Type() != "overloaded_error" {
			t.Fatalf("without retries: %v", err)
		}
	})
}
