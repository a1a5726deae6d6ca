package gosdk

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"
)

// google.golang.org/genai, Google's Gen AI SDK for Go, on its default settings (the Gemini API
// at its default version, v1), against the service's Gemini dialect: the base URL is the
// service's root, the SDK adds the version.

func genaiClient(t *testing.T) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "dummy",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: strings.TrimSuffix(serviceURL, "/v1") + "/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func genaiCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var weatherDeclaration = &genai.FunctionDeclaration{
	Name:        "get_weather",
	Description: "The weather in a city",
	Parameters: &genai.Schema{
		Type:       genai.TypeObject,
		Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}, "unit": {Type: genai.TypeString, Enum: []string{"c", "f"}, Nullable: genai.Ptr(true)}},
		Required:   []string{"city"},
	},
}

func TestGenaiGenerateContent(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	resp, err := c.Models.GenerateContent(ctx, "mock-echo", genai.Text("Say hello"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "echo: Say hello" || resp.Candidates[0].FinishReason != genai.FinishReasonStop {
		t.Fatalf("%q %s", resp.Text(), resp.Candidates[0].FinishReason)
	}
	u := resp.UsageMetadata
	if u == nil || u.PromptTokenCount == 0 || u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount || resp.ModelVersion != "mock-echo" || resp.ResponseID == "" {
		t.Fatalf("%+v %q %q", u, resp.ModelVersion, resp.ResponseID)
	}
	count, err := c.Models.CountTokens(ctx, "mock-echo", genai.Text("Say hello"), nil)
	if err != nil || count.TotalTokens != u.PromptTokenCount {
		t.Fatalf("countTokens %+v %v, the answer's prompt %d", count, err, u.PromptTokenCount)
	}
}

// TestGenaiStream reads a stream with the SDK's strict reader, which fails on any line that is
// not data: or blank.
func TestGenaiStream(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	var text strings.Builder
	var last *genai.GenerateContentResponse
	for resp, err := range c.Models.GenerateContentStream(ctx, "mock-chat", genai.Text("hello"), &genai.GenerateContentConfig{MaxOutputTokens: 12}) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(resp.Text())
		last = resp
	}
	if last == nil || last.Candidates[0].FinishReason != genai.FinishReasonMaxTokens || last.UsageMetadata.CandidatesTokenCount != 12 || text.Len() == 0 {
		t.Fatalf("%q %+v", text.String(), last)
	}
}

func TestGenaiModels(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	var names []string
	for m, err := range c.Models.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 || !strings.Contains(strings.Join(names, ","), "models/mock-tools") {
		t.Fatalf("models %v", names)
	}
	m, err := c.Models.Get(ctx, "mock-tools", nil)
	if err != nil || m.Name != "models/mock-tools" {
		t.Fatalf("%+v %v", m, err)
	}
	_, err = c.Models.Get(ctx, "gemini-9", nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 404 || apiErr.Status != "NOT_FOUND" {
		t.Fatalf("%#v", err)
	}
}

// TestGenaiFunctionCalling: a round trip with an OpenAPI schema (upper-case types, nullable),
// the call's part sent back as the SDK gives it.
func TestGenaiFunctionCalling(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{weatherDeclaration}}}}
	history := []*genai.Content{genai.NewContentFromText("Weather in Oslo?", genai.RoleUser)}
	resp, err := c.Models.GenerateContent(ctx, "mock-tools", history, config)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.FunctionCalls()
	if len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Args["city"] == nil {
		t.Fatalf("%+v", calls)
	}
	history = append(history, resp.Candidates[0].Content,
		genai.NewContentFromFunctionResponse("get_weather", map[string]any{"temp": 3}, genai.RoleUser))
	resp, err = c.Models.GenerateContent(ctx, "mock-tools", history, config)
	if err != nil || !strings.HasPrefix(resp.Text(), "Based on the tool result") {
		t.Fatalf("%v %+v", err, resp)
	}
}

