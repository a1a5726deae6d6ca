package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/apierr"
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
		// No Content-Type: what a browser sends cross-origin without a preflight (a no-cors
		// fetch of a Blob), so never read as JSON.
		{"no content type", "POST", chatPath, chatBody("mock-echo", ""), []string{"Content-Type", ""}, 415, "unsupported_media_type", ""},
		{"no content type, responses", "POST", "/v1/responses", `{"model":"mock-echo","input":"hi"}`, []string{"Content-Type", ""}, 415, "unsupported_media_type", ""},
		{"no content type, fixtures", "POST", "/_mock/fixtures", `{"fixtures":[]}`, []string{"Content-Type", ""}, 415, "unsupported_media_type", ""},
		{"json with parameters reaches the parser", "POST", "/_mock/fixtures", `{"fixtures":[]}`, []string{"Content-Type", "application/json; charset=utf-8"}, 400, "invalid_value", "fixtures"},
		{"unknown field", "POST", chatPath, chatBody("mock-echo", `"bogus":1`), nil, 400, "unknown_parameter", "bogus"},
		{"unknown nested field", "POST", chatPath, `{"model":"mock-echo","messages":[{"role":"user","content":"hi","colour":1}]}`, nil, 400, "unknown_parameter", "messages[0].colour"},
		{"unsupported field", "POST", chatPath, chatBody("mock-echo", `"audio":{"voice":"alloy","format":"mp3"}`), nil, 400, "unsupported_parameter", "audio"},
		{"logprobs true", "POST", chatPath, chatBody("mock-echo", `"logprobs":true`), nil, 400, "unsupported_parameter", "logprobs"},
		{"missing messages", "POST", chatPath, `{"model":"mock-echo"}`, nil, 400, "missing_required_parameter", "messages"},
		{"tool message without id", "POST", chatPath, `{"model":"mock-echo","messages":[{"role":"tool","content":"x"}]}`, nil, 400, "missing_required_parameter", "messages[0].tool_call_id"},
		{"temperature out of range", "POST", chatPath, chatBody("mock-echo", `"temperature":3`), nil, 400, "invalid_value", "temperature"},
		{"budget above the model's limit", "POST", chatPath, chatBody("mock-echo", `"max_tokens":40000`), nil, 400, "invalid_value", "max_tokens"},
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
	if m := body["models"].(map[string]any); m["executable"] != 7.0 || m["metadata_only"] != 4.0 {
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
	req.Header.Set("Content-Type", "application/json")
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
