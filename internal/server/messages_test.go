package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

const messagesPath = "/v1/messages"

// anthropicHeaders are what every Anthropic client sends.
var anthropicHeaders = []string{"Anthropic-Version", "2023-06-01"}

func (h *harness) anthropic(path, body string, header ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(http.MethodPost, path, body, append(append([]string{}, anthropicHeaders...), header...)...)
}

const anthropicWeatherTool = `{"name":"get_weather","description":"Weather in a city.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}`

// anthropicMessage is a Messages answer as a client decodes it.
type anthropicMessage struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Role         string `json:"role"`
	Model        string `json:"model"`
	StopReason   string `json:"stop_reason"`
	StopSequence *string
	Content      []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	Usage map[string]any `json:"usage"`
}

func decodeMessage(t *testing.T, body []byte) anthropicMessage {
	t.Helper()
	var m anthropicMessage
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m.Type != "message" || json.Unmarshal(body, &raw) != nil {
		t.Fatalf("not a message: %s", body)
	}
	if string(raw["stop_sequence"]) != "null" {
		s := strings.Trim(string(raw["stop_sequence"]), `"`)
		m.StopSequence = &s
	}
	return m
}

// TestMessagesGolden: the answers and events of the dialect, byte for byte.
func TestMessagesGolden(t *testing.T) {
	h := newHarness(t)
	cases := []struct{ name, body string }{
		{"messages_json.golden", `{"model":"mock-chat","max_tokens":16,"system":"Be brief.","messages":[{"role":"user","content":"hi"}]}`},
		{"messages_echo_stream.golden", `{"model":"mock-echo","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Say hello to the world"}]}]}`},
		{"messages_tools_json.golden", `{"model":"mock-tools","max_tokens":1024,"messages":[{"role":"user","content":"weather?"}],"tools":[` + anthropicWeatherTool + `]}`},
		{"messages_tools_stream.golden", `{"model":"mock-tools","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"weather?"}],"tools":[` + anthropicWeatherTool + `]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rr := h.anthropic(messagesPath, c.body)
			if rr.Code != 200 {
				t.Fatalf("%d %s", rr.Code, rr.Body.String())
			}
			golden(t, c.name, rr.Body.Bytes())
		})
	}
	golden(t, "messages_models.golden", h.do("GET", "/v1/models", "", anthropicHeaders...).Body.Bytes())
}

// TestMessagesHeaders: request-id beside x-request-id, the same id; no OpenAI version header.
func TestMessagesHeaders(t *testing.T) {
	h := newHarness(t)
	for _, rr := range []*httptest.ResponseRecorder{
		h.anthropic(messagesPath, `{"model":"mock-echo","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`),
		h.anthropic(messagesPath, `{"model":"mock-echo","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`),
		h.anthropic(messagesPath, `{"model":"nope","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`),
		h.anthropic(messagesPath+"/count_tokens", `{"model":"mock-echo","messages":[{"role":"user","content":"hi"}]}`),
		h.do("GET", "/v1/models", "", anthropicHeaders...),
	} {
		id := rr.Header().Get("Request-Id")
		if id == "" || id != rr.Header().Get("X-Request-Id") {
			t.Errorf("%d: request-id %q, x-request-id %q", rr.Code, id, rr.Header().Get("X-Request-Id"))
		}
		if rr.Header().Get("Openai-Version") != "" {
			t.Errorf("%d: an Anthropic answer with openai-version", rr.Code)
		}
	}
}

// TestMessagesStopSequence: stop_sequences cut the answer and name the sequence; max_tokens
// cuts with max_tokens.
func TestMessagesStopSequence(t *testing.T) {
	h := newHarness(t)
	m := decodeMessage(t, h.anthropic(messagesPath, `{"model":"mock-echo","max_tokens":64,"stop_sequences":["nothing","world","hello"],"messages":[{"role":"user","content":"Say hello to the world"}]}`).Body.Bytes())
	if m.Content[0].Text != "echo: Say " || m.StopReason != "stop_sequence" || m.StopSequence == nil || *m.StopSequence != "hello" {
		t.Fatalf("stop: %+v %v", m, m.StopSequence)
	}
	m = decodeMessage(t, h.anthropic(messagesPath, `{"model":"mock-echo","max_tokens":2,"messages":[{"role":"user","content":"Say hello to the world"}]}`).Body.Bytes())
	if m.StopReason != "max_tokens" || m.StopSequence != nil || m.Usage["output_tokens"].(float64) != 2 {
		t.Fatalf("max_tokens: %+v", m)
	}
	rr := h.anthropic(messagesPath, `{"model":"mock-echo","max_tokens":64,"stream":true,"stop_sequences":["world"],"messages":[{"role":"user","content":"Say hello to the world"}]}`)
	if !strings.Contains(rr.Body.String(), `"delta":{"stop_reason":"stop_sequence","stop_sequence":"world"}`) {
		t.Fatalf("stream: %s", rr.Body)
	}
}

// TestMessagesToolLoop: a tool_use answer sent back with its tool_result gets mock-tools'
// answer after a tool; the input is an instance of the schema; the ids are toolu_….
func TestMessagesToolLoop(t *testing.T) {
	h := newHarness(t)
	first := `{"role":"user","content":"Weather in Paris?"}`
	m := decodeMessage(t, h.anthropic(messagesPath, `{"model":"mock-tools","max_tokens":1024,"tools":[`+anthropicWeatherTool+`],"messages":[`+first+`]}`).Body.Bytes())
	if m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Type != "tool_use" || !strings.HasPrefix(m.Content[0].ID, "toolu_") {
		t.Fatalf("first: %+v", m)
	}
	var args map[string]any
	if err := json.Unmarshal(m.Content[0].Input, &args); err != nil || args["city"] == nil {
		t.Fatalf("input %s", m.Content[0].Input)
	}
	call := toolUseBlock(m)
	body := `{"model":"mock-tools","max_tokens":1024,"tools":[` + anthropicWeatherTool + `],"messages":[` + first +
		`,{"role":"assistant","content":[` + call + `]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + m.Content[0].ID + `","content":"Sunny"}]}]}`
	second := decodeMessage(t, h.anthropic(messagesPath, body).Body.Bytes())
	if second.StopReason != "end_turn" || !strings.HasPrefix(second.Content[0].Text, "Based on the tool result") {
		t.Fatalf("after the tool: %+v", second)
	}
}

// TestMessagesToolsOnAModelWithout: Claude Code offers its tools to every model; a model
// without tools takes them and answers in prose, unless the request requires a call.
func TestMessagesToolsOnAModelWithout(t *testing.T) {
	h := newHarness(t)
	rr := h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":64,"tools":[`+anthropicWeatherTool+`],"messages":[{"role":"user","content":"hi"}]}`)
	if m := decodeMessage(t, rr.Body.Bytes()); m.StopReason != "end_turn" || m.Content[0].Type != "text" {
		t.Fatalf("offered: %+v", m)
	}
	rr = h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":64,"tools":[`+anthropicWeatherTool+`],"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"hi"}]}`)
	if rr.Code != 400 || !strings.Contains(rr.Body.String(), "does not support tools") {
		t.Fatalf("required: %d %s", rr.Code, rr.Body)
	}
}

// TestCountTokensAgrees: count_tokens gives the input_tokens of the answer to the same request.
func TestCountTokensAgrees(t *testing.T) {
	h := newHarness(t)
	conv := `"system":[{"type":"text","text":"You are terse."}],"tools":[` + anthropicWeatherTool + `],"messages":[{"role":"user","content":"Weather in Paris, and in Rome?"}]`
	m := decodeMessage(t, h.anthropic(messagesPath, `{"model":"mock-tools","max_tokens":100,`+conv+`}`).Body.Bytes())
	rr := h.anthropic(messagesPath+"/count_tokens", `{"model":"mock-tools",`+conv+`}`)
	var n struct {
		InputTokens float64 `json:"input_tokens"`
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &n); err != nil || n.InputTokens == 0 || n.InputTokens != m.Usage["input_tokens"] {
		t.Fatalf("count_tokens %s, usage %v", rr.Body, m.Usage)
	}
}

// TestMessagesStreamFault: a mid-stream fault ends the stream with Anthropic's error event:
// no message_stop, no [DONE].
func TestMessagesStreamFault(t *testing.T) {
	h := newHarness(t)
	rr := h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Hello"}]}`, "x-mock-fault", "stream_error;after=4")
	body := rr.Body.String()
	if !strings.HasSuffix(body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Simulated mid-stream error: this mock was asked to fail this stream after some chunks. Nothing real failed.\"}}\n\n") ||
		strings.Contains(body, "message_stop") || strings.Contains(body, "[DONE]") || strings.Count(body, "event: ") != 5 {
		t.Fatalf("%s", body)
	}
}

