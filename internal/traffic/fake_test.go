package traffic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeService is a small stand-in for mockgateway that speaks just enough of the contract for
// the generator to take every path, and records what the generator sent. The real service is
// exercised by the end-to-end test in deploy/test.
type fakeService struct {
	models []string
	block  chan struct{} // when not nil, every /v1 request waits on it (concurrency tests)

	mu          sync.Mutex
	requestIDs  []string
	faults      map[string]int
	latencies   map[string]int
	contents    []string // every message content sent
	toolResults int
	choicesN    int
	usage       int
	badJSON     int
	methods     map[string]int // "GET /v1/chat/completions"
	disconnects int
	inFlight    int
	maxInFlight int
	userAgents  map[string]int
}

func newFakeService(models ...string) *fakeService {
	if len(models) == 0 {
		models = []string{"mock-echo", "mock-chat", "mock-tools", "mock-slow", "mock-flaky", "mock-gateway"}
	}
	return &fakeService{models: models, faults: map[string]int{}, latencies: map[string]int{}, methods: map[string]int{}, userAgents: map[string]int{}}
}

func (f *fakeService) start(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	if f.block != nil {
		t.Cleanup(func() { close(f.block) }) // runs before srv.Close: cleanups run last-in first-out
	}
	return srv
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":%q}}`, code)
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requestIDs = append(f.requestIDs, r.Header.Get("X-Request-Id"))
	f.methods[r.Method+" "+r.URL.Path]++
	f.userAgents[r.Header.Get("User-Agent")]++
	if v := r.Header.Get("X-Mock-Fault"); v != "" {
		f.faults[strings.SplitN(v, ";", 2)[0]]++
	}
	if v := r.Header.Get("X-Mock-Latency"); v != "" {
		f.latencies[v]++
	}
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()

	// Read the body first: only then does net/http notice a client that hangs up.
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if f.block != nil && strings.HasPrefix(r.URL.Path, "/v1/chat") {
		select {
		case <-f.block:
		case <-r.Context().Done():
			return
		}
	}

	switch {
	case r.URL.Path == "/health" && r.Method == http.MethodGet:
		io.WriteString(w, `{"status":"ok"}`)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		var data []string
		for _, m := range f.models {
			data = append(data, fmt.Sprintf(`{"id":%q,"object":"model"}`, m))
		}
		io.WriteString(w, `{"object":"list","data":[`+strings.Join(data, ",")+`]}`)
	case strings.HasPrefix(r.URL.Path, "/v1/models/") && r.Method == http.MethodGet:
		io.WriteString(w, `{"id":"mock-chat","object":"model"}`)
	case r.URL.Path == chatPath && r.Method == http.MethodPost:
		f.chat(w, r)
	case r.URL.Path == chatPath:
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed")
	case r.URL.Path == "/v1/embeddings":
		writeError(w, http.StatusNotFound, "unsupported_surface")
	default:
		writeError(w, http.StatusNotFound, "not_found")
	}
}

var knownFields = map[string]bool{"model": true, "messages": true, "max_tokens": true, "seed": true, "stream": true,
	"stream_options": true, "tools": true, "n": true}

