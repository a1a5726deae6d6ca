package main

// Anthropic's extended thinking on mock-reasoning with Anthropic's official Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2), unmodified: a thinking tool loop across two
// replicas sharing --seal-key — the first answer's thinking block and tool_use sent back as they
// came (Message.ToParam), the second turn streamed and accumulated — then the mistakes Anthropic
// punishes, punished alike: the thinking block dropped, its signature forged, its text changed.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

func TestAnthropicSDKThinking(t *testing.T) {
	first, second := startService(t, nil, "--seal-key", sharedSealKey), startService(t, map[string]string{"MOCKGATEWAY_SEAL_KEY": sharedSealKey})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := anthropic.MessageNewParams{
		Model: "mock-reasoning", MaxTokens: 4096,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Tools:    []anthropic.ToolUnionParam{anthropicWeatherTool()},
		Messages: userMessage("What's the weather in Paris?"),
	}
	one, two := anthropicClient(t, first), anthropicClient(t, second)
	m, err := one.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[1].Type != "tool_use" || m.StopReason != anthropic.StopReasonToolUse {
		t.Fatalf("first turn: %s", m.RawJSON())
	}
	thinking := m.Content[0].AsThinking()
	if thinking.Thinking == "" || thinking.Signature == "" || m.Usage.OutputTokens <= 512 {
		t.Fatalf("thinking block %+v, output_tokens %d (the 512 thinking tokens within)", thinking, m.Usage.OutputTokens)
	}
	call := m.Content[1].AsToolUse()
	result := anthropic.NewUserMessage(anthropic.NewToolResultBlock(call.ID, "Sunny, 21 C", false))

	t.Run("passed back to another replica", func(t *testing.T) {
		p := params
		p.Messages = append(append([]anthropic.MessageParam{}, params.Messages...), m.ToParam(), result)
		stream := two.Messages.NewStreaming(ctx, p)
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
		if len(acc.Content) != 2 || acc.Content[0].Type != "thinking" || acc.Content[0].Signature == "" || acc.Content[0].Thinking == "" ||
			acc.StopReason != anthropic.StopReasonEndTurn || !strings.HasPrefix(acc.Content[1].Text, "Based on the tool result") {
			t.Fatalf("second turn accumulated: %+v", acc)
		}
	})

	refused := func(t *testing.T, assistant anthropic.MessageParam, want string) {
		t.Helper()
		p := params
		p.Messages = append(append([]anthropic.MessageParam{}, params.Messages...), assistant, result)
		_, err := two.Messages.New(ctx, p)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Error(), want) {
			t.Fatalf("got %v, want a 400 saying %q", err, want)
		}
	}
	t.Run("thinking dropped", func(t *testing.T) {
		refused(t, anthropic.NewAssistantMessage(m.Content[1].ToParam()),
			"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.")
	})
	t.Run("signature forged", func(t *testing.T) {
		refused(t, anthropic.NewAssistantMessage(anthropic.NewThinkingBlock("EqQBCkgIARABGAIiQGJ5", thinking.Thinking), m.Content[1].ToParam()),
			"messages.1.content.0: Invalid `signature` in `thinking` block")
	})
	t.Run("thinking changed", func(t *testing.T) {
		refused(t, anthropic.NewAssistantMessage(anthropic.NewThinkingBlock(thinking.Signature, thinking.Thinking+" Also, it rains."), m.Content[1].ToParam()),
			"messages.1.content.0: Invalid `signature` in `thinking` block")
	})
}
