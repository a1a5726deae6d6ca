package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/openapi"
	"mockgateway/observability"
)

// apiDoc is the served OpenAPI document, with its schemas compiled on demand, and the tally of
// what has been held to it.
type apiDoc struct {
	t       *testing.T
	root    any
	c       *jsonschema.Compiler
	schemas map[string]*jsonschema.Schema

	documents, chunks, errors, events int
	codes                             map[string]bool
	responses                         map[string]bool // response objects (JSON pointers) exercised
}

func loadAPIDoc(t *testing.T) *apiDoc {
	t.Helper()
	root, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // date-time in /debug/traces
	if err := c.AddResource("openapi.json", root); err != nil {
		t.Fatal(err)
	}
	return &apiDoc{t: t, root: root, c: c, schemas: map[string]*jsonschema.Schema{}, codes: map[string]bool{}, responses: map[string]bool{}}
}

func pointerToken(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// at returns the value at a JSON pointer, or nil.
func (d *apiDoc) at(ptr string) any {
	v := d.root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]
	}
	return v
}

// deref follows an OpenAPI $ref (a local one: every $ref of the document is).
func (d *apiDoc) deref(ptr string) string {
	for {
		m, _ := d.at(ptr).(map[string]any)
		r, ok := m["$ref"].(string)
		if !ok {
			return ptr
		}
		ptr = strings.TrimPrefix(r, "#")
	}
}

func (d *apiDoc) schema(ptr string) *jsonschema.Schema {
	d.t.Helper()
	if s, ok := d.schemas[ptr]; ok {
		return s
	}
	s, err := d.c.Compile("openapi.json#" + ptr)
	if err != nil {
		d.t.Fatalf("%s: %v", ptr, err)
	}
	d.schemas[ptr] = s
	return s
}

func (d *apiDoc) validate(what, ptr string, b []byte) {
	d.t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		d.t.Errorf("%s: not JSON: %v: %q", what, err, b)
		return
	}
	if err := d.schema(ptr).Validate(v); err != nil {
		d.t.Errorf("%s does not match the OpenAPI document (%s): %v", what, ptr, err)
	}
	if obj, ok := v.(map[string]any); !ok {
	} else if e, ok := obj["error"].(map[string]any); ok {
		d.errors++
		d.codes[e["code"].(string)] = true
	}
}

// matchTemplate reports whether path is an instance of the path template tpl.
func matchTemplate(tpl, path string) bool {
	ts, ps := strings.Split(tpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	// {rest}, last, is the rest of the path, however many segments (/v1/responses/{rest}).
	if n := len(ts); ts[n-1] == "{rest}" && len(ps) > n && strings.Join(ps[n-1:], "") != "" {
		ps = append(ps[:n-1], strings.Join(ps[n-1:], "/"))
	}
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if ts[i] != ps[i] && !(strings.HasPrefix(ts[i], "{") && ps[i] != "") {
			return false
		}
	}
	return true
}

// responseFor finds the response object the document gives for method, path and status: the
// operation's, or for a path or method the document has no operation for, the ErrorNNN response
// that info.description sends such requests to.
func (d *apiDoc) responseFor(what, method, path string, status int) string {
	d.t.Helper()
	path, _, _ = strings.Cut(path, "?")
	for tpl := range d.at("/paths").(map[string]any) {
		if !matchTemplate(tpl, path) {
			continue
		}
		op := "/paths/" + pointerToken(tpl) + "/" + strings.ToLower(method)
		if d.at(op) == nil {
			break // a known path, another method: 405 (or 401 first on /v1)
		}
		for _, key := range []string{strconv.Itoa(status), "default"} {
			if r := op + "/responses/" + key; d.at(r) != nil {
				return d.deref(r)
			}
		}
		d.t.Errorf("%s: %s %s answered %d, which the document does not list", what, method, path, status)
		return ""
	}
	r := "/components/responses/Error" + strconv.Itoa(status)
	if status < 400 || d.at(r) == nil {
		d.t.Errorf("%s: %s %s is not in the document, yet answered %d", what, method, path, status)
		return ""
	}
	return r
}

// notDescribed are headers an OpenAPI document does not list: Content-Type is the content's key,
// the others are the transport's.
var notDescribed = map[string]bool{"content-type": true, "content-length": true, "connection": true, "date": true}

