package main

// Reasoning models with the official Go SDK (github.com/openai/openai-go/v3), unmodified,
// against the real service: a Responses turn with include reasoning.encrypted_content and a
// summary, its reasoning item sent back (ToParam) to another replica sharing --seal-key, a
// forged one refused as OpenAI refuses it, the streamed summary, and a chat call with
// reasoning_effort reading reasoning_tokens (max_tokens refused).

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

const sharedSealKey = "the replicas share this key"

func TestReasoningGoSDKResponsesRoundTrip(t *testing.T) {
	t.Parallel()
	first, second := startService(t, nil, "--seal-key", sharedSealKey), startService(t, map[string]string{"MOCKGATEWAY_SEAL_KEY": sharedSealKey})
	a, _ := sdkClient(t, first)
	b, _ := sdkClient(t, second)
	ctx := context.Background()
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("Plan a weekend in Lyon.", responses.EasyInputMessageRoleUser),
	}
	params := responses.ResponseNewParams{
		Model:     "mock-reasoning",
		Input:     responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortLow, Summary: shared.ReasoningSummaryAuto},
		Include:   []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Store:     openai.Bool(false),
	}
	r, err := a.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 2 || r.Output[0].Type != "reasoning" || r.Output[1].Type != "message" {
		t.Fatalf("output = %s", r.RawJSON())
	}
	rs := r.Output[0].AsReasoning()
	if !strings.HasPrefix(rs.ID, "rs_") || rs.EncryptedContent == "" || len(rs.Summary) != 1 || rs.Summary[0].Text == "" {
		t.Errorf("reasoning item = %s", rs.RawJSON())
	}
	if u := r.Usage; u.OutputTokensDetails.ReasoningTokens != 64 || u.OutputTokens <= 64 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage = %s", u.RawJSON())
	}

	// The next turn carries the reasoning item back, as it came, to the other replica.
	item := rs.ToParam()
	msg := r.Output[1].AsMessage().ToParam()
	next := append(input,
		responses.ResponseInputItemUnionParam{OfReasoning: &item},
		responses.ResponseInputItemUnionParam{OfOutputMessage: &msg},
		responses.ResponseInputItemParamOfMessage("And on Sunday?", responses.EasyInputMessageRoleUser))
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: next}
	r2, err := b.Responses.New(ctx, params)
	if err != nil {
		t.Fatalf("the item sent back to another replica: %v", err)
	}
	if r2.Output[0].Type != "reasoning" || r2.OutputText() == "" {
		t.Errorf("second turn = %s", r2.RawJSON())
	}

	// A forged item: 400 invalid_encrypted_content, param null, as OpenAI answers.
	forged := responses.ResponseReasoningItemParam{ID: rs.ID, Summary: []responses.ResponseReasoningItemSummaryParam{},
		EncryptedContent: openai.String(strings.ToUpper(rs.EncryptedContent))}
	next[1] = responses.ResponseInputItemUnionParam{OfReasoning: &forged}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: next}
	_, err = b.Responses.New(ctx, params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "invalid_encrypted_content" || apiErr.Param != "" || apiErr.Type != "invalid_request_error" {
		t.Fatalf("forged item: %v", err)
	}

	// Streamed: the reasoning item's summary events before the message's.
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	events := respStream(t, a, params, "response.completed")
	var summary strings.Builder
	firstText := -1
	for i, ev := range events {
		switch ev.Type {
		case "response.reasoning_summary_text.delta":
			if firstText >= 0 {
				t.Errorf("a summary delta after the message's text")
			}
			summary.WriteString(ev.Delta)
		case "response.output_text.delta":
			if firstText < 0 {
				firstText = i
			}
		}
	}
	final := events[len(events)-1].Response
	done := final.Output[0].AsReasoning()
	if summary.Len() == 0 || len(done.Summary) != 1 || done.Summary[0].Text != summary.String() || done.EncryptedContent == "" {
		t.Errorf("streamed summary %q, final item %s", summary.String(), done.RawJSON())
	}
}

func TestReasoningGoSDKChat(t *testing.T) {
	t.Parallel()
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:           "mock-reasoning",
		Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Plan a weekend in Lyon.")},
		ReasoningEffort: shared.ReasoningEffortHigh,
	}
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if u := c.Usage; u.CompletionTokensDetails.ReasoningTokens != 512 || u.CompletionTokens <= 512 || c.Choices[0].Message.Content == "" {
		t.Errorf("completion = %s", c.RawJSON())
	}
	// The budget covers the reasoning first: 512 reasoning tokens eat a budget of 300.
	params.MaxCompletionTokens = openai.Int(300)
	c, err = client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].FinishReason != "length" || c.Choices[0].Message.Content != "" || c.Usage.CompletionTokensDetails.ReasoningTokens != 300 {
		t.Errorf("a budget eaten by reasoning = %s", c.RawJSON())
	}
	// max_tokens is refused, as OpenAI refuses it on a reasoning model.
	params.MaxCompletionTokens, params.MaxTokens = openai.ChatCompletionNewParams{}.MaxCompletionTokens, openai.Int(300)
	_, err = client.Chat.Completions.New(ctx, params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "unsupported_parameter" || apiErr.Param != "max_tokens" {
		t.Fatalf("max_tokens: %v", err)
	}
	// A stream's usage chunk counts the reasoning.
	params.MaxTokens = openai.ChatCompletionNewParams{}.MaxTokens
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Usage.CompletionTokensDetails.ReasoningTokens != 512 || acc.Choices[0].Message.Content == "" {
		t.Errorf("stream usage = %+v", acc.Usage)
	}
}
