package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Three replicas behind a round-robin balancer: what a client may rely on, and what it may not.
// Every replica runs the same binary with the same catalog and fixture files.

const replicaCount = 3

// replicaCatalog holds one model of each behaviour, and mock-gateway so that simulated retries
// and fallbacks happen (their dashboard panels need them). A short backoff keeps the test quick.
const replicaCatalog = `models:
  - {id: mock-echo, kind: mock, behavior: echo, capabilities: {streaming: true, tools: false}}
  - {id: mock-chat, kind: mock, behavior: chat, default_tokens: 32, capabilities: {streaming: true, tools: false}}
  - {id: mock-tools, kind: mock, behavior: tools, default_tokens: 24, capabilities: {streaming: true, tools: true}}
  - id: mock-gateway
    kind: mock
    behavior: chat
    capabilities: {streaming: true, tools: false}
    fault: server_error
    gateway: {retries: 2, backoff: 10ms, fallback: [gpt-4o, mock-chat]}
  - {id: gpt-4o, kind: external, provider: openai, context_window: 128000, capabilities: {streaming: true, tools: true}}
`

// replicaFixtures are the shared fixture files: a tool round trip and a greeting with its own
// usage.
const replicaFixtures = `fixtures:
  - name: weather-call
    match: {last_user: {contains: "weather in Paris"}, tools: [get_weather]}
    reply: {tool_calls: [{name: get_weather, arguments: {city: Paris, days: 3}}]}
  - name: weather-answer
    match: {tool_result: get_weather}
    reply: {content: "It is sunny in Paris."}
  - name: greet
    match: {last_user: {contains: "hello replicas"}}
    reply: {content: "Hi from a file fixture.", usage: {prompt_tokens: 7, completion_tokens: 5}}
`

// replica is one running service with an SDK client whose transport counts the chat answers
// by status, so the test knows exactly what each replica's counters must say.
type replica struct {
	svc    *service
	client openai.Client
	chat   *statusCounter
}

type statusCounter struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[string]int // status code -> chat completion answers
}

func (c *statusCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil && req.URL.Path == "/v1/chat/completions" {
		c.mu.Lock()
		c.n[strconv.Itoa(resp.StatusCode)]++
		c.mu.Unlock()
	}
	return resp, err
}

func (c *statusCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// replicaSet is the balancer: each call goes to the next replica in turn.
type replicaSet struct {
	replicas []*replica
	mu       sync.Mutex
	next     int
}

func (s *replicaSet) pick() (int, *replica) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.next
	s.next = (s.next + 1) % len(s.replicas)
	return i, s.replicas[i]
}

// startReplicas starts the replicas with the same catalog and fixture files, each on its own
// loopback port, with tracing off (nothing here reads traces).
func startReplicas(t *testing.T) *replicaSet {
	t.Helper()
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.yaml")
	fixtures := filepath.Join(dir, "fixtures")
	if err := os.MkdirAll(fixtures, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(catalog, []byte(replicaCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fixtures, "shared.yaml"), []byte(replicaFixtures), 0o644); err != nil {
		t.Fatal(err)
	}
	set := &replicaSet{}
	for range replicaCount {
		svc := startService(t, []string{"OTEL_SDK_DISABLED=true"}, "--catalog", catalog, "--fixtures", fixtures)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		counter := &statusCounter{base: tr, n: map[string]int{}}
		client := openai.NewClient(
			option.WithBaseURL(svc.url+"/v1"),
			option.WithAPIKey("dummy"),
			option.WithMaxRetries(0), // a retry would hide which replica answered
			option.WithHTTPClient(&http.Client{Transport: counter, Timeout: 30 * time.Second}),
		)
		set.replicas = append(set.replicas, &replica{svc: svc, client: client, chat: counter})
	}
	return set
}

// answer is what a client can rely on in a chat completion: everything but the id and the
// creation time (which name one call, not its content).
type answer struct {
	Choices []answerChoice
	Usage   [3]int64 // prompt, completion, total
}

type answerChoice struct {
	Content, Refusal, FinishReason string
	ToolCalls                      [][3]string // id, name, arguments
}

func answerOf(c openai.ChatCompletion) answer {
	a := answer{Usage: [3]int64{c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens}}
	for _, ch := range c.Choices {
		ac := answerChoice{Content: ch.Message.Content, Refusal: ch.Message.Refusal, FinishReason: ch.FinishReason}
		for _, tc := range ch.Message.ToolCalls {
			ac.ToolCalls = append(ac.ToolCalls, [3]string{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		a.Choices = append(a.Choices, ac)
	}
	return a
}

func (a answer) String() string {
	b, _ := json.Marshal(a)
	return string(b)
}

// complete sends params as JSON or as a stream with usage, and returns the answer.
func complete(ctx context.Context, client openai.Client, params openai.ChatCompletionNewParams, stream bool, opts ...option.RequestOption) (answer, error) {
	if !stream {
		c, err := client.Chat.Completions.New(ctx, params, opts...)
		if err != nil {
			return answer{}, err
		}
		return answerOf(*c), nil
	}
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	s := client.Chat.Completions.NewStreaming(ctx, params, opts...)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			return answer{}, fmt.Errorf("the accumulator rejected chunk %s", s.Current().RawJSON())
		}
	}
	if err := s.Err(); err != nil {
		return answer{}, err
	}
	return answerOf(acc.ChatCompletion), nil
}

var weatherTool = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("The weather in a city."),
	Parameters: openai.FunctionParameters{
		"type":                 "object",
		"properties":           map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer", "minimum": 1, "maximum": 7}},
		"required":             []string{"city", "days"},
		"additionalProperties": false,
	},
})