// conform holds one response to the document: its status is listed, its headers are declared
// (and required ones present, each value valid), its media type is a content key, and its body
// (every frame of a stream) validates against the content's schema.
func (d *apiDoc) conform(what, method, path string, rr *httptest.ResponseRecorder) {
	d.t.Helper()
	if ptr := d.responseFor(what, method, path, rr.Code); ptr != "" {
		d.conformTo(what, ptr, rr)
	}
}

func (d *apiDoc) conformTo(what, ptr string, rr *httptest.ResponseRecorder) {
	d.t.Helper()
	d.responses[ptr] = true
	d.headers(what, ptr, rr.Header())
	d.body(what, ptr, rr.Header().Get("Content-Type"), rr.Body.Bytes())
}

// headers checks that every header is declared by the response object at ptr, with a valid
// value, and that every header it requires is there.
func (d *apiDoc) headers(what, ptr string, header http.Header) {
	d.t.Helper()
	resp := d.at(ptr).(map[string]any)
	declared, _ := resp["headers"].(map[string]any)
	for name, values := range header {
		name = strings.ToLower(name)
		if notDescribed[name] {
			continue
		}
		if _, ok := declared[name]; !ok {
			d.t.Errorf("%s: header %s is not declared by %s", what, name, ptr)
			continue
		}
		h := d.deref(ptr + "/headers/" + pointerToken(name))
		b, _ := json.Marshal(values[0])
		d.validate(what+": header "+name, h+"/schema", b)
	}
	for name := range declared {
		h := d.deref(ptr + "/headers/" + pointerToken(name))
		if req, _ := d.at(h + "/required").(bool); req && header.Get(name) == "" {
			d.t.Errorf("%s: required header %s is missing", what, name)
		}
	}
	if header.Get("X-Request-Id") == "" {
		d.t.Errorf("%s: no x-request-id", what)
	}
}

// body checks that the media type is a content of the response object at ptr and that the body
// (every frame of a stream) validates against its schema.
func (d *apiDoc) body(what, ptr, contentType string, body []byte) {
	d.t.Helper()
	mt, _, err := mime.ParseMediaType(contentType)
	content := ptr + "/content/" + pointerToken(mt)
	if err != nil || d.at(content) == nil {
		d.t.Errorf("%s: content type %q is not a content of %s", what, contentType, ptr)
		return
	}
	switch mt {
	case "application/json":
		d.validate(what, content+"/schema", body)
		d.documents++
	case "text/event-stream":
		if d.at(content+"/x-sse-event-name") != nil {
			d.eventStream(what, content+"/x-sse-data-schema", body) // named events (POST /v1/responses)
			break
		}
		d.stream(what, content+"/x-sse-data-schema", body)
	default:
		if len(body) == 0 {
			d.t.Errorf("%s: empty %s body", what, mt)
		}
	}
}

// stream checks an SSE transcript: only `data: …` frames, each followed by a blank line, every
// one before `data: [DONE]` valid against the frame schema, and [DONE] last.
func (d *apiDoc) stream(what, frameSchema string, b []byte) {
	d.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	done, blank := false, true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			blank = true
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !blank || done {
			d.t.Errorf("%s: not an SSE data frame after a blank line, before [DONE]: %q", what, line)
			return
		}
		blank = false
		if data == "[DONE]" {
			done = true
			continue
		}
		d.validate(what+" frame", frameSchema, []byte(data))
		if !strings.HasPrefix(data, `{"error"`) {
			d.chunks++
		}
	}
	if !done || !blank {
		d.t.Errorf("%s: the stream does not end with data: [DONE] and a blank line", what)
	}
}

// denormalize undoes the golden files' normalization of the completion id.
func denormalize(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`"chatcmpl-ID"`), []byte(`"chatcmpl-000000000000000000000000"`))
}

