package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// gatedBody gives its bytes only once the test opens the gate, then ends with err.
type gatedBody struct {
	gate    chan struct{}
	reading chan struct{} // closed at the first Read
	r       io.Reader
	err     error
}

func (b *gatedBody) Read(p []byte) (int, error) {
	select {
	case <-b.reading:
	default:
		close(b.reading)
	}
	<-b.gate
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *gatedBody) Close() error { return nil }

// TestSlotTakenOnceTheBodyIsRead: while a body is still arriving the request holds no
// concurrency slot; the handler runs with one, and finds the body read.
func TestSlotTakenOnceTheBodyIsRead(t *testing.T) {
	limit := newConcurrencyLimit(1)
	var inHandler int
	var body string
	g := &v1Guard{drain: NewDrain(), limit: limit, next: &takesBody{maxBody: 1 << 10, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inHandler = len(limit.slots)
		if err := readBody(w, r, 1<<10); err != nil {
			t.Errorf("readBody in the handler: %v", err)
		}
		buf := takeBody(r)
		body = buf.String()
		bufferPool.Put(buf)
	})}}
	b := &gatedBody{gate: make(chan struct{}), reading: make(chan struct{}), r: strings.NewReader(`{"model":"m"}`)}
	req := httptest.NewRequest("POST", chatPath, b)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-b.reading
	if n := len(limit.slots); n != 0 {
		t.Errorf("%d slots held while the body is still arriving", n)
	}
	close(b.gate)
	<-done
	if inHandler != 1 || body != `{"model":"m"}` {
		t.Errorf("handler: %d slots held, body %q", inHandler, body)
	}
	if n := len(limit.slots); n != 0 {
		t.Errorf("%d slots held after the request", n)
	}
}

// TestBodyReadErrors: a body cut off by the read deadline is 408 request_timeout, told apart
// from one over the limit (413) and one that broke off (400).
func TestBodyReadErrors(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		err    error
		status int
		code   string
	}{
		{"read deadline", `{"model":`, os.ErrDeadlineExceeded, 408, "request_timeout"},
		{"over the limit", strings.Repeat("x", 2<<10), nil, 413, "request_too_large"},
		{"broken off", `{"model":`, io.ErrUnexpectedEOF, 400, "invalid_json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limit := newConcurrencyLimit(1)
			reached := false
			g := &v1Guard{drain: NewDrain(), limit: limit, next: &takesBody{maxBody: 1 << 10, next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })}}
			gate := make(chan struct{})
			close(gate)
			req := httptest.NewRequest("POST", chatPath, &gatedBody{gate: gate, reading: make(chan struct{}), r: strings.NewReader(c.body), err: c.err})
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = -1 // as if chunked: the size is learned by reading
			rr := httptest.NewRecorder()
			g.ServeHTTP(rr, req)
			if e := decodeError(t, rr.Body.Bytes()); rr.Code != c.status || e.Code != c.code || reached {
				t.Errorf("%d %s (handler reached: %v), want %d %s", rr.Code, e.Code, reached, c.status, c.code)
			}
		})
	}
}
