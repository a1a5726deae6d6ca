package server

import (
	"encoding/json"
	"testing"
)

// TestJournalDialect: every entry names the dialect that answered its call — the route's, or on
// the model list the dialects share, the one the request's headers chose.
func TestJournalDialect(t *testing.T) {
	h := newHarness(t, journaled)
	msg := `"messages":[{"role":"user","content":"hi"}]`
	calls := []struct {
		method, path, body string
		header             []string
		want               string
	}{
		{"POST", "/v1/chat/completions", `{"model":"mock-chat",` + msg + `}`, nil, "OpenAI Chat Completions"},
		{"POST", "/v1/responses", `{"model":"mock-chat","input":"hi"}`, nil, "OpenAI Responses"},
		{"POST", messagesPath, `{"model":"mock-chat","max_tokens":8,` + msg + `}`, anthropicHeaders, "Anthropic Messages"},
		{"POST", geminiPath("v1beta", "mock-echo", "generateContent"), geminiBody(""), googleKeyHeader, "Google Gemini"},
		{"POST", geminiPath("v1", "mock-echo", "streamGenerateContent") + "?alt=sse", geminiBody(""), googleKeyHeader, "Google Gemini"},
		{"GET", "/v1/models", "", nil, "OpenAI Chat Completions"},
		{"GET", "/v1/models", "", anthropicHeaders, "Anthropic Messages"},
		{"GET", "/v1beta/models", "", googleKeyHeader, "Google Gemini"},
	}
	for _, c := range calls {
		if rr := h.do(c.method, c.path, c.body, c.header...); rr.Code != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, rr.Code, rr.Body)
		}
	}
	rr := h.do("GET", "/_mock/journal", "")
	var got struct {
		Data []struct{ Route, Dialect string }
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, rr.Body)
	}
	if len(got.Data) != len(calls) {
		t.Fatalf("%d entries, want %d: %s", len(got.Data), len(calls), rr.Body)
	}
	// The journal lists the newest first.
	for i, c := range calls {
		e := got.Data[len(calls)-1-i]
		if e.Dialect != c.want {
			t.Errorf("%s %s (%v): dialect %q, want %q", c.method, e.Route, c.header, e.Dialect, c.want)
		}
	}
}
