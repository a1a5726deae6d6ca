package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// chatAttempts counts the access-log lines of chat requests: one per attempt the client made.
// Lines are written after the response, by the log's own goroutine, so it waits until the count
// has been steady for a moment.
func chatAttempts(t *testing.T, in *instance) int {
	t.Helper()
	count := func() int {
		n := 0
		for _, rec := range in.Logs.Records(t) {
			if rec["msg"] == "request" && rec["route"] == chatRoute {
				n++
			}
		}
		return n
	}
	last, steady := -1, 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && steady < 5; time.Sleep(20 * time.Millisecond) {
		if n := count(); n == last {
			steady++
		} else {
			last, steady = n, 0
		}
	}
	return last
}

// TestSDKRetriesAgainstSimulatedFaults: the official Go SDK with its default retries (2) against
// "fail the first K attempts". The mock is stateless: it reads the SDK's own
// x-stainless-retry-count, so attempts=2 succeeds on the third attempt and attempts=5 exhausts
// the SDK's retries with its rate-limit error.
func TestSDKRetriesAgainstSimulatedFaults(t *testing.T) {
	cases := []struct {
		fault    string
		ok       bool
		status   int
		typ      string
		code     string
		attempts int
	}{
		{"rate_limit;attempts=2;retry_after=10ms", true, 0, "", "", 3},
		{"unavailable;attempts=2;retry_after=10ms", true, 0, "", "", 3},
		{"rate_limit;attempts=5;retry_after=10ms", false, 429, "rate_limit_error", "simulated_rate_limit", 3},
		{"unavailable;attempts=5;retry_after=10ms", false, 503, "server_error", "simulated_unavailable", 3},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			in := startService(t, nil)
			// The SDK's defaults: two retries.
			client, _ := sdkClient(t, in, option.WithMaxRetries(2), option.WithHeader("X-Mock-Fault", c.fault))
			resp, err := client.Chat.Completions.New(context.Background(), userChat("mock-echo", "retry me"))
			if c.ok {
				if err != nil {
					t.Fatalf("the SDK's retries should end in a success: %v", err)
				}
				if resp.Choices[0].Message.Content != "echo: retry me" {
					t.Errorf("content %q", resp.Choices[0].Message.Content)
				}
			} else {
				checkAPIError(t, err, c.status, c.typ, c.code, "")
			}
			if got := chatAttempts(t, in); got != c.attempts {
				t.Errorf("the service saw %d attempts, want %d", got, c.attempts)
			}
		})
	}
}

// TestSDKMidStreamFaults: a streaming SDK client against a stream that fails after some chunks
// (an error frame) and one that is cut (no [DONE], the connection drops).
func TestSDKMidStreamFaults(t *testing.T) {
	in := startService(t, nil)

	client, _ := sdkClient(t, in, option.WithHeader("X-Mock-Fault", "stream_error;after=3"))
	stream := client.Chat.Completions.NewStreaming(context.Background(), userChat("mock-chat", "hello"))
	chunks := 0
	for stream.Next() {
		chunks++
	}
	var se *ssestream.StreamError
	if !errors.As(stream.Err(), &se) || !strings.Contains(se.Error(), "simulated_stream_error") {
		t.Errorf("stream_error: err = %v after %d chunks", stream.Err(), chunks)
	}
	if chunks != 3 {
		t.Errorf("stream_error after=3 delivered %d chunks", chunks)
	}
	stream.Close()

	client, _ = sdkClient(t, in, option.WithHeader("X-Mock-Fault", "stream_cut;after=4"))
	stream = client.Chat.Completions.NewStreaming(context.Background(), userChat("mock-chat", "hello"))
	var acc openai.ChatCompletionAccumulator
	chunks = 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if !errors.Is(stream.Err(), io.ErrUnexpectedEOF) {
		t.Errorf("stream_cut: err = %v after %d chunks, want an unexpected EOF", stream.Err(), chunks)
	}
	if chunks != 4 || len(acc.Choices) != 1 || acc.Choices[0].FinishReason != "" {
		t.Errorf("stream_cut: %d chunks, choices %+v (a cut stream has no finish)", chunks, acc.Choices)
	}
	stream.Close()

	outcomes := map[string]int{}
	chatAttempts(t, in) // waits for both access lines
	for _, rec := range in.Logs.Records(t) {
		if rec["msg"] == "request" && rec["route"] == chatRoute {
			outcomes[rec["fault"].(string)+":"+rec["stream_outcome"].(string)]++
		}
	}
	if outcomes["stream_error:aborted"] != 1 || outcomes["stream_cut:aborted"] != 1 {
		t.Errorf("outcomes: %v", outcomes)
	}
}

// TestSDKGatewayFallback: the ready-made mock-gateway model reports a retry and fallback
// decision in headers, and the SDK simply gets mock-chat's answer.
func TestSDKGatewayFallback(t *testing.T) {
	in := startService(t, nil)
	client, _ := sdkClient(t, in)
	var raw *http.Response
	resp, err := client.Chat.Completions.New(context.Background(), userChat("mock-gateway", "hi"), option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "mock-chat" || raw.Header.Get("X-Mock-Gateway-Attempts") != "3" || raw.Header.Get("X-Mock-Gateway-Fallback-From") != "mock-gateway" {
		t.Errorf("model %s, headers %v", resp.Model, raw.Header)
	}
}
