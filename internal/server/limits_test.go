package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"mockgateway/internal/catalog"
)

// TestContextWindowIsOpenAIs: a prompt the model's window cannot hold, alone or with the budget
// asked for, is refused as OpenAI refuses it (400 context_length_exceeded, param messages, its
// wording); one that fits is answered.
func TestContextWindowIsOpenAIs(t *testing.T) {
	cat, err := catalog.Parse([]byte(`models:
  - id: mock-small
    kind: mock
    behavior: chat
    context_window: 40
    capabilities: {streaming: true, tools: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) { d.Catalog = cat })
	long := strings.Repeat("word ", 60)
	for _, tt := range []struct {
		name, body, want string
	}{
		{"prompt alone", `{"model":"mock-small","messages":[{"role":"user","content":"` + long + `"}]}`,
			"This model's maximum context length is 40 tokens. However, your messages resulted in "},
		{"prompt and budget", `{"model":"mock-small","max_completion_tokens":31,"messages":[{"role":"user","content":"hi there"}]}`,
			"This model's maximum context length is 40 tokens. However, you requested "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rr := h.do("POST", chatPath, tt.body)
			if rr.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", rr.Code, rr.Body)
			}
			e := decodeError(t, rr.Body.Bytes())
			if e.Code != "context_length_exceeded" || e.Type != "invalid_request_error" || e.Param == nil || *e.Param != "messages" {
				t.Errorf("got %+v", e)
			}
			if !strings.HasPrefix(e.Message, tt.want) || strings.Contains(e.Message, "word") {
				t.Errorf("message %q", e.Message)
			}
		})
	}
	// Without a budget, a prompt that fits is answered, cut where the window ends.
	rr := h.do("POST", chatPath, `{"model":"mock-small","messages":[{"role":"user","content":"hi there"}]}`)
	if rr.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rr.Code, rr.Body)
	}
	var resp struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			Total int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Usage.Total > 40 || resp.Usage.Total == 0 {
		t.Errorf("usage %d tokens in a window of 40", resp.Usage.Total)
	}
}

// TestStrictSchemaLimits: a strict schema over Structured Outputs' limits is refused as
// response_format or as the tool's parameters; the same schema without strict is answered,
// within the ceiling.
func TestStrictSchemaLimits(t *testing.T) {
	h := newHarness(t)
	deep := `{"type":"string"}`
	for range 11 {
		deep = `{"type":"object","properties":{"a":` + deep + `},"required":["a"],"additionalProperties":false}`
	}
	rf := func(strict bool) string {
		return chatBody("mock-chat", `"response_format":{"type":"json_schema","json_schema":{"name":"deep","strict":`+strconv.FormatBool(strict)+`,"schema":`+deep+`}}`)
	}
	tool := func(strict bool) string {
		return chatBody("mock-tools", `"tools":[{"type":"function","function":{"name":"f","strict":`+strconv.FormatBool(strict)+`,"parameters":`+deep+`}}]`)
	}
	for _, tt := range []struct {
		name, body, param string
	}{
		{"response_format", rf(true), "response_format"},
		{"tool parameters", tool(true), "tools[0].function.parameters"},
	} {
		rr := h.do("POST", chatPath, tt.body)
		e := decodeError(t, rr.Body.Bytes())
		if rr.Code != 400 || e.Code != "invalid_value" || e.Param == nil || *e.Param != tt.param ||
			!strings.Contains(e.Message, "11 levels of nesting exceeds limit of 10") {
			t.Errorf("%s: %d %+v", tt.name, rr.Code, e)
		}
	}
	for _, body := range []string{rf(false), tool(false)} {
		if rr := h.do("POST", chatPath, body); rr.Code != http.StatusOK {
			t.Errorf("not strict: status %d: %s", rr.Code, rr.Body)
		}
	}
}

// TestResponseBytesCeiling: --max-response-bytes is shared by the choices, and a choice that
// reaches its share stops with finish_reason length, its JSON cut.
func TestResponseBytesCeiling(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Config.MaxResponseBytes = 4096 })
	schema := `{"type":"object","properties":{"s":{"type":"string","minLength":100000}},"required":["s"]}`
	rr := h.do("POST", chatPath, chatBody("mock-chat", `"n":4,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":`+schema+`}}`))
	if rr.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rr.Code, rr.Body)
	}
	var resp struct {
		Choices []struct {
			Message      struct{ Content string } `json:"message"`
			FinishReason string                   `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 4 {
		t.Fatalf("%d choices", len(resp.Choices))
	}
	for i, c := range resp.Choices {
		if c.FinishReason != "length" || len(c.Message.Content) > 4096/4 || len(c.Message.Content) == 0 {
			t.Errorf("choice %d: finish %q, %d bytes", i, c.FinishReason, len(c.Message.Content))
		}
	}
}
