package main

// Part of the end-to-end tests with the official Go SDK; sdk_test.go explains the setup.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

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
