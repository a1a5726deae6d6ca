package audit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mockgateway/internal/promtext"
)

// leaks are the deliberate mistakes a fake target can make.
type leaks struct {
	logPrompt   bool // the access log carries the last user message
	authInSpan  bool // the server span carries the Authorization header
	echoInError bool // a model_not_found error quotes the first message
	modelLabel  bool // the chat counter's model label is the model name the client sent
	emptyTraces bool // /debug/traces always answers with no spans
	stateAttr   bool // the server span copies the tracestate header into an attribute
	noLogs      bool // nothing is written to the log file
	// logInstructions: the access line of a /v1/responses request carries its instructions.
	logInstructions bool
}

// fakeTarget mimics enough of mockgateway's surface to be audited: the chat route (mock-echo
// only), /v1/models, an access log file, /metrics with mockgateway_http_requests_total and a
// chat counter, and /debug/traces.
type fakeTarget struct {
	leak    leaks
	logPath string
	srv     *httptest.Server

	mu       sync.Mutex
	logFile  *os.File
	requests map[string]int // status → count
	models   map[string]int // chat counter by model label
	spans    []fakeSpan
	seq      int
}

type fakeSpan struct {
	TraceID, SpanID, Name, TraceState string
	Attrs                             map[string]string
}

var validID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
var traceparent = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$`)

func newFakeTarget(t *testing.T, l leaks) *fakeTarget {
	t.Helper()
	f := &fakeTarget{leak: l, logPath: filepath.Join(t.TempDir(), "service.log"), requests: map[string]int{}, models: map[string]int{}}
	var err error
	if f.logFile, err = os.Create(f.logPath); err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(func() { f.srv.Close(); f.logFile.Close() })
	return f
}

func (f *fakeTarget) writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": code}})
}

func (f *fakeTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := r.Header.Get("X-Request-Id")
	if !validID.MatchString(reqID) {
		reqID = "req_" + randomHex(16)
	}
	w.Header().Set("X-Request-Id", reqID)
	traceID, traceState := randomHex(16), ""
	if m := traceparent.FindStringSubmatch(r.Header.Get("Traceparent")); m != nil {
		traceID, traceState = m[1], r.Header.Get("Tracestate")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	var status int
	var model, prompt string
	if err != nil {
		f.writeError(w, 413, "request_too_large", "The request body is too large.")
		status = 413
	} else {
		status, model, prompt = f.route(w, r, body)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests[strconv.Itoa(status)]++
	if model != "" {
		label := "other"
		if model == "mock-echo" || f.leak.modelLabel {
			label = model
		}
		f.models[label]++
	}
	if !f.leak.noLogs {
		line := map[string]any{"time": time.Now().Format(time.RFC3339Nano), "level": "INFO", "msg": "request", "request_id": reqID, "trace_id": traceID, "status": status}
		responses := r.URL.Path == "/v1/responses"
		if prompt != "" && (f.leak.logPrompt && !responses || f.leak.logInstructions && responses) {
			line["prompt"] = prompt
		}
		data, _ := json.Marshal(line)
		_, _ = f.logFile.Write(append(data, '\n'))
	}
	f.seq++
	attrs := map[string]string{"mockgateway.request_id": reqID, "http.response.status_code": strconv.Itoa(status)}
	if f.leak.authInSpan {
		attrs["http.request.header.authorization"] = r.Header.Get("Authorization")
	}
	if f.leak.stateAttr {
		attrs["http.request.header.tracestate"] = r.Header.Get("Tracestate")
	}
	method := r.Method
	switch method {
	case "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS":
	default:
		method = "_OTHER" // a client chooses the method: bounded, as the real service does
	}
	f.spans = append(f.spans, fakeSpan{TraceID: traceID, SpanID: fmt.Sprintf("%016x", f.seq), Name: method + " request", TraceState: traceState, Attrs: attrs})
}

// route answers the request and returns its status, the model of a chat request and its last
// user message.
func (f *fakeTarget) route(w http.ResponseWriter, r *http.Request, body []byte) (int, string, string) {
	switch {
	case r.URL.Path == "/metrics":
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP mockgateway_http_requests_total Requests.\n# TYPE mockgateway_http_requests_total counter\n")
		for _, s := range sortedKeys(f.requests) {
			fmt.Fprintf(w, "mockgateway_http_requests_total{status_code=%q} %d\n", s, f.requests[s])
		}
		fmt.Fprintf(w, "# HELP mockgateway_chat_completions_total Chats.\n# TYPE mockgateway_chat_completions_total counter\n")
		for _, m := range sortedKeys(f.models) {
			fmt.Fprintf(w, "mockgateway_chat_completions_total{model=%q} %d\n", m, f.models[m])
		}
		return 200, "", ""
	case r.URL.Path == "/debug/traces":
		f.mu.Lock()
		defer f.mu.Unlock()
		spans := []map[string]any{}
		if !f.leak.emptyTraces {
			for _, s := range f.spans {
				spans = append(spans, map[string]any{"trace_id": s.TraceID, "span_id": s.SpanID, "name": s.Name, "attributes": s.Attrs})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"count": len(spans), "spans": spans})
		return 200, "", ""
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"mock-echo","object":"model","capabilities":{"streaming":true,"tools":false}}]}`)
		return 200, "", ""
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
	case r.URL.Path == "/v1/responses" && r.Method == http.MethodPost:
		return f.responses(w, body)
	case r.URL.Path == "/v1/chat/completions":
		f.writeError(w, 405, "method_not_allowed", "This route does not accept this method.")
		return 405, "", ""
	default:
		f.writeError(w, 404, "not_found", "No such route.")
		return 404, "", ""
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.writeError(w, 400, "invalid_json", "We could not parse the JSON body of your request.")
		return 400, "", ""
	}
	text := func(c any) string {
		switch v := c.(type) {
		case string:
			return v
		case []any:
			var parts []string
			for _, p := range v {
				if m, ok := p.(map[string]any); ok {
					parts = append(parts, fmt.Sprint(m["text"]))
				}
			}
			return strings.Join(parts, " ")
		}
		return ""
	}
	last, first := "", ""
	for i, m := range req.Messages {
		if i == 0 {
			first = text(m.Content)
		}
		if m.Role == "user" {
			last = text(m.Content)
		}
	}
	if req.Model != "mock-echo" {
		msg := "The model does not exist."
		if f.leak.echoInError {
			msg += " Your request began: " + first
		}
		f.writeError(w, 404, "model_not_found", msg)
		return 404, req.Model, last
	}
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\ndata: [DONE]\n\n", "echo: "+last)
		return 200, req.Model, last
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "echo: " + last}}}})
	return 200, req.Model, last
}

