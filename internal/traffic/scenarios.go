package traffic

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"

	"mockgateway/internal/chatclient"
)

// scenario is one kind of client call. weight is how many times it appears in each shuffled
// round of the deck; model, when set, must be listed by GET /v1/models for the scenario to run.
type scenario struct {
	name   string
	weight int
	model  string
	run    func(ctx context.Context, c *call) error
}

const chatPath = "/v1/chat/completions"

// lorem is the only text the generator ever sends: fixed filler, never anything that reads
// like a real prompt, so no one mistakes generated traffic (or its telemetry) for user data.
var lorem = []string{
	"Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
	"Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.",
	"Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris.",
	"Duis aute irure dolor in reprehenderit in voluptate velit esse.",
	"Excepteur sint occaecat cupidatat non proident, sunt in culpa.",
}

// loremTool is the one tool definition the generator sends; nothing ever executes it.
var loremTool = map[string]any{
	"type": "function",
	"function": map[string]any{
		"name":        "lorem_lookup",
		"description": "Lorem ipsum dolor sit amet.",
		"parameters": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"term":  map[string]any{"type": "string"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
			},
			"required":             []string{"term"},
			"additionalProperties": false,
		},
	},
}

// chatBody is a chat request for model with lorem messages; extra fields are added on top.
func chatBody(model string, variant uint64, extra map[string]any) map[string]any {
	b := map[string]any{
		"model": model,
		"messages": []map[string]any{
			{"role": "system", "content": lorem[variant%uint64(len(lorem))]},
			{"role": "user", "content": lorem[(variant>>8)%uint64(len(lorem))]},
		},
		"max_tokens": 8 + int((variant>>16)%40),
		"seed":       int((variant >> 24) % 1000),
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func post(body any, header map[string]string) request {
	return request{method: http.MethodPost, path: chatPath, body: mustJSON(body), header: header}
}

// completion is the part of a chat.completion answer the generator checks.
type completion struct {
	Object  string `json:"object"`
	Choices []struct {
		Message struct {
			Content   *string           `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// chatJSON sends a non-streaming chat request and checks a 200 chat.completion comes back.
func chatJSON(ctx context.Context, c *call, body any, header map[string]string, choices int) (completion, error) {
	var out completion
	if _, err := c.expect(ctx, post(body, header), http.StatusOK, "", &out); err != nil {
		return out, err
	}
	if out.Object != "chat.completion" || len(out.Choices) != choices {
		return out, unexpected("chat.completion with %d choices, got %q with %d", choices, out.Object, len(out.Choices))
	}
	return out, nil
}

// chatStream sends a streaming chat request and checks the stream ends with [DONE].
func chatStream(ctx context.Context, c *call, body map[string]any, header map[string]string) (chatclient.Stream, error) {
	body["stream"] = true
	res, err := c.stream(ctx, post(body, header), 0)
	if err != nil {
		return res, err
	}
	if !res.Done || res.ErrorCode != "" || res.Ended != nil {
		return res, unexpected("stream did not end with [DONE] (error frame %q)", res.ErrorCode)
	}
	return res, nil
}

// allScenarios is every path the generator exercises. Weights keep successful calls the bulk
// of the traffic (about three calls in four), so dashboards look like a service with
// problems, not like a broken one, and no single error code passes the alert thresholds.
func allScenarios() []*scenario {
	out := []*scenario{
		{name: "chat_json", weight: 5, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			_, err := chatJSON(ctx, c, chatBody("mock-chat", c.variant, nil), nil, 1)
			return err
		}},
		{name: "chat_length", weight: 1, model: "mock-echo", run: func(ctx context.Context, c *call) error {
			out, err := chatJSON(ctx, c, chatBody("mock-echo", c.variant, map[string]any{"max_tokens": 3}), nil, 1)
			if err == nil && out.Choices[0].FinishReason != "length" {
				return unexpected("finish_reason %q, want length", out.Choices[0].FinishReason)
			}
			return err
		}},
		{name: "stream_usage", weight: 5, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			res, err := chatStream(ctx, c, chatBody("mock-chat", c.variant, map[string]any{
				"stream_options": map[string]any{"include_usage": true},
			}), nil)
			if err == nil && !res.Usage {
				return unexpected("include_usage stream without a usage chunk")
			}
			return err
		}},
		{name: "stream_plain", weight: 2, model: "mock-echo", run: func(ctx context.Context, c *call) error {
			_, err := chatStream(ctx, c, chatBody("mock-echo", c.variant, nil), nil)
			return err
		}},
		{name: "tools_round_trip", weight: 2, model: "mock-tools", run: toolsRoundTrip},
		{name: "tools_stream", weight: 1, model: "mock-tools", run: func(ctx context.Context, c *call) error {
			res, err := chatStream(ctx, c, chatBody("mock-tools", c.variant, map[string]any{
				"tools":          []any{loremTool},
				"stream_options": map[string]any{"include_usage": true},
			}), nil)
			if err == nil && !res.ToolCalls {
				return unexpected("tool stream without tool_calls deltas")
			}
			return err
		}},
		{name: "choices_n", weight: 1, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			body := chatBody("mock-chat", c.variant, map[string]any{"n": 3})
			if c.seq%2 == 0 {
				_, err := chatJSON(ctx, c, body, nil, 3)
				return err
			}
			res, err := chatStream(ctx, c, body, nil)
			if err == nil && len(res.Choices) != 3 {
				return unexpected("n=3 stream with %d choices", len(res.Choices))
			}
			return err
		}},
		{name: "metadata", weight: 2, run: func(ctx context.Context, c *call) error {
			for _, path := range []string{"/v1/models", "/v1/models/mock-chat", "/health"} {
				if _, err := c.expect(ctx, request{method: http.MethodGet, path: path}, http.StatusOK, "", nil); err != nil {
					return err
				}
			}
			return nil
		}},

		// Client errors and faults that fail before any output: the Cases table.

		// A client that hangs up mid-stream. The latency header slows the stream down so the
		// hang-up lands while it is still running.
		{name: "client_disconnect", weight: 1, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			body := chatBody("mock-chat", c.variant, map[string]any{"stream": true, "max_tokens": 64})
			res, err := c.stream(ctx, post(body, map[string]string{"X-Mock-Latency": "ttfc=50ms;between=40ms"}), 3)
			if err != nil {
				return err
			}
			if res.Chunks < 3 {
				return unexpected("stream ended after %d frames", res.Chunks)
			}
			c.g.stats.disconnect()
			return nil
		}},

		// Simulated faults (x-mock-fault). A service started with --allow-simulation-headers=false
		// answers them normally, so the normal answer is accepted too.
		{name: "fault_rate_limit", weight: 1, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			// Fails the first two attempts; the client retries as an SDK would, after the
			// retry-after the 429 names.
			body := chatBody("mock-chat", c.variant, nil)
			for attempt := 1; attempt <= 3; attempt++ {
				h := map[string]string{"X-Mock-Fault": "rate_limit;attempts=2;retry_after=200ms", "X-Mock-Attempt": strconv.Itoa(attempt)}
				resp, err := c.expect(ctx, post(body, h), http.StatusOK, "", nil)
				if err == nil {
					return nil
				}
				if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
					return err
				}
				if err := sleep(ctx, retryDelay(resp.Header)); err != nil {
					return err
				}
			}
			return unexpected("still rate limited after 3 attempts")
		}},

		// Simulated latency (x-mock-latency).
		{name: "latency_json", weight: 1, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			_, err := chatJSON(ctx, c, chatBody("mock-chat", c.variant, nil), map[string]string{"X-Mock-Latency": "fast"}, 1)
			return err
		}},
		{name: "latency_stream", weight: 1, model: "mock-chat", run: func(ctx context.Context, c *call) error {
			_, err := chatStream(ctx, c, chatBody("mock-chat", c.variant, map[string]any{
				"max_tokens":     16,
				"stream_options": map[string]any{"include_usage": true},
			}), map[string]string{"X-Mock-Latency": "realistic"})
			return err
		}},

		// The ready-made simulation models, when the catalog has them.
		{name: "model_slow", weight: 1, model: "mock-slow", run: func(ctx context.Context, c *call) error {
			_, err := chatStream(ctx, c, chatBody("mock-slow", c.variant, map[string]any{"max_tokens": 12}), nil)
			return err
		}},
		{name: "model_flaky", weight: 1, model: "mock-flaky", run: func(ctx context.Context, c *call) error {
			// Retries the way the official SDKs do, saying which retry this is.
			body := chatBody("mock-flaky", c.variant, nil)
			for attempt := 1; attempt <= 3; attempt++ {
				h := map[string]string{"X-Stainless-Retry-Count": strconv.Itoa(attempt - 1)}
				resp, err := c.expect(ctx, post(body, h), http.StatusOK, "", nil)
				if err == nil {
					return nil
				}
				if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500) {
					return err
				}
				if err := sleep(ctx, retryDelay(resp.Header)); err != nil {
					return err
				}
			}
			return unexpected("mock-flaky failed 3 attempts")
		}},
		{name: "model_gateway", weight: 2, model: "mock-gateway", run: func(ctx context.Context, c *call) error {
			body := chatBody("mock-gateway", c.variant, nil)
			if c.seq%2 == 0 {
				_, err := chatJSON(ctx, c, body, nil, 1)
				return err
			}
			_, err := chatStream(ctx, c, body, nil)
			return err
		}},
	}
	for _, k := range Cases() {
		if k.Weight > 0 {
			out = append(out, k.scenario())
		}
	}
	return out
}

// client answers with a (lorem) tool result, the model answers in prose. No tool runs.
func toolsRoundTrip(ctx context.Context, c *call) error {
	first := chatBody("mock-tools", c.variant, map[string]any{"tools": []any{loremTool}})
	out, err := chatJSON(ctx, c, first, nil, 1)
	if err != nil {
		return err
	}
	calls := out.Choices[0].Message.ToolCalls
	if len(calls) == 0 {
		return unexpected("mock-tools answered without tool_calls")
	}
	msgs := slices.Clone(first["messages"].([]map[string]any))
	msgs = append(msgs, map[string]any{"role": "assistant", "content": nil, "tool_calls": calls})
	for _, raw := range calls {
		var tc struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &tc) != nil || tc.ID == "" {
			return unexpected("a tool call without an id")
		}
		msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": tc.ID, "content": `{"result":"` + lorem[1] + `"}`})
	}
	second := chatBody("mock-tools", c.variant, map[string]any{"tools": []any{loremTool}, "messages": msgs})
	out, err = chatJSON(ctx, c, second, nil, 1)
	if err != nil {
		return err
	}
	if m := out.Choices[0].Message; m.Content == nil || *m.Content == "" || len(m.ToolCalls) > 0 {
		return unexpected("after the tool result mock-tools did not answer in prose")
	}
	return nil
}

// available keeps the scenarios whose model the service lists.
func available(all []*scenario, models []string) []*scenario {
	var out []*scenario
	for _, s := range all {
		if s.model == "" || slices.Contains(models, s.model) {
			out = append(out, s)
		}
	}
	return out
}

// deck deals scenarios in shuffled rounds: each round holds every scenario weight times, so
// every path runs at least once per round (about 40 calls) whatever the seed, and the order
// still looks like real, mixed traffic.
type deck struct {
	rng   *rand.Rand
	cards []*scenario
	pos   int
}

func newDeck(scenarios []*scenario, rng *rand.Rand) *deck {
	d := &deck{rng: rng}
	for _, s := range scenarios {
		for range s.weight {
			d.cards = append(d.cards, s)
		}
	}
	d.pos = len(d.cards)
	return d
}

func (d *deck) next() *scenario {
	if d.pos == len(d.cards) {
		d.rng.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
		d.pos = 0
	}
	s := d.cards[d.pos]
	d.pos++
	return s
}
