package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mockgateway/internal/catalog"
)

// budgetsCatalog has a mock that keeps the built-in output limit and one whose catalog entry
// sets its own, smaller than its window.
func budgetsCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Parse([]byte(`models:
  - id: mock-chat
    kind: mock
    behavior: chat
    capabilities: {streaming: true, tools: false}
  - id: mock-short
    kind: mock
    behavior: chat
    context_window: 1000
    max_output_tokens: 500
    capabilities: {streaming: true, tools: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestOutputBudgetsAreTheModels: a budget up to the model's output limit is accepted in every
// dialect however far above --max-tokens, and the answer stops at --max-tokens as a budget stops
// it (chat length, Responses incomplete, Messages max_tokens); above the model's limit it is 400
// in the dialect's words. Coding agents send 32000 on every call.
func TestOutputBudgetsAreTheModels(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Catalog = budgetsCatalog(t); d.Config.MaxTokens = 8 })
	user := `"messages":[{"role":"user","content":"hi"}]`

	t.Run("accepted, cut at --max-tokens", func(t *testing.T) {
		for _, c := range []struct{ name, path, body, want string }{
			{"chat max_tokens", chatPath, `{"model":"mock-chat","max_tokens":32000,` + user + `}`, `"finish_reason":"length"`},
			{"chat max_completion_tokens", chatPath, `{"model":"mock-chat","max_completion_tokens":32768,` + user + `}`, `"finish_reason":"length"`},
			{"chat stream", chatPath, `{"model":"mock-chat","max_tokens":32000,"stream":true,` + user + `}`, `"finish_reason":"length"`},
			{"responses", "/v1/responses", `{"model":"mock-chat","max_output_tokens":32000,"input":"hi"}`, `"incomplete_details":{"reason":"max_output_tokens"}`},
			{"responses stream", "/v1/responses", `{"model":"mock-chat","max_output_tokens":32000,"stream":true,"input":"hi"}`, `"incomplete_details":{"reason":"max_output_tokens"}`},
			{"messages", messagesPath, `{"model":"mock-chat","max_tokens":32000,` + user + `}`, `"stop_reason":"max_tokens"`},
			{"catalog limit", chatPath, `{"model":"mock-short","max_tokens":500,` + user + `}`, `"finish_reason":"length"`},
		} {
			t.Run(c.name, func(t *testing.T) {
				var rr *httptest.ResponseRecorder
				if c.path == messagesPath {
					rr = h.anthropic(c.path, c.body)
				} else {
					rr = h.do("POST", c.path, c.body)
				}
				if rr.Code != http.StatusOK || !strings.Contains(rr.Body.String(), c.want) {
					t.Fatalf("status %d, want %s: %s", rr.Code, c.want, rr.Body)
				}
			})
		}
	})

	t.Run("above the model's limit", func(t *testing.T) {
		for _, c := range []struct{ name, path, body, param, message string }{
			{"chat max_tokens", chatPath, `{"model":"mock-chat","max_tokens":40000,` + user + `}`, "max_tokens",
				"max_tokens is too large. This model supports at most 32768 completion tokens."},
			{"chat max_completion_tokens", chatPath, `{"model":"mock-chat","max_completion_tokens":32769,` + user + `}`, "max_completion_tokens",
				"max_completion_tokens is too large. This model supports at most 32768 completion tokens."},
			{"responses", "/v1/responses", `{"model":"mock-chat","max_output_tokens":40000,"input":"hi"}`, "max_output_tokens",
				"max_output_tokens is too large. This model supports at most 32768 output tokens."},
			{"catalog limit", chatPath, `{"model":"mock-short","max_tokens":501,` + user + `}`, "max_tokens",
				"max_tokens is too large. This model supports at most 500 completion tokens."},
		} {
			t.Run(c.name, func(t *testing.T) {
				rr := h.do("POST", c.path, c.body)
				if rr.Code != http.StatusBadRequest {
					t.Fatalf("status %d: %s", rr.Code, rr.Body)
				}
				e := decodeError(t, rr.Body.Bytes())
				if e.Code != "invalid_value" || e.Type != "invalid_request_error" || e.Param == nil || *e.Param != c.param || e.Message != c.message {
					t.Errorf("got %+v, want param %s, message %q", e, c.param, c.message)
				}
			})
		}
		rr := h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":40000,`+user+`}`)
		var body struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		if err := json.Unmarshal(rr.Body.Bytes(), &body); err != nil || rr.Code != http.StatusBadRequest || body.Type != "error" ||
			body.Error.Type != "invalid_request_error" ||
			body.Error.Message != "max_tokens: the maximum allowed number of output tokens for mock-chat is 32768" {
			t.Errorf("messages: status %d: %s", rr.Code, rr.Body)
		}
	})

	// The budget asked for counts against the window as OpenAI counts it: 500 of mock-short's
	// 1,000 leave room for a prompt of 500.
	t.Run("context window", func(t *testing.T) {
		long := strings.Repeat("word ", 300) // 300 tokens of prompt, and framing
		rr := h.do("POST", chatPath, `{"model":"mock-short","max_tokens":500,"messages":[{"role":"user","content":"`+long+long+`"}]}`)
		if e := decodeError(t, rr.Body.Bytes()); rr.Code != http.StatusBadRequest || e.Code != "context_length_exceeded" {
			t.Fatalf("status %d: %s", rr.Code, rr.Body)
		}
		if rr := h.do("POST", chatPath, `{"model":"mock-short","max_tokens":500,"messages":[{"role":"user","content":"`+long+`"}]}`); rr.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rr.Code, rr.Body)
		}
	})
}
