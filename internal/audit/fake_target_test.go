package audit

import (
	"encoding/json"
	"fmt"
	"io"
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
	// logMetadata: the access line of a /v1/messages request carries its metadata.user_id.
	logMetadata bool
	// untracedProbes: requests to /health and /metrics start no span, as in the real service
	// without --trace-probes.
	untracedProbes bool
	// lostSpanPath: requests to this path leave no span: a traced route's span that never arrives.
	lostSpanPath string
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
		messages := r.URL.Path == "/v1/messages"
		if prompt != "" && (f.leak.logPrompt && !responses && !messages || f.leak.logInstructions && responses || f.leak.logMetadata && messages) {
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
	if f.leak.untracedProbes && probeRoute(r.URL.Path) || f.leak.lostSpanPath != "" && r.URL.Path == f.leak.lostSpanPath {
		return
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
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		return f.messages(w, body)
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

// messages answers a Messages request for mock-echo: its metadata.user_id is what its leaky
// access line could carry.
func (f *fakeTarget) messages(w http.ResponseWriter, body []byte) (int, string, string) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Metadata struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.writeError(w, 400, "invalid_json", "We could not parse the JSON body of your request.")
		return 400, "", ""
	}
	logged := req.Metadata.UserID
	if req.Model != "mock-echo" {
		f.writeError(w, 404, "model_not_found", "The model does not exist.")
		return 404, req.Model, logged
	}
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		return 200, req.Model, logged
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"type":"message","content":[]}`)
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