func (f *fakeService) chat(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.mu.Lock()
		f.badJSON++
		f.mu.Unlock()
		writeError(w, http.StatusBadRequest, "invalid_json")
		return
	}
	for k := range body {
		if !knownFields[k] {
			writeError(w, http.StatusBadRequest, "unknown_parameter")
			return
		}
	}
	model, _ := body["model"].(string)
	if model == "gpt-4o" {
		writeError(w, http.StatusBadRequest, "model_not_executable")
		return
	}
	known := false
	for _, m := range f.models {
		known = known || m == model
	}
	if !known {
		writeError(w, http.StatusNotFound, "model_not_found")
		return
	}
	var toolMsg bool
	msgs, _ := body["messages"].([]any)
	f.mu.Lock()
	for _, m := range msgs {
		m := m.(map[string]any)
		if c, ok := m["content"].(string); ok {
			f.contents = append(f.contents, c)
		}
		if m["role"] == "tool" {
			toolMsg = true
			f.toolResults++
		}
	}
	f.mu.Unlock()

	attempt := 1
	if v, err := strconv.Atoi(r.Header.Get("X-Mock-Attempt")); err == nil {
		attempt = v
	} else if v, err := strconv.Atoi(r.Header.Get("X-Stainless-Retry-Count")); err == nil {
		attempt = v + 1
	}
	fault := strings.SplitN(r.Header.Get("X-Mock-Fault"), ";", 2)[0]
	switch {
	case fault == "rate_limit" && attempt <= 2:
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Retry-After-Ms", "10")
		writeError(w, http.StatusTooManyRequests, "simulated_rate_limit")
		return
	case fault == "server_error":
		writeError(w, http.StatusInternalServerError, "simulated_server_error")
		return
	case fault == "unavailable", model == "mock-flaky" && attempt == 1:
		w.Header().Set("Retry-After", "0")
		writeError(w, http.StatusServiceUnavailable, "simulated_unavailable")
		return
	}

	n := 1
	if v, ok := body["n"].(float64); ok {
		n = int(v)
		if n > 1 {
			f.mu.Lock()
			f.choicesN++
			f.mu.Unlock()
		}
	}
	_, hasTools := body["tools"]
	wantTools := model == "mock-tools" && hasTools && !toolMsg

	if stream, _ := body["stream"].(bool); stream {
		usage := false
		if so, ok := body["stream_options"].(map[string]any); ok {
			usage, _ = so["include_usage"].(bool)
		}
		if usage {
			f.mu.Lock()
			f.usage++
			f.mu.Unlock()
		}
		f.stream(w, r, n, wantTools, usage, fault, r.Header.Get("X-Mock-Latency") != "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	var choices []string
	for i := range n {
		msg := `{"role":"assistant","content":"Lorem ipsum."}`
		finish := "stop"
		if wantTools {
			msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lorem_lookup","arguments":"{\"term\":\"lorem\"}"}}]}`
			finish = "tool_calls"
		}
		if model == "mock-echo" {
			finish = "length"
		}
		choices = append(choices, fmt.Sprintf(`{"index":%d,"message":%s,"finish_reason":%q}`, i, msg, finish))
	}
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[%s]}`, model, strings.Join(choices, ","))
}

func (f *fakeService) stream(w http.ResponseWriter, r *http.Request, n int, tools, usage bool, fault string, slow bool) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	fl := w.(http.Flusher)
	frame := func(s string) bool {
		if slow {
			select {
			case <-time.After(5 * time.Millisecond):
			case <-r.Context().Done():
				f.mu.Lock()
				f.disconnects++
				f.mu.Unlock()
				return false
			}
		}
		fmt.Fprintf(w, "data: %s\n\n", s)
		fl.Flush()
		return true
	}
	u := ""
	if usage {
		u = `,"usage":null`
	}
	for i := range 8 {
		if fault == "stream_error" && i == 3 {
			frame(`{"error":{"message":"m","type":"server_error","param":null,"code":"simulated_stream_error"}}`)
			frame("[DONE]")
			return
		}
		if fault == "stream_cut" && i == 4 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		for c := range n {
			delta := `{"content":"lorem "}`
			if tools {
				delta = `{"tool_calls":[{"index":0,"function":{"arguments":"x"}}]}`
			}
			if !frame(fmt.Sprintf(`{"object":"chat.completion.chunk","choices":[{"index":%d,"delta":%s}]%s}`, c, delta, u)) {
				return
			}
		}
	}
	frame(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]` + u + `}`)
	if usage {
		frame(`{"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":8,"total_tokens":9}}`)
	}
	frame("[DONE]")
}