// toolUseBlock is the answer's first tool_use block as a client sends it back.
func toolUseBlock(m anthropicMessage) string {
	b := m.Content[0]
	return `{"type":"tool_use","id":"` + b.ID + `","name":"` + b.Name + `","input":` + string(b.Input) + `}`
}

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{32}$`)

// TestMessagesErrors: every refusal in Anthropic's envelope, type and status, with the request
// id; the closed code stays the access log's error_code.
func TestMessagesErrors(t *testing.T) {
	keyed := newHarness(t, func(d *Deps) { d.Config.APIKey = "local-key"; d.Config.MaxBodyBytes = 4096 })
	ok := `{"model":"mock-chat","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	key := []string{"X-Api-Key", "local-key"}
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		typ, code                string
	}{
		{"no key", "POST", messagesPath, ok, nil, 401, "authentication_error", "missing_api_key"},
		{"wrong x-api-key", "POST", messagesPath, ok, []string{"X-Api-Key", "nope"}, 401, "authentication_error", "invalid_api_key"},
		{"no anthropic-version", "POST", messagesPath, ok, append([]string{"Anthropic-Version", ""}, key...), 400, "invalid_request_error", "missing_required_parameter"},
		{"unknown field", "POST", messagesPath, `{"model":"mock-chat","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"temprature":1}`, key, 400, "invalid_request_error", "unknown_parameter"},
		{"not JSON", "POST", messagesPath, `{`, key, 400, "invalid_request_error", "invalid_json"},
		{"unknown model", "POST", messagesPath, `{"model":"nope","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, key, 404, "not_found_error", "model_not_found"},
		{"too large", "POST", messagesPath, `{"model":"mock-chat","max_tokens":8,"messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, key, 413, "request_too_large", "request_too_large"},
		{"rate limit", "POST", messagesPath, ok, append([]string{"X-Mock-Fault", "rate_limit"}, key...), 429, "rate_limit_error", "simulated_rate_limit"},
		{"server error", "POST", messagesPath, ok, append([]string{"X-Mock-Fault", "server_error"}, key...), 500, "api_error", "simulated_server_error"},
		{"unavailable is overloaded", "POST", messagesPath, ok, append([]string{"X-Mock-Fault", "unavailable"}, key...), 529, "overloaded_error", "simulated_unavailable"},
		{"batches", "POST", messagesPath + "/batches", ok, key, 404, "not_found_error", "unsupported_surface"},
		{"wrong method", "GET", messagesPath, "", key, 405, "invalid_request_error", "method_not_allowed"},
		{"count_tokens, no version", "POST", messagesPath + "/count_tokens", `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`, append([]string{"Anthropic-Version", ""}, key...), 400, "invalid_request_error", "missing_required_parameter"},
		{"count_tokens, a budget", "POST", messagesPath + "/count_tokens", ok, key, 400, "invalid_request_error", "unknown_parameter"},
		{"models, an unknown one", "GET", "/v1/models/nope", "", key, 404, "not_found_error", "model_not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rr := keyed.do(tc.method, tc.path, tc.body, append(append([]string{}, anthropicHeaders...), tc.header...)...)
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(rr.Body.Bytes(), &e); err != nil || rr.Code != tc.status || e.Type != "error" || e.Error.Type != tc.typ || e.Error.Message == "" {
				t.Fatalf("%d %s", rr.Code, rr.Body)
			}
			if !requestIDPattern.MatchString(e.RequestID) || e.RequestID != rr.Header().Get("Request-Id") || e.RequestID != rr.Header().Get("X-Request-Id") {
				t.Errorf("request ids: body %q, headers %q %q", e.RequestID, rr.Header().Get("Request-Id"), rr.Header().Get("X-Request-Id"))
			}
			if tc.status == 429 || tc.status == 529 {
				if rr.Header().Get("Retry-After") == "" {
					t.Errorf("no retry-after")
				}
			}
			recs := keyed.logs.records(t)
			if last := recs[len(recs)-1]; last["error_code"] != tc.code {
				t.Errorf("access log error_code %v, want %s", last["error_code"], tc.code)
			}
		})
	}
	// With the key as a bearer token, as the SDKs send it when given an auth token.
	if rr := keyed.do("POST", messagesPath, ok, "Anthropic-Version", "2023-06-01", "Authorization", "Bearer local-key"); rr.Code != 200 {
		t.Fatalf("bearer: %d %s", rr.Code, rr.Body)
	}
	if rr := keyed.do("POST", messagesPath, ok, append(append([]string{}, anthropicHeaders...), key...)...); rr.Code != 200 {
		t.Fatalf("x-api-key: %d %s", rr.Code, rr.Body)
	}
	// x-api-key is the key of Anthropic's dialect only: the models list of an Anthropic SDK
	// (which sends anthropic-version) takes it, an OpenAI client's chat call with a stray
	// x-api-key and no Authorization is missing its key (the audit's probe).
	if rr := keyed.do("GET", "/v1/models", "", append(append([]string{}, anthropicHeaders...), key...)...); rr.Code != 200 {
		t.Fatalf("models with x-api-key: %d %s", rr.Code, rr.Body)
	}
	chat := `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`
	if rr := keyed.do("POST", "/v1/chat/completions", chat, "Content-Type", "application/json", "X-Api-Key", "local-key"); rr.Code != 401 || !strings.Contains(rr.Body.String(), "missing_api_key") {
		t.Fatalf("chat with only x-api-key: %d %s", rr.Code, rr.Body)
	}
}

