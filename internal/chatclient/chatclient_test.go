package chatclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func frames(lines ...string) io.Reader {
	return strings.NewReader(strings.Join(lines, "\n\n") + "\n\n")
}

func TestRead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		in        io.Reader
		stopAfter int
		check     func(Stream) bool
		wantErr   bool
	}{
		{"complete with usage", frames(`data: {"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null}`,
			`: keep-alive`,
			`data: {"choices":[{"index":1,"delta":{},"finish_reason":"stop"}],"usage":null}`,
			`data: {"choices":[],"usage":{"total_tokens":2}}`, `data: [DONE]`), 0,
			func(s Stream) bool {
				return s.Done && s.Usage && s.Chunks == 3 && len(s.Choices) == 2 && s.Finish == "stop" && s.Ended == nil
			}, false},
		{"error frame", frames(`data: {"choices":[{"index":0,"delta":{"content":"a"}}]}`,
			`data: {"error":{"code":"simulated_stream_error"}}`, `data: [DONE]`), 0,
			func(s Stream) bool {
				return s.Done && s.ErrorCode == "simulated_stream_error" && len(s.ErrorFrames) == 1 && s.Chunks == 1
			}, false},
		{"cut", strings.NewReader("data: {\"choices\":[]}\n\n"), 0,
			func(s Stream) bool { return !s.Done && s.Chunks == 1 }, false},
		{"cut mid-event", strings.NewReader("data: {\"choices\":[]}\n\ndata: {\"cho"), 0,
			func(s Stream) bool { return !s.Done && s.Chunks == 1 && errors.Is(s.Ended, io.ErrUnexpectedEOF) }, false},
		{"tool calls", frames(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}`, `data: [DONE]`), 0,
			func(s Stream) bool { return s.ToolCalls }, false},
		{"stop early", frames(`data: {"choices":[]}`, `data: {"choices":[]}`, `data: {"choices":[]}`), 2,
			func(s Stream) bool { return s.Chunks == 2 && !s.Done }, false},
		{"not JSON", frames(`data: {oops`), 0, nil, true},
		{"frame after DONE", frames(`data: [DONE]`, `data: {"choices":[]}`), 0, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Read(tc.in, tc.stopAfter)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.check != nil && !tc.check(s) {
				t.Errorf("result %+v", s)
			}
		})
	}
}

// The shape cmd/loadtest compares between mockgateway and the baseline.
func TestReadCountsTheShape(t *testing.T) {
	t.Parallel()
	body := "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"echo:\"}}]}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\" hi\"}}]}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	s, err := Read(strings.NewReader(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Events != 5 || s.Completion != 4 || s.ContentDeltas != 2 || !s.Done || len(s.ErrorFrames) != 0 || s.Inexact != 0 {
		t.Errorf("shape: %+v", s)
	}
	s, err = Read(strings.NewReader("event: x\ndata: {}\n\n"), 0)
	if err != nil || s.Inexact != 1 {
		t.Errorf("a frame with an event line: %+v %v, want it counted as inexact", s, err)
	}
	s, _ = Read(strings.NewReader("data:{}\n\n"), 0)
	if s.Inexact != 1 {
		t.Errorf("data: without its space: %+v, want inexact", s)
	}
	s, _ = Read(strings.NewReader("data: {\"a\":\ndata: 1}\r\n\r\n"), 0)
	if s.Chunks != 1 || s.Inexact != 1 {
		t.Errorf("two data lines make one event: %+v", s)
	}
}

func TestNextAfterFirstEvent(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader(": hello\n\ndata: {\"x\":1}\n\ndata: [DONE]\n\n"))
	ev, err := rd.Next()
	if err != nil || string(ev.Data) != `{"x":1}` || !ev.Exact {
		t.Fatalf("first event %+v %v", ev, err)
	}
	if ev, err = rd.Next(); err != nil || !ev.Done() {
		t.Fatalf("second event %+v %v", ev, err)
	}
	if _, err = rd.Next(); err != io.EOF {
		t.Fatalf("end: %v, want io.EOF", err)
	}
}

func TestErrorCode(t *testing.T) {
	t.Parallel()
	if c, ok := ErrorCode([]byte(`{"error":{"code":"model_not_found","message":"m"}}`)); !ok || c != "model_not_found" {
		t.Errorf("code %q %v", c, ok)
	}
	for _, b := range []string{`{"error":{"code":7}}`, `{"choices":[]}`, `oops`, `{"error":null}`} {
		if c, ok := ErrorCode([]byte(b)); ok {
			t.Errorf("%s: code %q", b, c)
		}
	}
}

func TestRequestDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", r.Method+"|"+r.Header.Get("Content-Type")+"|"+r.Header.Get("X-Mock-Latency")+"|"+string(b))
	}))
	defer srv.Close()
	resp, _, err := Request{URL: srv.URL, Body: []byte(`{}`), Header: map[string]string{"X-Mock-Latency": "fast"}}.Do(context.Background(), srv.Client(), 1<<20)
	if err != nil || resp.Header.Get("X-Seen") != "POST|application/json|fast|{}" {
		t.Errorf("POST: %v %q", err, resp.Header.Get("X-Seen"))
	}
	resp, _, err = Request{Method: http.MethodGet, URL: srv.URL}.Do(context.Background(), srv.Client(), 1<<20)
	if err != nil || resp.Header.Get("X-Seen") != "GET|||" {
		t.Errorf("GET: %v %q", err, resp.Header.Get("X-Seen"))
	}
}

// An object with an error is an error frame even when its other members are not a chunk's: the
// audit searches every error frame.
func TestAddKeepsOddErrorFrames(t *testing.T) {
	t.Parallel()
	var s Stream
	if err := s.Add(Event{Data: []byte(`{"error":"boom","choices":7}`), Exact: true}); err != nil || len(s.ErrorFrames) != 1 || s.ErrorCode != "" {
		t.Errorf("%+v %v", s, err)
	}
	if err := s.Add(Event{Data: []byte(`{"choices":7}`)}); err == nil {
		t.Error("a frame that is not a chunk was accepted")
	}
}
