package chatclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
)

// ChatPath is the chat completions route.
const ChatPath = "/v1/chat/completions"

// Request is one request to the service, as the tools build it: a fixed body and a few headers.
type Request struct {
	Method      string // "" is POST
	URL         string
	Body        []byte // nil: no body
	ContentType string // "" is application/json when there is a body
	Header      map[string]string
}

// Send sends r with client; the caller closes the answer's body.
func (r Request) Send(ctx context.Context, client *http.Client) (*http.Response, error) {
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		return nil, err
	}
	if r.Body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	return client.Do(req)
}

// Do sends r and reads the answer, at most limit bytes of it. The response is returned with
// whatever was read when reading fails (a connection cut mid-body).
func (r Request) Do(ctx context.Context, client *http.Client, limit int64) (*http.Response, []byte, error) {
	resp, err := r.Send(ctx, client)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp, b, err
}

// IsStream is whether an answer is a server-sent-event stream.
func IsStream(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream")
}