// TestMessagesFixtures: a fixture's conditions mean the same in this dialect — tools, the turn,
// a tool_result for a call to the function, and last_user over the user turn's text blocks.
func TestMessagesFixtures(t *testing.T) {
	h := newHarness(t, journaled)
	addFixtures(t, h, "loop", weatherFixtures)
	scope := []string{HeaderScope, "loop"}
	first := `{"role":"user","content":[{"type":"text","text":"<reminder/>"},{"type":"text","text":"What's the weather in Paris?"}]}`
	m := decodeMessage(t, h.anthropic(messagesPath, `{"model":"mock-tools","max_tokens":1024,"tools":[`+anthropicWeatherTool+`],"messages":[`+first+`]}`, scope...).Body.Bytes())
	if m.StopReason != "tool_use" || string(m.Content[0].Input) != `{"city":"Paris"}` {
		t.Fatalf("first: %+v", m)
	}
	call := toolUseBlock(m)
	body := `{"model":"mock-tools","max_tokens":1024,"stream":true,"tools":[` + anthropicWeatherTool + `],"messages":[` + first +
		`,{"role":"assistant","content":[` + call + `]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + m.Content[0].ID + `","content":[{"type":"text","text":"Sunny"}]}]}]}`
	rr := h.anthropic(messagesPath, body, scope...)
	if !strings.Contains(rr.Body.String(), `"text":" Paris."`) || !strings.Contains(rr.Body.String(), `"stop_reason":"end_turn"`) {
		t.Fatalf("answer: %s", rr.Body)
	}
	j := h.do("GET", "/_mock/journal?scope=loop", "")
	if !strings.Contains(j.Body.String(), `"route":"/v1/messages"`) || !strings.Contains(j.Body.String(), `"fixture":"weather-answer"`) {
		t.Fatalf("journal: %s", j.Body)
	}
}

