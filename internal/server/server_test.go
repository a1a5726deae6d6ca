package server

import (
	"bufio"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/observability"
)

const chatPath = "/v1/chat/completions"

func chatBody(model string, extra string) string {
	b := `{"model":"` + model + `","messages":[{"role":"user","content":"hello there"}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// TestErrorTable walks the contract's error table: status, type, code, param, and the
// x-request-id and JSON content type that every error carries.
func TestErrorTable(t *testing.T) {
	big := chatBody("mock-echo", `"user":"`+strings.Repeat("a", 1<<20)+`"`)
	rows := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		code, param              string
	}{
		{"invalid json", "POST", chatPath, `{"model":`, nil, 400, "invalid_json", ""},
		{"body not an object", "POST", chatPath, `[1,2]`, nil, 400, "invalid_json", ""},
		{"form content type", "POST", chatPath, `model=x`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported_media_type", ""},
		{"unknown field", "POST", chatPath, chatBody("mock-echo", `"bogus":1`), nil, 400, "unknown_parameter", "bogus"},
		{"unknown nested field", "POST", chatPath, `{"model":"mock-echo","messages":[{"role":"user","content":"hi","colour":1}]}`, nil, 400, "unknown_parameter", "messages[0].colour"},
		{"unsupported field", "POST", chatPath, chatBody("mock-echo", `"audio":{"voice":"alloy","format":"mp3"}`), nil, 400, "unsupported_parameter", "audio"},
		{"logprobs true", "POST", chatPath, chatBody("mock-echo", `"logprobs":true`), nil, 400, "unsupported_parameter", "logprobs"},
		{"missing messages", "POST", chatPath, `{"model":"mock-echo"}`, nil, 400, "missing_required_parameter", "messages"},
		{"tool message without id", "POST", chatPath, `{"model":"mock-echo","messages":[{"role":"tool","content":"x"}]}`, nil, 400, "missing_required_parameter", "messages[0].tool_call_id"},
		{"temperature out of range", "POST", chatPath, chatBody("mock-echo", `"temperature":3`), nil, 400, "invalid_value", "temperature"},
		{"budget above ceiling", "POST", chatPath, chatBody("mock-echo", `"max_tokens":5000`), nil, 400, "invalid_value", "max_tokens"},
		{"n above the limit", "POST", chatPath, chatBody("mock-echo", `"n":129`), nil, 400, "invalid_value", "n"},
		{"tools to a model without tools", "POST", chatPath, chatBody("mock-echo", `"tools":[{"type":"function","function":{"name":"f"}}]`), nil, 400, "tools_not_supported", "tools"},
		{"unknown model", "POST", chatPath, chatBody("no-such-model", ""), nil, 404, "model_not_found", "model"},
		{"external model", "POST", chatPath, chatBody("gpt-4o", ""), nil, 400, "model_not_executable", "model"},
		{"unknown model by id", "GET", "/v1/models/no-such-model", "", nil, 404, "model_not_found", "model"},
		{"external model by id", "GET", "/v1/models/gpt-4o", "", nil, 404, "model_not_found", "model"},
		{"no route", "GET", "/nope", "", nil, 404, "not_found", ""},
		{"unsupported surface", "POST", "/v1/embeddings", `{}`, nil, 404, "unsupported_surface", ""},
		{"unsupported surface below", "GET", "/v1/files/file-1", "", nil, 404, "unsupported_surface", ""},
		{"wrong method", "GET", chatPath, "", nil, 405, "method_not_allowed", ""},
		{"wrong method on health", "POST", "/health", `{}`, nil, 405, "method_not_allowed", ""},
		{"body over the limit", "POST", chatPath, big, nil, 413, "request_too_large", ""},
	}
	h := newHarness(t)
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rr := h.do(row.method, row.path, row.body, row.header...)
			checkError(t, rr, row.status, row.code, row.param)
		})
	}
	if rr := h.do("GET", chatPath, ""); rr.Header().Get("Allow") != "POST" {
		t.Errorf("405 Allow = %q, want POST", rr.Header().Get("Allow"))
	}
}

func checkError(t *testing.T, rr *httptest.ResponseRecorder, status int, code, param string) {
	t.Helper()
	if rr.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rr.Code, status, rr.Body.String())
	}
	if ct := rr.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if id := rr.Header().Get("X-Request-Id"); !observability.ValidRequestID(id) {
		t.Errorf("x-request-id = %q", id)
	}
	e := decodeError(t, rr.Body.Bytes())
	if e.Code != code {
		t.Errorf("code = %q, want %q (%s)", e.Code, code, e.Message)
	}
	gotParam := ""
	if e.Param != nil {
		gotParam = *e.Param
	}
	if gotParam != param {
		t.Errorf("param = %q, want %q", gotParam, param)
	}
	want := apierr.New(apierr.Code(code), "", "")
	if e.Type != want.Type || want.Status != status {
		t.Errorf("type = %q, want %q (status %d)", e.Type, want.Type, want.Status)
	}
	if e.Message == "" {
		t.Error("empty message")
	}
}

func TestLocalKey(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Config.APIKey = "sekrit-local-key" })
	good := []string{"Authorization", "Bearer sekrit-local-key"}
	checkError(t, h.do("GET", "/v1/models", ""), 401, "missing_api_key", "")
	checkError(t, h.do("GET", "/v1/models", "", "Authorization", "Bearer nope"), 401, "invalid_api_key", "")
	checkError(t, h.do("GET", "/v1/models", "", "Authorization", "sekrit-local-key"), 401, "invalid_api_key", "")
	// 401 comes before any other error on /v1 routes, including 405 …
	checkError(t, h.do("POST", chatPath, `{bad json`), 401, "missing_api_key", "")
	checkError(t, h.do("GET", chatPath, ""), 401, "missing_api_key", "")
	// … but unknown paths answer 404 whatever the key, and /health and /metrics stay open.
	checkError(t, h.do("GET", "/v2/whatever", ""), 404, "not_found", "")
	if rr := h.do("GET", "/health", ""); rr.Code != 200 {
		t.Errorf("/health with a key configured: %d", rr.Code)
	}
	if rr := h.do("GET", "/metrics", ""); rr.Code != 200 {
		t.Errorf("/metrics with a key configured: %d", rr.Code)
	}
	if rr := h.do("GET", "/v1/models", "", good...); rr.Code != 200 {
		t.Errorf("right key: %d %s", rr.Code, rr.Body.String())
	}
	if rr := h.do("POST", chatPath, chatBody("mock-echo", ""), good...); rr.Code != 200 {
		t.Errorf("right key chat: %d %s", rr.Code, rr.Body.String())
	}
	if strings.Contains(h.logs.String(), "sekrit") {
		t.Error("the key reached the log")
	}
}

func TestRequestID(t *testing.T) {
	h := newHarness(t)
	if got := h.do("GET", "/health", "", "X-Request-Id", "client-id.1:2_3").Header().Get("X-Request-Id"); got != "client-id.1:2_3" {
		t.Errorf("valid incoming id not kept: %q", got)
	}
	for _, bad := range []string{"has space", strings.Repeat("a", 129), "semi;colon", "ünï"} {
		got := h.do("GET", "/nope", "", "X-Request-Id", bad).Header().Get("X-Request-Id")
		if got == bad || !regexp.MustCompile(`^req_[0-9a-f]{32}$`).MatchString(got) {
			t.Errorf("invalid id %q: response carries %q", bad, got)
		}
	}
}

func TestShuttingDownAndHealth(t *testing.T) {
	h := newHarness(t)
	var body map[string]any
	rr := h.do("GET", "/health", "")
	if err := json.Unmarshal(rr.Body.Bytes(), &body); err != nil || rr.Code != 200 || body["status"] != "ok" {
		t.Fatalf("health: %d %s", rr.Code, rr.Body.String())
	}
	if m := body["models"].(map[string]any); m["executable"] != 6.0 || m["metadata_only"] != 4.0 {
		t.Errorf("health models = %v", m)
	}
	h.drain.Begin()
	rr = h.do("GET", "/health", "")
	_ = json.Unmarshal(rr.Body.Bytes(), &body)
	if rr.Code != 503 || body["status"] != "draining" {
		t.Errorf("draining health: %d %s", rr.Code, rr.Body.String())
	}
	checkError(t, h.do("POST", chatPath, chatBody("mock-echo", "")), 503, "shutting_down", "")
}

func TestPanicBecomesInternalError(t *testing.T) {
	h := newHarness(t)
	chain := observability.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom with secret text")
	}), observability.ChainConfig{Logger: h.deps.Logger, Tracer: h.deps.Tracer, Propagator: h.deps.Propagator, Metrics: h.metrics, WriteInternalError: writeInternalError})
	rr := httptest.NewRecorder()
	chain.ServeHTTP(rr, httptest.NewRequest("GET", "/x", nil))
	checkError(t, rr, 500, "internal_error", "")
	if strings.Contains(rr.Body.String(), "boom") || strings.Contains(h.logs.String(), "boom") {
		t.Error("the panic value reached the response or the log")
	}
	if !strings.Contains(h.logs.String(), `"panic_type":"string"`) || !strings.Contains(h.logs.String(), "panic_location") {
		t.Errorf("panic not logged by type and location: %s", h.logs.String())
	}
	if n := metricValue(t, h.metrics, "mockgateway_http_requests_total", map[string]string{"status_code": "500", "error_code": "internal_error"}); n != 1 {
		t.Errorf("recovered panic counted %v times, want 1", n)
	}
}

// slowCatalog has a mock whose stream takes a while, to hold streams open in tests.
func slowCatalog(t *testing.T, between time.Duration) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Parse([]byte(`models:
  - id: mock-slow
    kind: mock
    behavior: chat
    default_tokens: 40
    capabilities: {streaming: true, tools: false}
    latency: {between_chunks: ` + between.String() + `}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServerBusy(t *testing.T) {
	h := newHarness(t, func(d *Deps) {
		d.Config.MaxConcurrent = 1
		d.Catalog = slowCatalog(t, 50*time.Millisecond)
	})
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-slow", `"stream":true`)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The stream holds the only slot now.
	rr := h.do("GET", "/v1/models", "")
	checkError(t, rr, 429, "server_busy", "")
	if rr.Header().Get("Retry-After") == "" {
		t.Error("429 without retry-after")
	}
	if rr := h.do("GET", "/health", ""); rr.Code != 200 {
		t.Errorf("health is not limited: %d", rr.Code)
	}
}

// sseFrames reads a stream body into its data payloads, checking the frame grammar: only
// "data: …" lines, each followed by a blank line.
func sseFrames(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("frame not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line is not a data frame: %q", line)
		}
		out = append(out, data)
		expectBlank = true
	}
	return out
}

type chunkJSON struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chunkChoice   `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        json.RawMessage `json:"delta"`
	FinishReason *string         `json:"finish_reason"`
}

func TestStreamFrames(t *testing.T) {
	h := newHarness(t)
	for _, includeUsage := range []bool{false, true} {
		extra := `"stream":true,"n":2`
		if includeUsage {
			extra += `,"stream_options":{"include_usage":true}`
		}
		rr := h.do("POST", chatPath, chatBody("mock-chat", extra))
		if rr.Code != 200 || rr.Header().Get("Content-Type") != "text/event-stream; charset=utf-8" {
			t.Fatalf("stream: %d %q", rr.Code, rr.Header().Get("Content-Type"))
		}
		if rr.Header().Get("X-Request-Id") == "" || rr.Header().Get("Openai-Version") != "2020-10-01" || rr.Header().Get("Openai-Processing-Ms") == "" {
			t.Errorf("stream headers: %v", rr.Header())
		}
		frames := sseFrames(t, rr.Body.String())
		if frames[len(frames)-1] != "[DONE]" {
			t.Fatalf("last frame %q", frames[len(frames)-1])
		}
		var id string
		roleSeen := map[int]bool{}
		finished := map[int]bool{}
		deltas := 0
		var usage json.RawMessage
		for i, f := range frames[:len(frames)-1] {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(f), &raw); err != nil {
				t.Fatalf("frame %d not JSON: %q", i, f)
			}
			if _, ok := raw["error"]; ok {
				t.Fatalf("normal chunk has an error key: %s", f)
			}
			_, hasUsage := raw["usage"]
			if hasUsage != includeUsage {
				t.Fatalf("usage key present=%v with include_usage=%v: %s", hasUsage, includeUsage, f)
			}
			var c chunkJSON
			_ = json.Unmarshal([]byte(f), &c)
			if id == "" {
				id = c.ID
			}
			if c.ID != id || c.Object != "chat.completion.chunk" || c.Model != "mock-chat" || c.Created == 0 {
				t.Fatalf("chunk identity: %s", f)
			}
			if len(c.Choices) == 0 {
				if !includeUsage || i != len(frames)-2 {
					t.Fatalf("a chunk without choices that is not the last usage chunk: %s", f)
				}
				usage = c.Usage
				continue
			}
			if includeUsage && string(c.Usage) != "null" {
				t.Fatalf("usage must be null on normal chunks: %s", f)
			}
			if len(c.Choices) != 1 {
				t.Fatalf("a chunk carries one choice: %s", f)
			}
			ch := c.Choices[0]
			switch {
			case !roleSeen[ch.Index]:
				if string(ch.Delta) != `{"role":"assistant","content":""}` {
					t.Fatalf("first chunk of choice %d: %s", ch.Index, ch.Delta)
				}
				roleSeen[ch.Index] = true
			case ch.FinishReason != nil:
				if string(ch.Delta) != `{}` || finished[ch.Index] {
					t.Fatalf("finish chunk: %s", f)
				}
				finished[ch.Index] = true
			default:
				if finished[ch.Index] {
					t.Fatalf("delta after finish: %s", f)
				}
				var d struct {
					Content string `json:"content"`
				}
				_ = json.Unmarshal(ch.Delta, &d)
				if d.Content == "" || strings.Count(strings.TrimSpace(d.Content), " ") > 0 {
					t.Fatalf("a content delta is one token: %s", ch.Delta)
				}
				deltas++
			}
		}
		if len(finished) != 2 {
			t.Errorf("choices finished: %v", finished)
		}
		if includeUsage {
			var u struct {
				Prompt, Completion, Total int
			}
			var m map[string]int
			_ = json.Unmarshal(usage, &m)
			u.Prompt, u.Completion, u.Total = m["prompt_tokens"], m["completion_tokens"], m["total_tokens"]
			if u.Completion != deltas || u.Total != u.Prompt+u.Completion {
				t.Errorf("usage %s, deltas %d", usage, deltas)
			}
		}
	}
}

// normalize replaces what may differ between runs (id, created, processing time).
func normalize(b []byte) []byte {
	s := regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]+"`).ReplaceAllString(string(b), `"id":"chatcmpl-ID"`)
	s = regexp.MustCompile(`"created":\d+`).ReplaceAllString(s, `"created":0`)
	// A Responses answer's times (its ids are derived from the request: they stay).
	s = regexp.MustCompile(`"(created_at|completed_at)":\d+`).ReplaceAllString(s, `"$1":1800000000`)
	return []byte(s)
}