// TestGenaiThinking: mock-reasoning's thought part, its signature (bytes, standard base64 on the
// wire) sent back with the call, and a turn without thinking.
func TestGenaiThinking(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	config := &genai.GenerateContentConfig{
		Tools:          []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{weatherDeclaration}}},
		ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true},
	}
	history := []*genai.Content{genai.NewContentFromText("Weather in Oslo?", genai.RoleUser)}
	resp, err := c.Models.GenerateContent(ctx, "mock-reasoning", history, config)
	if err != nil {
		t.Fatal(err)
	}
	parts := resp.Candidates[0].Content.Parts
	if len(parts) < 2 || !parts[0].Thought || parts[1].FunctionCall == nil || len(parts[1].ThoughtSignature) == 0 || resp.UsageMetadata.ThoughtsTokenCount == 0 {
		t.Fatalf("%+v", parts)
	}
	history = append(history, resp.Candidates[0].Content,
		genai.NewContentFromFunctionResponse("get_weather", map[string]any{"temp": 3}, genai.RoleUser))
	if _, err := c.Models.GenerateContent(ctx, "mock-reasoning", history, config); err != nil {
		t.Fatalf("the signature sent back: %v", err)
	}
	parts[1].ThoughtSignature[len(parts[1].ThoughtSignature)/2] ^= 1
	_, err = c.Models.GenerateContent(ctx, "mock-reasoning", history, config)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 {
		t.Fatalf("a changed signature: %v", err)
	}
	off, err := c.Models.GenerateContent(ctx, "mock-reasoning", genai.Text("hi"), &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: genai.Ptr[int32](0)}})
	if err != nil || off.UsageMetadata.ThoughtsTokenCount != 0 {
		t.Fatalf("%v %+v", err, off)
	}
}

func TestGenaiChatStream(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	chat, err := c.Chats.Create(ctx, "mock-echo", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chat.SendMessage(ctx, genai.Part{Text: "first"}); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for resp, err := range chat.SendMessageStream(ctx, genai.Part{Text: "second"}) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(resp.Text())
	}
	// The curated history keeps every streamed content that holds text, as for Google's streams.
	history := chat.History(true)
	var kept strings.Builder
	for _, content := range history[3:] {
		for _, p := range content.Parts {
			kept.WriteString(p.Text)
		}
	}
	if text.String() != "echo: second" || history[1].Parts[0].Text != "echo: first" || kept.String() != "echo: second" {
		t.Fatalf("%q, history %q", text.String(), kept.String())
	}
}

func TestGenaiRateLimit(t *testing.T) {
	c, ctx := genaiClient(t), genaiCtx(t)
	_, err := c.Models.GenerateContent(ctx, "mock-chat", genai.Text("hi"), &genai.GenerateContentConfig{
		HTTPOptions: &genai.HTTPOptions{Headers: map[string][]string{"X-Mock-Fault": {"rate_limit"}}},
	})
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || apiErr.Status != "RESOURCE_EXHAUSTED" || len(apiErr.Details) == 0 {
		t.Fatalf("%#v", err)
	}
}

// TestGenaiKeyRefused: against a service of its own started with --api-key, the right key
// answers and a wrong one is Google's 400 INVALID_ARGUMENT with its ErrorInfo API_KEY_INVALID,
// which the SDK returns as an APIError (it sends no call without a key: it wants one).
func TestGenaiKeyRefused(t *testing.T) {
	svc, err := startService("--api-key", "gosdk-local-key")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.stop(15 * time.Second); err != nil {
			t.Errorf("%v\n%s", err, tail(svc.output.String(), 4000))
		}
		os.RemoveAll(svc.dir)
	})
	ctx := genaiCtx(t)
	client := func(key string) *genai.Client {
		c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: svc.url + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if r, err := client("gosdk-local-key").Models.GenerateContent(ctx, "mock-echo", genai.Text("hi"), nil); err != nil || r.Text() != "echo: hi" {
		t.Fatalf("the right key: %v %v", r, err)
	}
	_, err = client("wrong").Models.GenerateContent(ctx, "mock-echo", genai.Text("hi"), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Status != "INVALID_ARGUMENT" || apiErr.Message != "API key not valid. Please pass a valid API key." ||
		len(apiErr.Details) != 2 || apiErr.Details[0]["reason"] != "API_KEY_INVALID" {
		t.Fatalf("a wrong key: %#v", err)
	}
}
