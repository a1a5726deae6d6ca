package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/observability"
)

// TestOpenAPIResponsesConform sends requests that between them reach every operation, every
// model, stream and JSON, with and without usage and tools, every client corpus body, and every
// apierr code through the server's own path to it, and holds each response to the document
// (conform). A code added to apierr without a request here that provokes it fails the test.
func TestOpenAPIResponsesConform(t *testing.T) {
	d := loadAPIDoc(t)
	h := newHarness(t)
	do := func(hh *harness, method, path, body string, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		rr := hh.do(method, path, body, header...)
		d.conform(method+" "+path+" "+strings.Join(header, " ")+" "+body, method, path, rr)
		return rr
	}
	instant := []string{"X-Mock-Latency", "instant"}

	// Every operation, answered.
	conformGoogle(h, do) // google_test.go
	do(h, "GET", "/health", "")
	do(h, "GET", "/v1/models", "")
	do(h, "GET", "/openapi.json", "")
	do(h, "GET", "/metrics", "")
	do(h, "GET", "/metrics", "", "Accept", "application/openmetrics-text; version=1.0.0")
	weather := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather.","strict":true,"parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}}]`
	for _, m := range catalog.Builtin().Executable() {
		do(h, "GET", "/v1/models/"+m.ID, "")
		extras := []string{"", `"n":2,"max_tokens":3`, `"response_format":{"type":"json_object"}`,
			`"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}}}`}
		if m.Capabilities.Tools {
			extras = append(extras, weather, weather+`,"n":2,"parallel_tool_calls":false,"tool_choice":"required"`, weather+`,"max_tokens":2`)
		}
		for _, extra := range extras {
			body := chatBody(m.ID, extra)
			do(h, "POST", chatPath, body, instant...)
			streaming := strings.TrimSuffix(body, "}") + `,"stream":true}`
			do(h, "POST", chatPath, streaming, instant...)
			do(h, "POST", chatPath, strings.TrimSuffix(streaming, "}")+`,"stream_options":{"include_usage":true}}`, instant...)
		}
	}
	do(h, "POST", chatPath, `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"c\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"12C"}],`+weather+`}`)
	do(h, "POST", chatPath, chatBody("mock-flaky", ""), "X-Stainless-Retry-Count", "1")
	for name, e := range loadCorpus(t) {
		var hdr []string
		for k, v := range e.Headers {
			hdr = append(hdr, k, v)
		}
		rr := h.do(http.MethodPost, chatPath, string(e.Body), hdr...)
		d.conform("client corpus "+name, http.MethodPost, chatPath, rr)
	}
	traces := do(h, "GET", "/debug/traces", "")
	var spans struct {
		Spans []struct {
			TraceID string `json:"trace_id"`
		} `json:"spans"`
	}
	_ = json.Unmarshal(traces.Body.Bytes(), &spans)
	if len(spans.Spans) == 0 {
		t.Fatal("no spans in /debug/traces")
	}
	do(h, "GET", "/debug/traces?limit=3", "")
	do(h, "GET", "/debug/traces?trace_id="+spans.Spans[0].TraceID, "")
	do(h, "GET", "/debug/traces?request_id="+traces.Header().Get("X-Request-Id"), "")

	// Every code, through the server's own path to it.
	big := chatBody("mock-echo", `"user":"`+strings.Repeat("a", 1<<20)+`"`)
	for _, r := range []struct{ method, path, body, header, value string }{
		{"POST", chatPath, `{"model":`, "", ""},
		{"POST", chatPath, `model=x`, "Content-Type", "application/x-www-form-urlencoded"},
		{"POST", chatPath, chatBody("mock-echo", `"bogus":1`), "", ""},
		{"POST", chatPath, chatBody("mock-echo", `"audio":{"voice":"alloy","format":"mp3"}`), "", ""},
		{"POST", chatPath, `{"model":"mock-echo"}`, "", ""},
		{"POST", chatPath, chatBody("mock-echo", `"temperature":3`), "", ""},
		{"POST", chatPath, chatBody("mock-echo", `"tools":[{"type":"function","function":{"name":"f"}}]`), "", ""},
		{"POST", chatPath, chatBody("no-such-model", ""), "", ""},
		{"POST", chatPath, chatBody("gpt-4o", ""), "", ""},
		{"POST", chatPath, big, "", ""},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "explode"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Attempt", "first"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Latency", "glacial"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "rate_limit;retry_after=2s"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "server_error"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "unavailable;retry_after=1500ms"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "timeout;for=10ms"},
		{"POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "stream_error"},
		{"POST", chatPath, chatBody("mock-chat", `"stream":true`), "X-Mock-Fault", "stream_error;after=2"},
		{"POST", chatPath, chatBody("mock-flaky", ""), "X-Mock-Attempt", "1"},
		{"GET", "/v1/models/no-such-model", "", "", ""},
		{"GET", "/v1/models/gpt-4o", "", "", ""},
		{"GET", "/nope", "", "", ""},
		{"POST", "/v1/embeddings", `{}`, "", ""},
		{"GET", "/v1/files/file-1", "", "", ""},
		{"GET", chatPath, "", "", ""},
		{"POST", "/health", `{}`, "", ""},
		{"DELETE", "/v1/models", "", "", ""},
		{"GET", "/debug/traces?trace_id=XYZ", "", "", ""},
		{"GET", "/debug/traces?request_id=bad;id", "", "", ""},
		{"GET", "/debug/traces?limit=0", "", "", ""},
		{"POST", "/_mock/fixtures", `{"fixtures":[]}`, "Origin", "https://evil.example"},
		{"GET", "/v1/models", "", "Host", "rebind.evil.example:8080"},
	} {
		do(h, r.method, r.path, r.body, r.header, r.value)
	}

	small, err := catalog.Parse([]byte("models:\n  - id: mock-small\n    kind: mock\n    behavior: chat\n    context_window: 40\n    capabilities: {streaming: true, tools: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	do(newHarness(t, func(dd *Deps) { dd.Catalog = small }), "POST", chatPath, chatBody("mock-small", `"max_completion_tokens":39`))

	keyed := newHarness(t, func(dd *Deps) { dd.Config.APIKey = "local-key" })
	do(keyed, "GET", "/v1/models", "")
	do(keyed, "GET", "/v1/models", "", "Authorization", "Bearer wrong")
	do(keyed, "GET", chatPath, "", "Authorization", "Bearer wrong")
	do(keyed, "POST", chatPath, chatBody("mock-echo", ""), "Authorization", "Bearer local-key")
	// Google's refusals of a key: 400 API_KEY_INVALID (header or query), 403 without one.
	do(keyed, "POST", geminiPath("v1beta", "mock-echo", "generateContent")+"?key=wrong", geminiBody(""))
	do(keyed, "POST", geminiPath("v1", "mock-echo", "generateContent"), geminiBody(""), "X-Goog-Api-Key", "wrong")
	do(keyed, "POST", geminiPath("v1", "mock-echo", "countTokens"), geminiBody(""))
	do(keyed, "GET", "/v1beta/models?key=wrong", "")
	do(keyed, "GET", "/v1beta/models?key=local-key", "")
	do(keyed, "GET", "/debug/traces", "")
	do(keyed, "GET", "/debug/traces", "", "Authorization", "Bearer local-key")
	do(keyed, "GET", "/health", "")
	do(keyed, "GET", "/metrics", "")

	// rate_limit_exceeded: a quota of one request, in both OpenAI routes (internal/quota).
	limited := newHarness(t)
	for _, path := range []string{chatPath, chatPath, "/v1/responses", "/v1/responses"} {
		body := chatBody("mock-echo", "")
		if path != chatPath {
			body = `{"model":"mock-echo","input":"hi"}`
		}
		do(limited, "POST", path, body, "X-Mock-Quota", "rpm=1;tpm=1000", "Authorization", "Bearer "+path)
	}
	do(limited, "POST", chatPath, chatBody("mock-echo", `"max_tokens":2000`), "X-Mock-Quota", "tpm=1000")

	draining := newHarness(t)
	draining.drain.Begin()
	do(draining, "GET", "/health", "")
	do(draining, "GET", "/v1/models", "")
	do(draining, "POST", chatPath, chatBody("mock-echo", ""))

	timedOut := newHarness(t, func(dd *Deps) {
		dd.Catalog = slowCatalog(t, 20*time.Millisecond)
		dd.Config.StreamTimeout = 100 * time.Millisecond
	})
	do(timedOut, "POST", chatPath, chatBody("mock-slow", `"stream":true`))

	// request_timeout: the body is still coming when the read deadline passes.
	gate := make(chan struct{})
	close(gate)
	req := httptest.NewRequest("POST", chatPath, &gatedBody{gate: gate, reading: make(chan struct{}), r: strings.NewReader(`{"model":`), err: os.ErrDeadlineExceeded})
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	rr := httptest.NewRecorder()
	h.handler.ServeHTTP(rr, req)
	d.conform("read deadline", "POST", chatPath, rr)

	// server_busy: a stream holds the only slot.
	busy := newHarness(t, func(dd *Deps) {
		dd.Config.MaxConcurrent = 1
		dd.Catalog = slowCatalog(t, 50*time.Millisecond)
	})
	srv := httptest.NewServer(busy.handler)
	ctx, cancel := context.WithCancel(context.Background())
	sreq, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-slow", `"stream":true`)))
	sreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	do(busy, "GET", "/v1/models", "")
	do(busy, "POST", chatPath, chatBody("mock-echo", ""))
	do(busy, "POST", "/v1/responses", `{"model":"mock-echo","input":"hi"}`)
	do(busy, "GET", "/v1/responses/resp_1/input_items", "")
	cancel()
	_ = resp.Body.Close()
	srv.Close()

	// server_is_overloaded: a slow answer holds the one place of mock-busy, another its queue.
	full := newHarness(t, func(dd *Deps) { dd.Catalog = loadCatalog(t) })
	fullSrv := httptest.NewServer(full.handler)
	fullCtx, fullCancel := context.WithCancel(context.Background())
	holding := post(fullCtx, fullSrv, chatPath, chatBody("mock-busy", ""), "X-Mock-Latency", "ttfc=10s")
	waitFor(t, full, "mockgateway_model_running", 1)
	queuedCtx, leave := context.WithCancel(context.Background())
	waiting := post(queuedCtx, fullSrv, chatPath, chatBody("mock-busy", ""))
	waitFor(t, full, "mockgateway_model_queued", 1)
	do(full, "POST", chatPath, chatBody("mock-busy", ""))
	do(full, "POST", "/v1/responses", `{"model":"mock-busy","input":"hi"}`)
	leave()
	fullCancel()
	<-holding
	<-waiting
	fullSrv.Close()

	// internal_error: a panic anywhere in the chain.
	chain := observability.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
		observability.ChainConfig{Logger: h.deps.Logger, Tracer: h.deps.Tracer, Propagator: h.deps.Propagator, Metrics: h.metrics, WriteInternalError: writeInternalError})
	rr = httptest.NewRecorder()
	chain.ServeHTTP(rr, httptest.NewRequest("GET", "/v1/models", nil))
	d.conform("panic", "GET", "/v1/models", rr)

	// Fixtures, scopes and the journal: the control surface and the chat answers it scripts.
	conformMockControl(t, d, do)
	conformStateUnavailable(t, d)
	// POST /v1/responses and the stored-response routes.
	conformResponses(t, d, do)
	// POST /v1/messages and count_tokens (openapi_messages_test.go).
	conformMessages(t, d, h)
	do(draining, "POST", "/v1/responses", `{"model":"mock-echo","input":"hi"}`)
	do(draining, "GET", "/v1/responses/resp_1", "")
	do(keyed, "POST", "/v1/responses", `{"model":"mock-echo","input":"hi"}`, "Authorization", "Bearer local-key")
	do(keyed, "POST", "/v1/responses", `{"model":"mock-echo","input":"hi"}`)
	do(keyed, "DELETE", "/v1/responses/resp_1", "", "Authorization", "Bearer wrong")
	do(keyed, "DELETE", "/v1/responses/resp_1", "", "Authorization", "Bearer local-key")
	do(timedOut, "POST", "/v1/responses", `{"model":"mock-slow","input":"hi","stream":true}`)

	var missing []string
	for _, c := range apierr.Codes() {
		if !d.codes[string(c)] {
			missing = append(missing, string(c))
		}
	}
	if len(missing) > 0 {
		t.Errorf("no request here provoked %v: add one, so the document is held to that error as the server writes it", missing)
	}
	// Every response object of the document was exercised, but those of statuses no route
	// reaches in a test (500 on the meta routes: only a panic there).
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for path, ops := range d.at("/paths").(map[string]any) {
			for method, op := range ops.(map[string]any) {
				o, _ := op.(map[string]any)
				responses, ok := o["responses"].(map[string]any)
				if !ok {
					continue // the path item's summary, description or parameters
				}
				for status := range responses {
					if !yield(d.deref("/paths/" + pointerToken(path) + "/" + method + "/responses/" + status)) {
						return
					}
				}
			}
		}
	}) {
		if !d.responses[p] && !strings.HasSuffix(p, "/Error500") {
			t.Errorf("no response here exercised %s", p)
		}
	}
	t.Logf("held to the document: %d JSON documents, %d stream chunks, %d Responses stream events, %d error envelopes (%d codes)", d.documents, d.chunks, d.events, d.errors, len(d.codes))
}

// TestOpenAPIErrorEnvelopes: every code's envelope, as the error writer writes it with and
// without a param, matches the response the document gives its status.
func TestOpenAPIErrorEnvelopes(t *testing.T) {
	d := loadAPIDoc(t)
	for _, code := range apierr.Codes() {
		for _, param := range []string{"messages[0].content", ""} {
			rr := httptest.NewRecorder()
			rr.Header().Set("X-Request-Id", "req_1")
			writeError(rr, httptest.NewRequest("GET", "/", nil), apierr.New(code, param, "A message."))
			d.conformTo(string(code)+" param "+param, "/components/responses/Error"+strconv.Itoa(rr.Code), rr)
		}
	}
	if d.errors != 2*len(apierr.Codes()) {
		t.Errorf("%d envelopes checked, want %d", d.errors, 2*len(apierr.Codes()))
	}
}