func TestGolden(t *testing.T) {
	h := newHarness(t)
	cases := []struct{ name, body string }{
		{"chat_json.golden", chatBody("mock-chat", `"seed":7`)},
		{"echo_stream_usage.golden", chatBody("mock-echo", `"stream":true,"stream_options":{"include_usage":true}`)},
		{"tools_json.golden", `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}]}`},
		{"tools_stream.golden", `{"model":"mock-tools","stream":true,"messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`},
	}
	cases = append(cases, []struct{ name, body string }{
		{"responses_json.golden", `{"model":"mock-chat","instructions":"Be brief.","input":"hi","max_output_tokens":16}`},
		{"responses_echo_stream.golden", `{"model":"mock-echo","stream":true,"input":"Say hello to the world"}`},
		{"responses_tools_stream.golden", `{"model":"mock-tools","stream":true,"input":"weather?","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}`},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := chatPath
			if strings.HasPrefix(c.name, "responses_") {
				path = "/v1/responses"
			}
			rr := h.do("POST", path, c.body)
			if rr.Code != 200 {
				t.Fatalf("%d %s", rr.Code, rr.Body.String())
			}
			golden(t, c.name, normalize(rr.Body.Bytes()))
		})
	}
	rr := h.do("GET", "/v1/models", "")
	golden(t, "models.golden", rr.Body.Bytes())
}

