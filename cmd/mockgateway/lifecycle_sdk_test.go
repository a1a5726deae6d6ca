package main

// Part of the end-to-end tests with the official Go SDK; sdk_test.go explains the setup.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"go.uber.org/goleak"
)

// slowCatalog is a catalog with one mock whose stream takes about 2.5 s (50 tokens, 50 ms
// apart), to hold streams and requests open.
const slowCatalog = `models:
  - id: mock-slow
    kind: mock
    behavior: chat
    default_tokens: 50
    capabilities: {streaming: true, tools: false}
    latency: {between_chunks: 50ms}
`

// writeSlowCatalog writes slowCatalog to a temporary file and returns its path.
func writeSlowCatalog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(path, []byte(slowCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitForChatLog waits for the access log line of the chat request.
func waitForChatLog(t *testing.T, in *instance) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, rec := range in.Logs.Records(t) {
			if rec["msg"] == "request" && rec["route"] == chatRoute {
				return rec
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no access log line for %s in:\n%s", chatRoute, strings.Join(in.Logs.Lines(), "\n"))
	return nil
}

func TestSDKServerBusy(t *testing.T) {
	t.Parallel()
	in := startService(t, nil, "--max-concurrent", "1", "--catalog", writeSlowCatalog(t))
	client, _ := sdkClient(t, in)
	ctx := context.Background()

	// A stream holds the only slot while it is open.
	stream := client.Chat.Completions.NewStreaming(ctx, userChat("mock-slow", "hold on"))
	if !stream.Next() {
		t.Fatalf("stream: %v", stream.Err())
	}

	_, err := client.Models.List(ctx)
	apiErr := checkAPIError(t, err, 429, "rate_limit_error", "server_busy", "")
	if apiErr.Response.Header.Get("Retry-After") == "" {
		t.Error("429 without retry-after")
	}
	_, err = client.Chat.Completions.New(ctx, userChat("mock-slow", "me too"))
	checkAPIError(t, err, 429, "rate_limit_error", "server_busy", "")

	// Closing the stream frees the slot.
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := client.Models.List(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot was not freed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inFlight reads mockgateway_http_requests_in_flight from /metrics.
func inFlight(t *testing.T, c *http.Client, in *instance) float64 {
	t.Helper()
	resp, err := c.Get(in.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "mockgateway_http_requests_in_flight "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatal("no mockgateway_http_requests_in_flight in /metrics")
	return 0
}

func TestSDKShutdown(t *testing.T) {
	t.Parallel()

	t.Run("open stream ends with shutting_down", func(t *testing.T) {
		t.Parallel()
		in := startService(t, nil, "--catalog", writeSlowCatalog(t), "--drain-timeout", "200ms")
		client, _ := sdkClient(t, in)
		stream := client.Chat.Completions.NewStreaming(context.Background(), userChat("mock-slow", "a long story"))
		defer stream.Close()
		for i := range 2 {
			if !stream.Next() {
				t.Fatalf("chunk %d: %v", i, stream.Err())
			}
		}

		stopped := make(chan error, 1)
		go func() { stopped <- in.Stop() }()
		chunks := 2
		for stream.Next() {
			chunks++
		}
		if chunks >= 50 {
			t.Errorf("the stream ran to its end (%d chunks)", chunks)
		}
		err := stream.Err()
		var streamErr *ssestream.StreamError
		if !errors.As(err, &streamErr) {
			t.Fatalf("stream error = %v (%T), want *ssestream.StreamError", err, err)
		}
		var frame struct {
			Error struct{ Message, Type, Code string }
		}
		if err := json.Unmarshal(streamErr.Event.Data, &frame); err != nil {
			t.Fatalf("error frame %q: %v", streamErr.Event.Data, err)
		}
		if frame.Error.Code != "shutting_down" || frame.Error.Type != "server_error" || frame.Error.Message == "" {
			t.Errorf("error frame = %s", streamErr.Event.Data)
		}
		if !strings.Contains(err.Error(), "shutting_down") {
			t.Errorf("the SDK's error message does not name shutting_down: %v", err)
		}

		select {
		case err := <-stopped:
			if err != nil {
				t.Errorf("Stop: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Stop did not return")
		}
		rec := waitForChatLog(t, in)
		if rec["stream_outcome"] != "aborted" || rec["error_code"] != "shutting_down" {
			t.Errorf("access log: %v", rec)
		}
	})

	t.Run("JSON request in flight completes", func(t *testing.T) {
		t.Parallel()
		in := startService(t, nil, "--catalog", writeSlowCatalog(t), "--drain-timeout", "200ms")
		client, tr := sdkClient(t, in)
		metrics := &http.Client{Transport: tr}
		idle := inFlight(t, metrics, in)

		params := userChat("mock-slow", "short answer please")
		params.MaxTokens = openai.Int(6) // 6 tokens 50 ms apart: about 300 ms, past the drain deadline
		type result struct {
			resp *openai.ChatCompletion
			raw  *http.Response
			err  error
		}
		done := make(chan result, 1)
		go func() {
			var r result
			r.resp, r.err = client.Chat.Completions.New(context.Background(), params, option.WithResponseInto(&r.raw))
			done <- r
		}()
		for deadline := time.Now().Add(5 * time.Second); inFlight(t, metrics, in) <= idle; {
			if time.Now().After(deadline) {
				t.Fatal("the chat request never arrived")
			}
			time.Sleep(5 * time.Millisecond)
		}

		if err := in.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("in-flight request: %v", r.err)
		}
		if r.raw.StatusCode != 200 || r.resp.Choices[0].FinishReason != "length" || r.resp.Usage.CompletionTokens != 6 {
			t.Errorf("in-flight request: status %d finish %q usage %+v", r.raw.StatusCode, r.resp.Choices[0].FinishReason, r.resp.Usage)
		}
	})
}

// TestSDKClientDisconnect is serial: goleak must not see other tests' goroutines.
func TestSDKClientDisconnect(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	in := startService(t, nil, "--catalog", writeSlowCatalog(t))
	client, tr := sdkClient(t, in)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := client.Chat.Completions.NewStreaming(ctx, userChat("mock-slow", "a long story"))
	for i := range 2 {
		if !stream.Next() {
			t.Fatalf("chunk %d: %v", i, stream.Err())
		}
	}
	cancel()
	for stream.Next() {
		// Chunks already buffered may still come; the cancellation surfaces after them.
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("stream error after cancel = %v, want context.Canceled", err)
	}
	stream.Close()

	rec := waitForChatLog(t, in)
	if rec["stream_outcome"] != "client_disconnected" {
		t.Errorf("stream_outcome = %v", rec["stream_outcome"])
	}
	if c, _ := rec["chunks"].(float64); c < 2 || c > 10 {
		t.Errorf("chunks = %v: generation did not stop soon after the client left", rec["chunks"])
	}

	tr.CloseIdleConnections()
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
}