// TestOpenAPIGoldens: every golden answer and every frame of every golden stream validates
// against the response the document gives the request it answers.
func TestOpenAPIGoldens(t *testing.T) {
	d := loadAPIDoc(t)
	goldens, _ := filepath.Glob("testdata/*.golden")
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		// A golden file keeps the body only: its headers are held to the document when the
		// same requests are sent in TestOpenAPIResponsesConform.
		method, path, ct := http.MethodPost, chatPath, "application/json"
		if strings.HasPrefix(filepath.Base(g), "responses_") {
			path = "/v1/responses"
		}
		switch {
		case bytes.HasPrefix(b, []byte("data: ")), bytes.HasPrefix(b, []byte("event: ")):
			ct = "text/event-stream; charset=utf-8"
		case strings.HasPrefix(filepath.Base(g), "models"):
			method, path = http.MethodGet, "/v1/models"
		}
		if ptr := d.responseFor(g, method, path, http.StatusOK); ptr != "" {
			d.body(g, ptr, ct, denormalize(b))
		}
	}
	t.Logf("%d golden files: %d JSON documents, %d stream chunks", len(goldens), d.documents, d.chunks)
	if len(goldens) < 5 || d.chunks < 10 {
		t.Fatalf("too few goldens checked: %d files, %d chunks", len(goldens), d.chunks)
	}
}

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
	do(keyed, "GET", "/debug/traces", "")
	do(keyed, "GET", "/debug/traces", "", "Authorization", "Bearer local-key")
	do(keyed, "GET", "/health", "")
	do(keyed, "GET", "/metrics", "")

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

	// internal_error: a panic anywhere in the chain.
	chain := observability.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
		observability.ChainConfig{Logger: h.deps.Logger, Tracer: h.deps.Tracer, Propagator: h.deps.Propagator, Metrics: h.metrics, WriteInternalError: writeInternalError})
	rr = httptest.NewRecorder()
	chain.ServeHTTP(rr, httptest.NewRequest("GET", "/v1/models", nil))
	d.conform("panic", "GET", "/v1/models", rr)

	// Fixtures, scopes and the journal: the control surface and the chat answers it scripts.
	conformMockControl(t, d, do)
	// POST /v1/responses and the stored-response routes.
	conformResponses(t, d, do)
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