func contentOf(t *testing.T, body []byte) []string {
	t.Helper()
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string         `json:"content"`
				ToolCalls json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ch := range c.Choices {
		s := string(ch.Message.ToolCalls)
		if ch.Message.Content != nil {
			s += *ch.Message.Content
		}
		out = append(out, s)
	}
	return append(out, string(c.Usage))
}

func TestDeterminismAcrossInstances(t *testing.T) {
	a, b := newHarness(t), newHarness(t)
	reqs := []string{
		chatBody("mock-chat", `"n":3`),
		chatBody("mock-chat", `"seed":42,"max_tokens":9`),
		chatBody("mock-echo", `"stop":["there"]`),
		`{"model":"mock-tools","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}},{"type":"function","function":{"name":"b"}}]}`,
	}
	for _, r := range reqs {
		ca, cb := contentOf(t, a.do("POST", chatPath, r).Body.Bytes()), contentOf(t, b.do("POST", chatPath, r).Body.Bytes())
		if strings.Join(ca, "|") != strings.Join(cb, "|") {
			t.Errorf("two instances differ for %s:\n%v\n%v", r, ca, cb)
		}
	}
	s1 := contentOf(t, a.do("POST", chatPath, chatBody("mock-chat", `"seed":1`)).Body.Bytes())[0]
	s2 := contentOf(t, a.do("POST", chatPath, chatBody("mock-chat", `"seed":2`)).Body.Bytes())[0]
	m2 := contentOf(t, a.do("POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"another question"}],"seed":1}`).Body.Bytes())[0]
	if s1 == s2 || s1 == m2 {
		t.Errorf("different seeds or messages gave the same content: %q %q %q", s1, s2, m2)
	}
}

// TestClientDisconnect: generation stops at once when the client goes away, the stream's
// outcome is client_disconnected, and no goroutine outlives the request.
func TestClientDisconnect(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newHarness(t, func(d *Deps) { d.Catalog = slowCatalog(t, 20*time.Millisecond) })
	srv := httptest.NewServer(h.handler)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-slow", `"stream":true`)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for frames := 0; frames < 3; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			frames++
		}
	}
	cancel()
	resp.Body.Close()
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" && m["route"] == chatPath })
	if rec["stream_outcome"] != "client_disconnected" {
		t.Errorf("outcome = %v", rec["stream_outcome"])
	}
	if c := rec["chunks"].(float64); c < 3 || c > 6 {
		t.Errorf("chunks = %v: generation did not stop at once", c)
	}
	srv.Close()
	http.DefaultClient.CloseIdleConnections()
}

