package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// endWatcher is a ResponseWriter that, at the write carrying a stream's terminal event, looks
// into the journal: net/http passes a write longer than its buffer straight to the socket, so a
// client may hold the whole answer — and read the journal — before the handler returns.
type endWatcher struct {
	*httptest.ResponseRecorder
	terminal []byte
	seen     func() bool
	heldThen *bool
}

func (w *endWatcher) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.terminal) {
		held := w.seen()
		w.heldThen = &held
	}
	return w.ResponseRecorder.Write(p)
}

func (w *endWatcher) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *endWatcher) Flush() { w.ResponseRecorder.Flush() }

// TestStreamEntryFiledBeforeItsEnd: a scoped stream's journal entry is filed before the frames
// that end it are written, so a client that acts on the terminal event (the Codex CLI acts on
// response.completed) and then reads the journal finds its call — even when the terminal event,
// which carries the whole answer, is longer than net/http's buffer.
func TestStreamEntryFiledBeforeItsEnd(t *testing.T) {
	h := newHarness(t, journaled)
	long := strings.Repeat("word ", 1000) // the terminal event carries it: longer than net/http's buffer
	for _, c := range []struct{ name, path, body, terminal string }{
		{"responses", "/v1/responses", `{"model":"mock-chat","stream":true,"input":"hi"}`, "response.completed"},
		{"chat", chatPath, `{"model":"mock-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`, "[DONE]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			scope := "end-" + c.name
			fx := `{"fixtures":[{"name":"long","match":{},"reply":{"content":"` + long + `"}}]}`
			if rr := h.do("POST", "/_mock/fixtures", fx, HeaderScope, scope); rr.Code != 200 {
				t.Fatalf("fixture: %d %s", rr.Code, rr.Body)
			}
			req := httptest.NewRequest("POST", c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(HeaderScope, scope)
			w := &endWatcher{ResponseRecorder: httptest.NewRecorder(), terminal: []byte(c.terminal), seen: func() bool {
				b, err := h.deps.State.AppendJournal(context.Background(), nil, scope, 10)
				return err == nil && bytes.Contains(b, []byte(`"route":"`+c.path+`"`))
			}}
			h.handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if w.heldThen == nil {
				t.Fatalf("no write carried %s", c.terminal)
			}
			if !*w.heldThen {
				t.Errorf("the journal did not hold the call when its terminal event was written")
			}
		})
	}
}