// responses answers a Responses request for mock-echo: the instructions and the input's text are
// what its leaky access line could carry.
func (f *fakeTarget) responses(w http.ResponseWriter, body []byte) (int, string, string) {
	var req struct {
		Model        string `json:"model"`
		Stream       bool   `json:"stream"`
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.writeError(w, 400, "invalid_json", "We could not parse the JSON body of your request.")
		return 400, "", ""
	}
	logged := req.Instructions
	if req.Model != "mock-echo" {
		f.writeError(w, 404, "model_not_found", "The model does not exist.")
		return 404, req.Model, logged
	}
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\"}\n\n")
		return 200, req.Model, logged
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"object":"response","status":"completed","output":[]}`)
	return 200, req.Model, logged
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fakeJaeger serves the fake target's spans through Jaeger's query API: /api/services, the v3
// trace lookup (OTLP JSON, with the caller's tracestate in traceState) and the v1 search (with
// the tracestate as the w3c.tracestate tag, as Jaeger's translator stores it).
func fakeJaeger(t *testing.T, f *fakeTarget) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/services", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"data":["mockgateway"],"total":1}`)
	})
	mux.HandleFunc("GET /api/v3/traces/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var spans []any
		for _, s := range f.spans {
			if s.TraceID != r.PathValue("id") {
				continue
			}
			var attrs []any
			for k, v := range s.Attrs {
				attrs = append(attrs, map[string]any{"key": k, "value": map[string]any{"stringValue": v}})
			}
			spans = append(spans, map[string]any{"traceId": s.TraceID, "spanId": s.SpanID, "name": s.Name, "traceState": s.TraceState, "attributes": attrs})
		}
		if len(spans) == 0 {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"httpCode":404,"message":"trace not found"}}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"resourceSpans": []any{map[string]any{
			"resource":   map[string]any{"attributes": []any{map[string]any{"key": "service.name", "value": map[string]any{"stringValue": "mockgateway"}}}},
			"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "mockgateway"}, "spans": spans}},
		}}}})
	})
	mux.HandleFunc("GET /api/traces", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var data []any
		for _, s := range f.spans {
			tags := []any{}
			for k, v := range s.Attrs {
				tags = append(tags, map[string]any{"key": k, "type": "string", "value": v})
			}
			if s.TraceState != "" {
				tags = append(tags, map[string]any{"key": "w3c.tracestate", "type": "string", "value": s.TraceState})
			}
			data = append(data, map[string]any{"traceID": s.TraceID, "spans": []any{map[string]any{"traceID": s.TraceID, "spanID": s.SpanID, "operationName": s.Name, "tags": tags, "processID": "p1"}},
				"processes": map[string]any{"p1": map[string]any{"serviceName": "mockgateway", "tags": []any{}}}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "total": len(data)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fakePrometheus is a Prometheus API that scrapes the target on every query, so what it stores
// is exactly what the target exposes.
func fakePrometheus(t *testing.T, target string) *httptest.Server {
	series := func() []map[string]string {
		resp, err := http.Get(target + "/metrics")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		families, _ := promtext.Parse(resp.Body) // what parsed before a bad line, as a scrape keeps
		var out []map[string]string
		for name := range families {
			for _, m := range families[name].GetMetric() {
				v, _ := promtext.Value(m)
				ls := map[string]string{"__name__": name, "__value__": strconv.FormatFloat(v, 'f', -1, 64)}
				for _, l := range m.GetLabel() {
					ls[l.GetName()] = l.GetValue()
				}
				out = append(out, ls)
			}
		}
		return out
	}
	ok := func(w http.ResponseWriter, data any) {
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		sum, found := 0.0, false
		for _, s := range series() {
			if s["__name__"] == "mockgateway_http_requests_total" {
				v, _ := strconv.ParseFloat(s["__value__"], 64)
				sum += v
				found = true
			}
		}
		if !found {
			ok(w, map[string]any{"resultType": "vector", "result": []any{}})
			return
		}
		ok(w, map[string]any{"resultType": "vector", "result": []any{map[string]any{"metric": map[string]string{}, "value": []any{float64(time.Now().Unix()), strconv.FormatFloat(sum, 'f', -1, 64)}}}})
	})
	mux.HandleFunc("GET /api/v1/labels", func(w http.ResponseWriter, r *http.Request) {
		names := map[string]bool{}
		for _, s := range series() {
			for k := range s {
				if k != "__value__" {
					names[k] = true
				}
			}
		}
		var out []string
		for k := range names {
			out = append(out, k)
		}
		sort.Strings(out)
		ok(w, out)
	})
	mux.HandleFunc("GET /api/v1/label/{name}/values", func(w http.ResponseWriter, r *http.Request) {
		vals := map[string]bool{}
		for _, s := range series() {
			if v, has := s[r.PathValue("name")]; has {
				vals[v] = true
			}
		}
		out := []string{}
		for v := range vals {
			out = append(out, v)
		}
		sort.Strings(out)
		ok(w, out)
	})
	mux.HandleFunc("GET /api/v1/series", func(w http.ResponseWriter, r *http.Request) {
		var out []map[string]string
		for _, s := range series() {
			delete(s, "__value__")
			out = append(out, s)
		}
		ok(w, out)
	})
	mux.HandleFunc("GET /api/v1/query_exemplars", func(w http.ResponseWriter, r *http.Request) { ok(w, []any{}) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// runAudit runs the audit with a JSON report and returns the report and the exit code.
func runAudit(t *testing.T, args ...string) (*Report, int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"--format", "json"}, args...)
	err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	code := 0
	if err != nil {
		var ee *ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("Run returned %T %v, want *ExitError", err, err)
		}
		code = ee.ExitCode()
	}
	var rep Report
	if stdout.Len() > 0 {
		if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
			t.Fatalf("report is not JSON: %v\n%s", jerr, stdout.String())
		}
		if rep.ExitCode != code {
			t.Errorf("report exit_code %d, Run's %d", rep.ExitCode, code)
		}
	}
	return &rep, code, stderr.String()
}

func (rep *Report) source(name string) *SourceReport {
	for i := range rep.Sources {
		if rep.Sources[i].Name == name {
			return &rep.Sources[i]
		}
	}
	return nil
}

// leaksIn returns the leaks found in source whose place contains place.
func (rep *Report) leaksIn(source, place string) []Finding {
	var out []Finding
	for _, f := range rep.Leaks {
		if f.Source == source && strings.Contains(f.Place, place) {
			out = append(out, f)
		}
	}
	return out
}

func dump(t *testing.T, rep *Report) {
	t.Helper()
	var b strings.Builder
	_ = rep.writeText(&b)
	t.Log("\n" + b.String())
}

func TestAuditCleanFake(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	j := fakeJaeger(t, f)
	p := fakePrometheus(t, f.srv.URL)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--traces", "embedded,"+j.URL, "--prometheus", p.URL, "--wait", "3s")
	if code != 0 || rep.Verdict != "clean" {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, want a clean audit of a clean target", code, rep.Verdict)
	}
	for _, s := range rep.Sources {
		if s.Verdict != "clean" || s.Searched[primaryCount[s.Kind]] == 0 {
			t.Errorf("%s: %s, searched %v", s.Name, s.Verdict, s.Searched)
		}
	}
	// Jaeger's trace-state fields hold the caller's tracestate: allowed, and reported.
	allowed := 0
	for _, a := range rep.Allowed {
		if a.Source == "traces:jaeger" && strings.Contains(strings.ToLower(a.Field), "tracestate") {
			allowed++
		}
	}
	if allowed == 0 {
		t.Error("the tracestate in Jaeger's traceState / w3c.tracestate was not reported as allowed")
	}
	if rep.Canaries.Count < 1000 || rep.Traffic.Requests < 80 {
		t.Errorf("only %d canaries in %d requests", rep.Canaries.Count, rep.Traffic.Requests)
	}
}

func TestAuditFindsPromptInLogs(t *testing.T) {
	f := newFakeTarget(t, leaks{logPrompt: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("logs", "last user message")
	if len(found) == 0 {
		dump(t, rep)
		t.Fatal("the logged prompt was not attributed to the logs and the last user message")
	}
	if f := found[0]; f.Field != "prompt" || f.Probe == "" || !strings.Contains(f.Excerpt, "‹"+f.Canary+"›") {
		t.Errorf("finding = %+v", f)
	}
	if s := rep.source("logs"); s.Verdict != "leak" || s.Searched["lines"] == 0 {
		t.Errorf("logs source: %+v", s)
	}
	for _, l := range rep.Leaks {
		if l.Source != "logs" {
			t.Errorf("leak attributed to %s: %+v", l.Source, l)
		}
	}
	assertNoCanaryValues(t, rep)
}

// A Responses request's instructions in the access log: the audit's Responses probes carry
// canaries there, and finds them.
func TestAuditFindsResponsesInstructionsInLogs(t *testing.T) {
	f := newFakeTarget(t, leaks{logInstructions: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("logs", "responses instructions")
	if len(found) == 0 {
		t.Fatalf("the Responses instructions in the log were not reported: %+v", rep.Leaks)
	}
	for _, l := range found {
		if !strings.HasPrefix(l.ProbeName, "responses ") {
			t.Errorf("leak attributed to %s %q, not a Responses probe", l.Probe, l.ProbeName)
		}
	}
}

func TestAuditFindsAuthorizationInSpans(t *testing.T) {
	f := newFakeTarget(t, leaks{authInSpan: true})
	j := fakeJaeger(t, f)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--traces", "embedded,"+j.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	for _, src := range []string{"traces:embedded", "traces:jaeger"} {
		found := rep.leaksIn(src, "Authorization: Bearer token")
		if len(found) == 0 {
			dump(t, rep)
			t.Fatalf("%s: the Authorization header in a span attribute was not found", src)
		}
		if !strings.Contains(found[0].Field, "authorization") {
			t.Errorf("%s: field %q does not name the attribute", src, found[0].Field)
		}
	}
	assertNoCanaryValues(t, rep)
	if rep.source("traces:embedded").Leaks < 50 {
		t.Errorf("only %d leaks: every traced request carried a canary bearer token", rep.source("traces:embedded").Leaks)
	}
}

// The caller's tracestate may sit in a span's own trace-state field, and nowhere else: not even
// in an attribute named after it.
func TestAuditTraceStateOnlyInItsField(t *testing.T) {
	f := newFakeTarget(t, leaks{stateAttr: true})
	j := fakeJaeger(t, f)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--traces", "embedded,"+j.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	for _, src := range []string{"traces:embedded", "traces:jaeger"} {
		found := rep.leaksIn(src, "tracestate header value")
		if len(found) == 0 || !strings.Contains(found[0].Field, "http.request.header.tracestate") {
			t.Errorf("%s: %+v", src, found)
		}
	}
	allowed := 0
	for _, a := range rep.Allowed {
		if a.Source == "traces:jaeger" && (a.Field == "traceState" || a.Field == "tags[w3c.tracestate]") {
			allowed++
		}
	}
	if allowed == 0 {
		t.Error("the trace-state fields themselves were not allowed")
	}
}

func TestAuditFindsAPIKeyInSpans(t *testing.T) {
	f := newFakeTarget(t, leaks{authInSpan: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--api-key", "sk-local-audit-key-123", "--wait", "3s")
	if code != ExitLeak {
		t.Fatalf("exit %d, want 1", code)
	}
	found := rep.leaksIn("traces:embedded", "the local API key")
	if len(found) == 0 || found[0].Canary != "s1" || strings.Contains(found[0].Excerpt, "sk-local-audit-key-123") {
		dump(t, rep)
		t.Fatalf("the API key in a span: %+v", found)
	}
}

func TestAuditFindsMessageInErrorBody(t *testing.T) {
	f := newFakeTarget(t, leaks{echoInError: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	var found []Finding
	for _, f := range rep.leaksIn("responses", "system message") {
		if strings.Contains(f.ProbeName, "unknown model name") && f.Field == "error.message" {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		dump(t, rep)
		t.Fatal("the echoed message was not found in the error.message of the unknown-model responses")
	}
}

func TestAuditFindsModelNameAsMetricLabel(t *testing.T) {
	f := newFakeTarget(t, leaks{modelLabel: true})
	p := fakePrometheus(t, f.srv.URL)
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--prometheus", p.URL, "--wait", "3s")
	if code != ExitLeak {
		dump(t, rep)
		t.Fatalf("exit %d, want 1", code)
	}
	for _, src := range []string{"metrics", "prometheus"} {
		found := rep.leaksIn(src, "model name (unknown model")
		if len(found) == 0 {
			dump(t, rep)
			t.Fatalf("%s: the model name used as a label was not found", src)
		}
		if found[0].Probe == "" || !strings.Contains(found[0].ProbeName, "unknown model") {
			t.Errorf("%s: finding = %+v", src, found[0])
		}
	}
	if s := rep.source("prometheus"); s.Searched["label_values"] == 0 || s.Searched["series"] == 0 {
		t.Errorf("prometheus searched %v", s.Searched)
	}
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestAuditUnreachablePrometheus(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--prometheus", "http://"+closedPort(t), "--wait", "2s")
	if code != ExitIncomplete || rep.Verdict != "incomplete" {
		t.Fatalf("exit %d verdict %s, want 2", code, rep.Verdict)
	}
	if s := rep.source("prometheus"); s == nil || s.Verdict != "error" {
		t.Fatalf("prometheus source: %+v", s)
	}
	if len(rep.Problems) == 0 {
		t.Error("no problem reported")
	}
}

func TestAuditUnreachableTarget(t *testing.T) {
	rep, code, _ := runAudit(t, "--target", "http://"+closedPort(t), "--wait", "1s")
	if code != ExitIncomplete || rep.Verdict != "incomplete" {
		t.Fatalf("exit %d verdict %s, want 2", code, rep.Verdict)
	}
	if len(rep.Problems) == 0 || !strings.Contains(strings.Join(rep.Problems, " "), "unreachable") {
		t.Errorf("problems = %v", rep.Problems)
	}
}

func TestAuditEmptySourcesAreNotAPass(t *testing.T) {
	f := newFakeTarget(t, leaks{emptyTraces: true, noLogs: true})
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", f.logPath, "--wait", "1s")
	if code != ExitIncomplete {
		dump(t, rep)
		t.Fatalf("exit %d, want 2", code)
	}
	for _, name := range []string{"logs", "traces:embedded"} {
		if s := rep.source(name); s.Verdict != "empty" {
			t.Errorf("%s: verdict %s, want empty", name, s.Verdict)
		}
	}
}

func TestAuditStaleLogFileIsNotAPass(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	stale := filepath.Join(t.TempDir(), "other.log")
	if err := os.WriteFile(stale, []byte(`{"msg":"request","request_id":"req_1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--logs", stale, "--wait", "1s")
	if code != ExitIncomplete || rep.source("logs").Verdict != "not_captured" {
		t.Fatalf("exit %d, logs %+v", code, rep.source("logs"))
	}
}

func TestAuditGarbageJaeger(t *testing.T) {
	f := newFakeTarget(t, leaks{})
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html>not jaeger</html>")
	}))
	defer html.Close()
	rep, code, _ := runAudit(t, "--target", f.srv.URL, "--traces", html.URL, "--wait", "1s")
	if code != ExitIncomplete || rep.source("traces:jaeger").Verdict != "error" {
		t.Fatalf("exit %d, jaeger %+v", code, rep.source("traces:jaeger"))
	}
}

func TestAuditLogsFromStdin(t *testing.T) {
	f := newFakeTarget(t, leaks{logPrompt: true})
	pr, pw := io.Pipe()
	// Feed the log file to stdin as it grows, like `tail -f`.
	stop := make(chan struct{})
	go func() {
		defer pw.Close()
		var off int64
		for {
			data, _ := os.ReadFile(f.logPath)
			if int64(len(data)) > off {
				_, _ = pw.Write(data[off:])
				off = int64(len(data))
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer close(stop)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--format", "json", "--target", f.srv.URL, "--logs", "-", "--traces", "none", "--wait", "3s"},
		func(string) string { return "" }, pr, &stdout, &stderr)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitLeak {
		t.Fatalf("err = %v, want a leak", err)
	}
	var rep Report
	_ = json.Unmarshal(stdout.Bytes(), &rep)
	if len(rep.leaksIn("logs", "user message")) == 0 {
		t.Fatal("the prompt in the piped log was not found")
	}
}

func TestAuditEnvironmentFallbacks(t *testing.T) {
	env := map[string]string{"MOCKGATEWAY_AUDIT_TARGET": "http://example.test:1", "MOCKGATEWAY_AUDIT_WAIT": "7s", "MOCKGATEWAY_AUDIT_TRACES": "none", "MOCKGATEWAY_AUDIT_METRICS_URL": "none"}
	cfg, err := parseConfig([]string{"--wait", "2s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.target != "http://example.test:1" || cfg.wait != 2*time.Second || len(cfg.traces) != 0 || cfg.metricsURL != "" {
		t.Errorf("cfg = %+v", cfg)
	}
	for _, bad := range [][]string{{"--format", "xml"}, {"--traces", "ftp://x"}, {"--target", "nope"}, {"--wait", "soon"}, {"extra"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	var stderr bytes.Buffer
	err = run(context.Background(), []string{"--format", "xml"}, func(string) string { return "" }, nil, io.Discard, &stderr)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitIncomplete {
		t.Errorf("a bad flag: %v, want exit 2", err)
	}
}

// assertNoCanaryValues checks that the report names canaries by id only. The run's canaries
// are not known here, but they are 20 characters of [a-z0-9] sharing a 12-character prefix:
// two such words with one prefix in the report would be canaries.
func assertNoCanaryValues(t *testing.T, rep *Report) {
	t.Helper()
	data, _ := json.Marshal(rep)
	var b strings.Builder
	_ = rep.writeText(&b)
	word := regexp.MustCompile(`[a-z0-9]+`)
	for _, text := range []string{string(data), b.String()} {
		if !regexp.MustCompile(`‹c\d{4}›`).MatchString(text) {
			t.Error("no masked canary in the report")
		}
		byPrefix := map[string]map[string]bool{}
		for _, w := range word.FindAllString(strings.ToLower(text), -1) {
			if len(w) < canaryLen {
				continue
			}
			for i := 0; i+canaryLen <= len(w); i++ {
				p := w[i : i+canaryPrefixLen]
				if byPrefix[p] == nil {
					byPrefix[p] = map[string]bool{}
				}
				byPrefix[p][w[i:i+canaryLen]] = true
			}
		}
		for p, words := range byPrefix {
			if len(words) > 1 {
				t.Fatalf("the report holds canary values (prefix %s…)", p[:4])
			}
		}
	}
}

func TestAuditScanEncodings(t *testing.T) {
	c, err := newCanaries()
	if err != nil {
		t.Fatal(err)
	}
	k := c.New("p01", "user message", kindPlain)
	other := c.New("p01", "system message", kindPlain)
	v := k.Value
	b64 := func(s string) string { return base64Std(s) }
	cases := map[string]string{
		"exact":             "prompt=" + v + " end",
		"case-changed":      "PROMPT=" + strings.ToUpper(v),
		"truncated":         "preview=" + v[:canaryLen-3] + "…",
		"hex":               "body=" + fmt.Sprintf("%x", "xx"+v+"yy"),
		"base64":            "b=" + b64("a"+v+"b"),
		"base64url":         "b=" + strings.NewReplacer("+", "-", "/", "_").Replace(b64("ab"+v+"\xff\xfe")),
		"percent-decoded":   "q=%" + strings.Join(splitHex(v), "%"),
		"unicode-unescaped": `msg="` + unicodeEscape(v) + `"`,
	}
	for want, text := range cases {
		hits := c.Scan(text)
		if len(hits) != 1 || hits[0].Canary != k || !strings.HasPrefix(hits[0].Encoding, want) {
			t.Errorf("%s: hits = %+v", want, hits)
			continue
		}
		if ex := c.Excerpt(hits[0]); strings.Contains(ex, v) || strings.Contains(strings.ToLower(ex), v) {
			t.Errorf("%s: excerpt shows the canary: %s", want, ex)
		}
	}
	// base64 at every alignment.
	for pad := 0; pad < 3; pad++ {
		text := b64(strings.Repeat("z", pad) + "{\"auth\":\"" + v + "\"}")
		if hits := c.Scan(text); len(hits) != 1 || hits[0].Canary != k {
			t.Errorf("base64 with %d bytes before: %+v", pad, hits)
		}
	}
	// A fragment too short to tell which canary it was cut from is still reported.
	if hits := c.Scan("x " + c.prefix + " y"); len(hits) != 1 || hits[0].Encoding != "fragment" {
		t.Errorf("bare prefix: %+v", hits)
	}
	if hits := c.Scan("nothing here " + strings.Repeat("a", 100)); len(hits) != 0 {
		t.Errorf("false positives: %+v", hits)
	}
	if got := c.Mask("a " + v + " b " + other.Value); got != "a ‹"+k.ID+"› b ‹"+other.ID+"›" {
		t.Errorf("Mask = %q", got)
	}
	if !c.AddSecret("sk-local-key-1234", "api key") || c.AddSecret("short", "x") {
		t.Error("AddSecret")
	}
	if hits := c.Scan("h=" + b64("Bearer sk-local-key-1234")); len(hits) != 1 || hits[0].Canary.Kind != kindSecret {
		t.Errorf("base64 secret: %+v", hits)
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func splitHex(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		out = append(out, fmt.Sprintf("%02X", s[i]))
	}
	return out
}

func unicodeEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// TestReportableCode: the report prints a target's error code only when it has a normalized
// code's shape; anything else (a canary, a key) is named by its shape alone.
func TestReportableCode(t *testing.T) {
	for in, want := range map[string]string{
		"simulated_timeout":          "simulated_timeout",
		"":                           "",
		"mgcanary-7f3a-leaked":       "(not a normalized code)",
		"sk-live-Key":                "(not a normalized code)",
		strings.Repeat("a", 65):      "(not a normalized code)",
		"invalid_api_key\nsecret=xy": "(not a normalized code)",
	} {
		if got := reportableCode(in); got != want {
			t.Errorf("reportableCode(%q) = %q, want %q", in, got, want)
		}
	}
}
