package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"mockgateway/internal/dialect/anthropic"
)

// anthropicEventStream checks a Messages stream: `event: <type>` then `data: <json>` frames,
// each valid against the event schema with the event line's type, from message_start to
// message_stop or an error event; no sequence numbers, no [DONE].
func (d *apiDoc) anthropicEventStream(what, frameSchema string, b []byte) {
	d.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 4<<20)
	var name, last, first string
	blank := true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name != "" {
				d.t.Errorf("%s: an event line without its data line", what)
				return
			}
			blank = true
		case strings.HasPrefix(line, "event: "):
			if !blank || name != "" || last == "error" || last == "message_stop" {
				d.t.Errorf("%s: an event line not after a blank line, or after the last event: %q", what, line)
				return
			}
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if name == "" {
				d.t.Errorf("%s: a data line without its event line: %q", what, line)
				return
			}
			d.validate(what+" event "+name, frameSchema, []byte(data))
			var head struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(data), &head); err != nil || head.Type != name {
				d.t.Errorf("%s: event %s has type %q", what, name, head.Type)
			}
			if first == "" {
				first = name
			}
			if name == "error" {
				d.errors++
			}
			d.events++
			d.responses["event: "+name] = true
			last, name, blank = name, "", false
		default:
			d.t.Errorf("%s: not a line of a Messages stream: %q", what, line)
			return
		}
	}
	if first != "message_start" || !blank || !slices.Contains([]string{"message_stop", "error"}, last) {
		d.t.Errorf("%s: the stream runs from %q to %q (and a blank line: %v), not message_start to message_stop or error", what, first, last, blank)
	}
}

// TestOpenAPIMessagesConform: Messages answers and errors, held to the document.
func TestOpenAPIMessagesConform(t *testing.T) {
	d := loadAPIDoc(t)
	conformMessages(t, d, newHarness(t))
	if d.events < 20 || d.documents < 8 {
		t.Fatalf("too little held to the document: %d events, %d documents", d.events, d.documents)
	}
	if !d.responses["/components/responses/AnthropicError"] || !d.responses["event: error"] {
		t.Fatalf("the errors were not held to the document: %v", d.responses)
	}
}

// conformMessages sends Messages requests — JSON, streamed, tool calls, a stop sequence, a
// stream fault, count_tokens, the models in Anthropic's shape, thinking — and its errors, and holds each
// answer to the document with its headers (TestOpenAPIResponsesConform runs it too).
func conformMessages(t *testing.T, d *apiDoc, h *harness) {
	t.Helper()
	text := `{"model":"mock-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]`
	tools := `{"model":"mock-tools","max_tokens":64,"messages":[{"role":"user","content":"weather?"}],"tools":[` + anthropicWeatherTool + `]`
	thinkingTools := `{"model":"mock-reasoning","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"weather?"}],"tools":[` + anthropicWeatherTool + `]`
	cases := []struct {
		name, method, path, body string
		header                   []string
	}{
		{"json", "POST", messagesPath, text + `}`, nil},
		{"stream", "POST", messagesPath + "?beta=true", text + `,"stream":true}`, nil},
		{"tools", "POST", messagesPath, tools + `}`, nil},
		{"tools stream", "POST", messagesPath, tools + `,"stream":true}`, nil},
		{"stop sequence", "POST", messagesPath, `{"model":"mock-echo","max_tokens":64,"stop_sequences":["lo"],"messages":[{"role":"user","content":"hello"}]}`, nil},
		{"stream fault", "POST", messagesPath, text + `,"stream":true}`, []string{"X-Mock-Fault", "stream_error;after=3"}},
		{"count_tokens", "POST", messagesPath + "/count_tokens", `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`, nil},
		{"count_tokens refused", "POST", messagesPath + "/count_tokens", text + `}`, nil},
		{"models", "GET", "/v1/models", "", nil},
		{"model", "GET", "/v1/models/mock-chat", "", nil},
		{"unknown field", "POST", messagesPath, text + `,"stop":["x"]}`, nil},
		{"no version", "POST", messagesPath, text + `}`, []string{"Anthropic-Version", ""}},
		{"unknown model", "POST", messagesPath, `{"model":"nope","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, nil},
		{"overloaded", "POST", messagesPath, text + `}`, []string{"X-Mock-Fault", "unavailable"}},
		{"rate limited", "POST", messagesPath, text + `}`, []string{"X-Mock-Fault", "rate_limit"}},
		{"server error", "POST", messagesPath, text + `}`, []string{"X-Mock-Fault", "server_error"}},
		{"timeout", "POST", messagesPath, text + `}`, []string{"X-Mock-Fault", "timeout;for=1ms"}},
		{"media type", "POST", messagesPath, text + `}`, []string{"Content-Type", "text/plain"}},
		{"wrong method", "GET", messagesPath, "", nil},
		{"thinking", "POST", messagesPath, thinkingTools + `}`, nil},
		{"thinking stream", "POST", messagesPath, thinkingTools + `,"stream":true}`, nil},
		{"thinking omitted stream", "POST", messagesPath, `{"model":"mock-reasoning","max_tokens":2048,"stream":true,"thinking":{"type":"adaptive","display":"omitted"},"messages":[{"role":"user","content":"hi"}]}`, nil},
		{"redacted thinking", "POST", messagesPath, `{"model":"mock-reasoning","max_tokens":2048,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"` + anthropic.RedactedTrigger + `"}]}`, nil},
		{"thinking refused", "POST", messagesPath, `{"model":"mock-reasoning","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`, nil},
	}
	for _, c := range cases {
		rr := h.do(c.method, c.path, c.body, append(append([]string{}, anthropicHeaders...), c.header...)...)
		if rr.Code == http.StatusMethodNotAllowed { // the document's 405 is OpenAI's; an Anthropic request's is Anthropic's
			d.conformTo("messages "+c.name, "/components/responses/AnthropicError", rr)
			continue
		}
		d.conform("messages "+c.name, c.method, c.path, rr)
	}
}

// TestOpenAPIMessagesJournal: the journal entries of Messages calls, JSON, streamed and counted,
// validate against the document's JournalEntry (their shape's fields are Anthropic's members).
func TestOpenAPIMessagesJournal(t *testing.T) {
	d := loadAPIDoc(t)
	h := newHarness(t, journaled)
	h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":8,"system":"s","stop_sequences":["x"],"messages":[{"role":"user","content":"hi"}]}`)
	h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	h.anthropic(messagesPath+"/count_tokens", `{"model":"mock-chat","system":"s","messages":[{"role":"user","content":"hi"}]}`)
	rr := h.do("GET", "/_mock/journal", "")
	d.conform("journal of Messages calls", "GET", "/_mock/journal", rr)
	if n := strings.Count(rr.Body.String(), `"route":"/v1/messages`); n != 3 {
		t.Fatalf("%d Messages entries: %s", n, rr.Body)
	}
	if !strings.Contains(rr.Body.String(), `"stop_sequences"`) {
		t.Fatalf("no Anthropic field in the shapes: %s", rr.Body)
	}
}
