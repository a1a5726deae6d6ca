package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// The sizes mockgateway answered with for the load test's request when the baseline was
// written (measured with curl against the built binary); cmd/loadtest compares them again at
// every run and reports a mismatch.
const (
	wantJSONBytes   = 576
	wantStreamBytes = 5067
)

func TestJSONBodyShape(t *testing.T) {
	if len(JSONBody) != wantJSONBytes {
		t.Errorf("JSON body is %d bytes, want %d (mockgateway's answer)", len(JSONBody), wantJSONBytes)
	}
	var c struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(JSONBody, &c); err != nil {
		t.Fatalf("JSON body is not JSON: %v", err)
	}
	if c.Object != "chat.completion" || len(c.ID) != len("chatcmpl-")+24 || c.Model != "mock-echo" || len(c.Choices) != 1 {
		t.Fatalf("unexpected shape: %+v", c)
	}
	ch := c.Choices[0]
	if ch.Message.Role != "assistant" || ch.FinishReason != "stop" || len(strings.Fields(ch.Message.Content)) != 16 || c.Usage.CompletionTokens != 16 {
		t.Errorf("unexpected choice: %+v usage %+v", ch, c.Usage)
	}
}

func TestStreamShape(t *testing.T) {
	total := 0
	for _, f := range StreamFrames {
		total += len(f)
	}
	if total != wantStreamBytes {
		t.Errorf("stream is %d bytes, want %d (mockgateway's stream)", total, wantStreamBytes)
	}
	chunks, contents := checkFrames(t, StreamFrames)
	if chunks != 18 || contents != 16 {
		t.Errorf("got %d chunks with %d content tokens, want 18 and 16", chunks, contents)
	}
}

// checkFrames validates SSE frames: each "data: <json>\n\n" a chat.completion.chunk, the last
// "data: [DONE]". It returns the number of chunks and of non-empty content deltas.
func checkFrames(t *testing.T, frames [][]byte) (chunks, contents int) {
	t.Helper()
	if len(frames) == 0 || string(frames[len(frames)-1]) != "data: [DONE]\n\n" {
		t.Fatalf("stream does not end with [DONE]")
	}
	for i, f := range frames[:len(frames)-1] {
		s := string(f)
		if !strings.HasPrefix(s, "data: ") || !strings.HasSuffix(s, "\n\n") {
			t.Fatalf("frame %d is not an SSE data frame: %q", i, s)
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Role    string  `json:"role"`
					Content *string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(s, "data: "))), &c); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			t.Fatalf("frame %d: unexpected chunk %q", i, s)
		}
		d := c.Choices[0]
		switch {
		case i == 0 && d.Delta.Role != "assistant":
			t.Errorf("first chunk has no role")
		case i == len(frames)-2 && (d.FinishReason == nil || *d.FinishReason != "stop"):
			t.Errorf("last chunk has no finish_reason")
		}
		if d.Delta.Content != nil && *d.Delta.Content != "" {
			contents++
		}
		chunks++
	}
	return chunks, contents
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"mock-echo","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(body) != string(JSONBody) {
		t.Fatalf("JSON: %d %q", resp.StatusCode, body)
	}

	resp, err = http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"mock-echo","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream content type %q", resp.Header.Get("Content-Type"))
	}
	var frames [][]byte
	br := bufio.NewReader(resp.Body)
	var cur []byte
	for {
		line, err := br.ReadBytes('\n')
		cur = append(cur, line...)
		if string(line) == "\n" {
			frames = append(frames, cur)
			cur = nil
		}
		if err != nil {
			break
		}
	}
	chunks, contents := checkFrames(t, frames)
	if chunks != 18 || contents != 16 {
		t.Errorf("served %d chunks with %d content tokens, want 18 and 16", chunks, contents)
	}

	resp, err = http.Get(srv.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /other: %d, want 404", resp.StatusCode)
	}
}

// TestHeldStream: with x-mock-latency between=…, the stream sends its first frame at once and
// waits before the next, as the memory run needs; the client leaving ends the wait.
func TestHeldStream(t *testing.T) {
	for v, want := range map[string]time.Duration{"ttfc=0s;between=30s": 30 * time.Second, "between=2ms": 2 * time.Millisecond, "ttfc=1s": 0, "": 0} {
		if got := holdBetween(v); got != want {
			t.Errorf("holdBetween(%q) = %v, want %v", v, got, want)
		}
	}
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	req.Header.Set("X-Mock-Latency", "ttfc=0s;between=1h")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != string(bytes.TrimSuffix(StreamFrames[0], []byte("\n"))) {
		t.Fatalf("first frame %q, %v", first, err)
	}
	got := make(chan error, 1)
	go func() { _, _ = br.ReadString('\n'); _, err := br.ReadString('\n'); got <- err }()
	select {
	case err := <-got:
		t.Fatalf("a second frame (or the end) came without the wait: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	resp.Body.Close()
}

// BenchmarkHeldStreams is net/http's own cost of an open stream: 500 streams held by this bare
// handler (between=1h), measured by testutil.HoldStreams as internal/server's BenchmarkHeldStreams
// measures mockgateway's; docs/performance.md compares the two. Run: go test -run '^$' -bench
// HeldStreams ./cmd/baseline; with -memprofilerate 1 -v it also logs the held heap by
// allocating function.
func BenchmarkHeldStreams(b *testing.B) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	body := `{"stream":true}`
	req := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Mock-Latency: ttfc=0s;between=1h\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	testutil.HoldStreams(b, srv.Listener.Addr().String(), []byte(req), 500)
}