func chatParams(model, text string, tools ...openai.ChatCompletionToolUnionParam) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
		Tools:    tools,
	}
}

// checkIdenticalAnswers sends each request, as JSON and as a stream, once to every replica in
// round-robin order: content, tool calls (ids included) and usage must be the same everywhere,
// and a stream must accumulate to the JSON answer.
func checkIdenticalAnswers(t *testing.T, set *replicaSet) {
	ctx := context.Background()
	requests := []struct {
		name   string
		params openai.ChatCompletionNewParams
		check  func(answer) string // "" or what is wrong
	}{
		{"generated prose", chatParams("mock-chat", "Tell me about rivers."), nil},
		{"echo", chatParams("mock-echo", "Say hello to the world"), func(a answer) string {
			if a.Choices[0].Content != "echo: Say hello to the world" {
				return "not the echo"
			}
			return ""
		}},
		{"generated tool call", chatParams("mock-tools", "Plan my week.", weatherTool), func(a answer) string {
			if len(a.Choices[0].ToolCalls) != 1 || a.Choices[0].FinishReason != "tool_calls" {
				return "no tool call"
			}
			return ""
		}},
		{"file fixture content", chatParams("mock-chat", "hello replicas"), func(a answer) string {
			if a.Choices[0].Content != "Hi from a file fixture." || a.Usage != [3]int64{7, 5, 12} {
				return "not the greet fixture"
			}
			return ""
		}},
		{"file fixture tool call", chatParams("mock-tools", "What is the weather in Paris?", weatherTool), func(a answer) string {
			tc := a.Choices[0].ToolCalls
			var args map[string]any
			if len(tc) == 1 {
				json.Unmarshal([]byte(tc[0][2]), &args)
			}
			if len(tc) != 1 || tc[0][1] != "get_weather" || !reflect.DeepEqual(args, map[string]any{"city": "Paris", "days": 3.0}) {
				return "not the weather-call fixture"
			}
			return ""
		}},
	}
	for _, r := range requests {
		var first answer
		for n := 0; n < 2*replicaCount; n++ {
			stream := n >= replicaCount
			i, rep := set.pick()
			got, err := complete(ctx, rep.client, r.params, stream)
			if err != nil {
				t.Fatalf("%s (stream %v) on replica %d: %v", r.name, stream, i, err)
			}
			if n == 0 {
				first = got
				if len(got.Choices) == 0 {
					t.Fatalf("%s: no choices", r.name)
				}
				if r.check != nil {
					if msg := r.check(got); msg != "" {
						t.Errorf("%s: %s: %s", r.name, msg, got)
					}
				}
				continue
			}
			if !reflect.DeepEqual(got, first) {
				t.Errorf("%s (stream %v): replica %d answered\n  %s\nthe first replica\n  %s", r.name, stream, i, got, first)
			}
		}
	}
}

// checkScopedRepliesPerReplica: a scoped `replies` sequence lives in one process. The same
// runtime fixture is posted to every replica; round-robin calls then get reply 1 from each
// replica in turn, then reply 2 from each: each replica advances its own sequence, so behind a
// balancer a client does not see 1, 2, 3 (docs/fixtures.md: use file fixtures and stateless
// conditions there).
func checkScopedRepliesPerReplica(t *testing.T, set *replicaSet) {
	ctx := context.Background()
	scope := "replicas-sequence"
	body := `{"fixtures":[{"name":"seq","match":{"last_user":{"contains":"next in line"}},"replies":[{"content":"one"},{"content":"two"},{"content":"three"}]}]}`
	for i, rep := range set.replicas {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, rep.svc.url+"/_mock/fixtures", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Scope", scope)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /_mock/fixtures on replica %d: %d", i, resp.StatusCode)
		}
	}
	set.mu.Lock()
	set.next = 0 // so call n goes to replica n % 3
	set.mu.Unlock()
	want := []string{"one", "one", "one", "two", "two", "two", "three", "three", "three", "three"}
	var got []string
	for range want {
		_, rep := set.pick()
		a, err := complete(ctx, rep.client, chatParams("mock-chat", "next in line"), false, option.WithHeader("X-Mock-Scope", scope))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.Choices[0].Content)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scoped replies across %d replicas in round robin: got %q, want %q (each replica its own sequence)", replicaCount, got, want)
	}
	// Without the scope, the unscoped sequence is untouched on every replica.
	_, rep := set.pick()
	if a, err := complete(ctx, rep.client, chatParams("mock-chat", "next in line"), false); err != nil || a.Choices[0].Content == "one" {
		t.Errorf("unscoped call matched the scoped fixture: %v %v", a, err)
	}
}

// TestReplicas runs three replicas, checks what a client sees through a round-robin balancer,
// then has a Prometheus v3 scrape all three and checks every recording rule and dashboard query
// aggregates them (replicas_prom_test.go).
func TestReplicas(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	set := startReplicas(t)
	var targets []string
	for _, r := range set.replicas {
		targets = append(targets, r.svc.addr)
	}
	cfgPath := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfgPath, derivedPrometheusConfig(t, targets, "1s"), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, cfgPath)

	t.Run("identical answers on every replica", func(t *testing.T) { checkIdenticalAnswers(t, set) })
	t.Run("scoped replies are per replica", func(t *testing.T) { checkScopedRepliesPerReplica(t, set) })
	t.Run("prometheus aggregates the replicas", func(t *testing.T) { checkReplicaMetrics(t, set, prom) })
}