// conformMockControl provokes every response of the control surface (/_mock/*) and the chat
// answers and errors that fixtures script — a tool call, content, a refusal, a content_filter
// finish with a usage override, JSON and stream; fixture_mismatch; no_fixture_match — and the
// malformed x-mock-scope, each held to the document by do. It also checks that the fixtures did
// answer, so that a generated answer cannot pass for a scripted one.
func conformMockControl(t *testing.T, d *apiDoc, do func(*harness, string, string, string, ...string) *httptest.ResponseRecorder) {
	t.Helper()
	expect := func(rr *httptest.ResponseRecorder, status int, want ...string) {
		t.Helper()
		if rr.Code != status {
			t.Errorf("status %d, want %d: %s", rr.Code, status, rr.Body)
		}
		for _, w := range want {
			if !strings.Contains(rr.Body.String(), w) {
				t.Errorf("the answer lacks %s: %s", w, rr.Body)
			}
		}
	}
	j := newHarness(t, func(dd *Deps) { dd.Journal = NewJournal(dd.Config) })
	const scope = "oa-fixtures:1"
	in := []string{"X-Mock-Scope", scope, "X-Mock-Latency", "instant"}
	with := func(h ...string) []string { return append(slices.Clone(in), h...) }

	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[
		{"name":"weather-call","match":{"model":"mock-tools","tools":["get_weather"],"turn":1},"reply":{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris","unit":"c"}}]}},
		{"name":"weather-answer","match":{"model":["mock-tools"],"tool_result":"get_weather"},"reply":{"content":"It is 12C in Paris."}},
		{"name":"refuse","match":{"last_user":{"contains":"forbidden"},"stream":false},"reply":{"refusal":"I can't help with that."}},
		{"name":"refuse-stream","match":{"last_user":{"regex":"^forbidden"},"stream":true},"reply":{"refusal":"I can't help with that."}},
		{"name":"ghost","match":{"last_user":{"equals":"call the ghost"}},"reply":{"tool_calls":[{"name":"ghost_tool","arguments":{}}]}},
		{"name":"filtered","priority":5,"match":{"header":{"x-test-case":"filtered"}},"reply":{"content":"Filtered.","finish_reason":"content_filter","usage":{"prompt_tokens":12,"completion_tokens":5}}},
		{"name":"sequence","match":{"any_message":{"contains":"again"},"system":{"equals":"Be brief."}},"replies":[{"content":"First."},{"error":"rate_limit;retry_after=1s"},{"content":"Third.","latency":"instant"}]}
	]}`, in...), http.StatusOK, `"object":"fixtures.added"`, `"weather-call"`, `"sequence"`)

	weather := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather.","strict":true,"parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}}]`
	call := `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"}],` + weather
	expect(do(j, "POST", chatPath, call+`}`, in...), http.StatusOK, `"tool_calls":[{"id":"call_`, `"name":"get_weather"`, `"finish_reason":"tool_calls"`)
	expect(do(j, "POST", chatPath, call+`,"n":2,"stream":true,"stream_options":{"include_usage":true}}`, in...), http.StatusOK, `"name":"get_weather"`, `"arguments":"\"Paris\""`)
	answer := `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"c\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"12C"}],` + weather
	expect(do(j, "POST", chatPath, answer+`}`, in...), http.StatusOK, `"content":"It is 12C in Paris."`)
	expect(do(j, "POST", chatPath, answer+`,"stream":true}`, in...), http.StatusOK, `"content":" Paris."`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", `"n":2`), with("X-Mock-Fault", "")...), http.StatusOK) // generated: no fixture matches
	refuse := `{"model":"mock-chat","messages":[{"role":"user","content":"forbidden things"}]`
	expect(do(j, "POST", chatPath, refuse+`}`, in...), http.StatusOK, `"content":null,"refusal":"I can't help with that."`)
	expect(do(j, "POST", chatPath, refuse+`,"stream":true,"stream_options":{"include_usage":true}}`, in...), http.StatusOK,
		`"delta":{"role":"assistant"}`, `"delta":{"refusal":"I"}`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", ""), with("X-Test-Case", "filtered")...), http.StatusOK,
		`"finish_reason":"content_filter"`, `"prompt_tokens":12,"completion_tokens":5,"total_tokens":17`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", `"stream":true,"stream_options":{"include_usage":true}`), with("X-Test-Case", "filtered")...), http.StatusOK,
		`"finish_reason":"content_filter"`, `"prompt_tokens":12`)
	again := `{"model":"mock-echo","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"again"}]}`
	expect(do(j, "POST", chatPath, again, in...), http.StatusOK, `"content":"First."`)
	expect(do(j, "POST", chatPath, again, in...), http.StatusTooManyRequests, `"code":"simulated_rate_limit"`)
	expect(do(j, "POST", chatPath, again, in...), http.StatusOK, `"content":"Third."`)
	// fixture_mismatch: the fixture calls a tool the request did not offer.
	expect(do(j, "POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"call the ghost"}]}`, in...),
		http.StatusBadRequest, `"code":"fixture_mismatch"`, `"param":"tool_calls[0]"`)
	// no_fixture_match: a strict scope, and a request none of its fixtures (nor a file's) matches.
	strict := []string{"X-Mock-Scope", "oa-strict", "X-Mock-Latency", "instant"}
	expect(do(j, "POST", "/_mock/fixtures", `{"strict":true,"fixtures":[{"name":"only-hello","match":{"last_user":{"equals":"hello"}},"reply":{"content":"Hi."}}]}`, strict...),
		http.StatusOK, `"scope":"oa-strict"`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", ""), strict...), http.StatusBadRequest, `"code":"no_fixture_match"`, `only-hello`)
	expect(do(j, "POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"hello"}]}`, strict...), http.StatusOK, `"content":"Hi."`)

	// A malformed x-mock-scope, wherever it is read; never echoed.
	for _, r := range []struct{ method, path, body string }{
		{"POST", chatPath, chatBody("mock-chat", "")},
		{"GET", "/v1/models", ""},
		{"GET", "/v1/models/mock-chat", ""},
		{"POST", "/_mock/fixtures", `{"fixtures":[]}`},
		{"GET", "/_mock/fixtures", ""},
		{"GET", "/_mock/journal", ""},
		{"DELETE", "/_mock/scopes/" + scope, ""},
	} {
		rr := do(j, r.method, r.path, r.body, "X-Mock-Scope", "not a scope/..")
		expect(rr, http.StatusBadRequest, `"code":"invalid_simulation_header"`, `"param":"X-Mock-Scope"`)
		if strings.Contains(rr.Body.String(), "not a scope") {
			t.Errorf("%s %s: the malformed scope is echoed: %s", r.method, r.path, rr.Body)
		}
	}
	do(j, "GET", "/v1/models", "", "X-Mock-Scope", scope)
	do(j, "GET", "/v1/models/mock-chat", "", "X-Mock-Scope", scope)

	// The control surface's refusals.
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[{"match":{},"reply":{"content":"x"}}]}`, in...), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"fixtures[0].name"`)
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[{"name":"refuse","reply":{"content":"x"}}]}`, in...), http.StatusBadRequest, `"code":"invalid_value"`)
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":`, in...), http.StatusBadRequest, `"code":"invalid_value"`)
	expect(do(j, "POST", "/_mock/fixtures", `fixtures: []`, with("Content-Type", "text/yaml")...), http.StatusUnsupportedMediaType)
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[],"pad":"`+strings.Repeat("a", 1<<20)+`"}`, in...), http.StatusRequestEntityTooLarge)
	few := newHarness(t, func(dd *Deps) { dd.Config.MaxScopeFixtures = 1 })
	expect(do(few, "POST", "/_mock/fixtures", `{"fixtures":[{"name":"a","reply":{"content":"a"}},{"name":"b","reply":{"content":"b"}}]}`), http.StatusBadRequest, `"param":"fixtures"`)
	gate := make(chan struct{})
	close(gate)
	req := httptest.NewRequest("POST", "/_mock/fixtures", &gatedBody{gate: gate, reading: make(chan struct{}), r: strings.NewReader(`{"fixtures":`), err: os.ErrDeadlineExceeded})
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	rr := httptest.NewRecorder()
	j.handler.ServeHTTP(rr, req)
	expect(rr, http.StatusRequestTimeout, `"code":"request_timeout"`)
	d.conform("read deadline", "POST", "/_mock/fixtures", rr)
	expect(do(j, "PUT", "/_mock/fixtures", `{}`), http.StatusMethodNotAllowed)

	// Reading it back: the fixtures and their hits, and the journal.
	expect(do(j, "GET", "/_mock/fixtures", "", in...), http.StatusOK, `"scope":"`+scope+`"`, `"origin":"runtime"`, `"last_user.regex"`, `"header"`)
	expect(do(j, "GET", "/_mock/fixtures?scope=oa-strict", ""), http.StatusOK, `"only-hello"`)
	expect(do(j, "GET", "/_mock/fixtures?scope=", ""), http.StatusOK, `"scope":"","data":[]`)
	expect(do(j, "GET", "/_mock/fixtures?scope=not+a+scope", ""), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"scope"`)
	journal := do(j, "GET", "/_mock/journal", "", in...)
	expect(journal, http.StatusOK, `"fixture":"weather-call"`, `"fixture":"generated"`, `"fixture":"refuse-stream"`, `"error_code":"fixture_mismatch"`,
		`"fault":"rate_limit"`, `"stream_outcome":"completed"`, `"finish_reason":"content_filter"`, `"shape":{"fields":["messages","model","tools"]`)
	var entries struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(journal.Body.Bytes(), &entries); err != nil || len(entries.Data) < 15 {
		t.Errorf("the journal has %d entries (%v), want every call of the scope", len(entries.Data), err)
	}
	do(j, "GET", "/_mock/journal?scope=oa-strict&limit=1", "")
	do(j, "GET", "/_mock/journal?scope=", "", "User-Agent", "OpenAI/Python 1.109.1", "X-Stainless-Lang", "python")
	expect(do(j, "GET", "/_mock/journal?limit=0", "", in...), http.StatusBadRequest, `"param":"limit"`)
	expect(do(j, "GET", "/_mock/journal?limit=two", "", in...), http.StatusBadRequest, `"param":"limit"`)
	expect(do(j, "GET", "/_mock/journal?scope=a%2Fb", ""), http.StatusBadRequest, `"param":"scope"`)
	expect(do(newHarness(t), "GET", "/_mock/journal", ""), http.StatusNotFound, `"code":"not_found"`) // --journal-entries 0

	// Dropping scopes.
	expect(do(j, "DELETE", "/_mock/scopes/"+scope, ""), http.StatusOK, `"object":"scope.deleted"`, `"deleted":true`)
	expect(do(j, "DELETE", "/_mock/scopes/"+scope, ""), http.StatusOK, `"deleted":false`)
	expect(do(j, "GET", "/_mock/journal", "", in...), http.StatusOK, `"data":[]`)
	expect(do(j, "DELETE", "/_mock/scopes/not%20a%20scope", ""), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"scope"`)

	// With a local key, /_mock/* needs it too, before anything else.
	keyed := newHarness(t, func(dd *Deps) {
		dd.Config.APIKey = "local-key"
		dd.Journal = NewJournal(dd.Config)
	})
	expect(do(keyed, "POST", "/_mock/fixtures", `{"fixtures":`, "X-Mock-Scope", "bad scope"), http.StatusUnauthorized, `"code":"missing_api_key"`)
	expect(do(keyed, "GET", "/_mock/fixtures", "", "Authorization", "Bearer wrong"), http.StatusUnauthorized, `"code":"invalid_api_key"`)
	expect(do(keyed, "GET", "/_mock/journal", ""), http.StatusUnauthorized)
	expect(do(keyed, "DELETE", "/_mock/scopes/x", ""), http.StatusUnauthorized)
	expect(do(keyed, "POST", "/_mock/fixtures", `{"fixtures":[{"name":"k","reply":{"content":"k"}}]}`, "Authorization", "Bearer local-key", "X-Mock-Scope", "k"), http.StatusOK)
	expect(do(keyed, "POST", chatPath, chatBody("mock-echo", ""), "Authorization", "Bearer local-key", "X-Mock-Scope", "k"), http.StatusOK, `"content":"k"`)
	expect(do(keyed, "GET", "/_mock/journal?scope=k", "", "Authorization", "Bearer local-key"), http.StatusOK, `"fixture":"k"`)
	expect(do(keyed, "DELETE", "/_mock/scopes/k", "", "Authorization", "Bearer local-key"), http.StatusOK, `"deleted":true`)
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

// corpusAgainstSchema holds a client corpus to a request schema of the document: a body the mock
// accepts validates, one the corpus expects a field's 400 for does not. It returns how many
// bodies it checked.
func corpusAgainstSchema(t *testing.T, d *apiDoc, request string, corpus map[string]corpusEntry) int {
	t.Helper()
	for name, e := range corpus {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(e.Body))
		if err != nil {
			t.Fatal(err)
		}
		verr := d.schema(request).Validate(v)
		switch {
		case e.Expect == nil && verr != nil:
			t.Errorf("%s: an accepted body does not validate: %v", name, verr)
		case e.Expect != nil && slices.Contains([]string{"unknown_parameter", "unsupported_parameter", "invalid_value", "missing_required_parameter"}, e.Expect.Code) && verr == nil:
			t.Errorf("%s: a body answered %s validates", name, e.Expect.Code)
		}
	}
	return len(corpus)
}

// TestOpenAPIRequestSchema: every client corpus body the mock accepts validates against the
// document's request schema; one the corpus expects a 400 for a field does not; and a body with
// an unknown field does not. (internal/openapi's tests compare the schema with the decoder
// itself, on these bodies and thousands of variants.)
func TestOpenAPIRequestSchema(t *testing.T) {
	d := loadAPIDoc(t)
	const request = "/components/schemas/ChatCompletionRequest"
	checked := corpusAgainstSchema(t, d, request, loadCorpus(t))
	if checked < 50 {
		t.Fatalf("only %d corpus bodies checked", checked)
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"model":"mock-chat","messages":[{"role":"user","content":"hi"}],"temprature":1}`))
	if d.schema(request).Validate(v) == nil {
		t.Error("a body with an unknown field validated")
	}
}

func TestOpenAPIServed(t *testing.T) {
	rr := newHarness(t).do("GET", "/openapi.json", "")
	if rr.Code != http.StatusOK || rr.Header().Get("Content-Type") != "application/json" || !observability.ValidRequestID(rr.Header().Get("X-Request-Id")) {
		t.Fatalf("status %d, headers %v", rr.Code, rr.Header())
	}
	if !bytes.Equal(rr.Body.Bytes(), openapi.Document()) {
		t.Error("the body is not the embedded document")
	}
	if !json.Valid(rr.Body.Bytes()) {
		t.Error("the body is not JSON")
	}
}