func waitForLog(t *testing.T, logs *syncBuffer, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range logs.records(t) {
			if match(r) {
				return r
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no such log record in:\n%s", logs.String())
	return nil
}

// TestStreamAbortedByDrain: after the drain deadline, an open stream gets a shutting_down error
// frame and [DONE], and its outcome is aborted.
func TestStreamAbortedByDrain(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newHarness(t, func(d *Deps) { d.Catalog = slowCatalog(t, 30*time.Millisecond) })
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	resp, err := http.Post(srv.URL+chatPath, "application/json", strings.NewReader(chatBody("mock-slow", `"stream":true`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var once sync.Once
	rd := bufio.NewReader(resp.Body)
	var frames []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			frames = append(frames, d)
			once.Do(h.drain.AbortStreams)
		}
	}
	if len(frames) < 3 || frames[len(frames)-1] != "[DONE]" || !strings.Contains(frames[len(frames)-2], `"code":"shutting_down"`) {
		t.Fatalf("frames: %v", frames)
	}
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" && m["route"] == chatPath })
	if rec["stream_outcome"] != "aborted" || rec["error_code"] != "shutting_down" {
		t.Errorf("log: %v", rec)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestStreamTimeout(t *testing.T) {
	h := newHarness(t, func(d *Deps) {
		d.Catalog = slowCatalog(t, 20*time.Millisecond)
		d.Config.StreamTimeout = 100 * time.Millisecond
	})
	rr := h.do("POST", chatPath, chatBody("mock-slow", `"stream":true`))
	frames := sseFrames(t, rr.Body.String())
	if frames[len(frames)-1] != "[DONE]" || !strings.Contains(frames[len(frames)-2], `"code":"stream_timeout"`) {
		t.Fatalf("frames: %v", frames)
	}
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" })
	if rec["stream_outcome"] != "timed_out" {
		t.Errorf("log: %v", rec)
	}
}

// TestFNV64aMatchesHashFNV: the latency seed is hash/fnv's FNV-1a, so a request keeps the
// schedule it always had.
func TestFNV64aMatchesHashFNV(t *testing.T) {
	for _, s := range []string{"", "a", chatBody("mock-slow", `"stream":true`), strings.Repeat("\xff\x00x", 500)} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(s))
		if got, want := fnv64a([]byte(s)), h.Sum64(); got != want {
			t.Fatalf("%q: %x, want %x", s, got, want)
		}
	}
}