// TestMessagesTelemetry: a Messages call is traced, logged and counted as a chat call: the route
// template, the server span and the chat span with its GenAI attributes, the access line.
func TestMessagesTelemetry(t *testing.T) {
	h := newHarness(t)
	rr := h.anthropic(messagesPath+"?beta=true", `{"model":"mock-chat","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if rr.Code != 200 {
		t.Fatalf("%d %s", rr.Code, rr.Body)
	}
	recs := h.logs.records(t)
	last := recs[len(recs)-1]
	if last["route"] != messagesPath || last["model"] != "mock-chat" || last["stream"] != true || last["stream_outcome"] != "completed" || last["completion_tokens"] != float64(8) {
		t.Fatalf("access line: %v", last)
	}
	var server, chat bool
	for _, s := range h.spans.GetSpans() {
		switch s.Name {
		case "POST /v1/messages":
			server = true
		case "chat mock-chat":
			for _, a := range s.Attributes {
				if a.Key == "gen_ai.operation.name" && a.Value.AsString() == "chat" {
					chat = true
				}
			}
		}
	}
	if !server || !chat {
		t.Fatalf("spans: server %v, chat %v", server, chat)
	}
	if v := metricValue(t, h.metrics, "mockgateway_chat_completions_total", map[string]string{"model": "mock-chat", "stream": "true", "finish_reason": "length"}); v != 1 {
		t.Fatalf("chat completions counted %v", v)
	}
}
