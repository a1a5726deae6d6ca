package server

import (
	"bufio"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"mockgateway/internal/catalog"
)

// slowCatalog has a mock whose stream takes a while, to hold streams open in tests.
func slowCatalog(t *testing.T, between time.Duration) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Parse([]byte(`models:
  - id: mock-slow
    kind: mock
    behavior: chat
    default_tokens: 40
    capabilities: {streaming: true, tools: false}
    latency: {between_chunks: ` + between.String() + `}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sseFrames reads a stream body into its data payloads, checking the frame grammar: only
// "data: …" lines, each followed by a blank line.
func sseFrames(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("frame not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line is not a data frame: %q", line)
		}
		out = append(out, data)
		expectBlank = true
	}
	return out
}

type chunkJSON struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chunkChoice   `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        json.RawMessage `json:"delta"`
	FinishReason *string         `json:"finish_reason"`
}

func TestStreamFrames(t *testing.T) {
	h := newHarness(t)
	for _, includeUsage := range []bool{false, true} {
		extra := `"stream":true,"n":2`
		if includeUsage {
			extra += `,"stream_options":{"include_usage":true}`
		}
		rr := h.do("POST", chatPath, chatBody("mock-chat", extra))
		if rr.Code != 200 || rr.Header().Get("Content-Type") != "text/event-stream; charset=utf-8" {
			t.Fatalf("stream: %d %q", rr.Code, rr.Header().Get("Content-Type"))
		}
		if rr.Header().Get("X-Request-Id") == "" || rr.Header().Get("Openai-Version") != "2020-10-01" || rr.Header().Get("Openai-Processing-Ms") == "" {
			t.Errorf("stream headers: %v", rr.Header())
		}
		frames := sseFrames(t, rr.Body.String())
		if frames[len(frames)-1] != "[DONE]" {
			t.Fatalf("last frame %q", frames[len(frames)-1])
		}
		var id string
		roleSeen := map[int]bool{}
		finished := map[int]bool{}
		deltas := 0
		var usage json.RawMessage
		for i, f := range frames[:len(frames)-1] {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(f), &raw); err != nil {
				t.Fatalf("frame %d not JSON: %q", i, f)
			}
			if _, ok := raw["error"]; ok {
				t.Fatalf("normal chunk has an error key: %s", f)
			}
			_, hasUsage := raw["usage"]
			if hasUsage != includeUsage {
				t.Fatalf("usage key present=%v with include_usage=%v: %s", hasUsage, includeUsage, f)
			}
			var c chunkJSON
			_ = json.Unmarshal([]byte(f), &c)
			if id == "" {
				id = c.ID
			}
			if c.ID != id || c.Object != "chat.completion.chunk" || c.Model != "mock-chat" || c.Created == 0 {
				t.Fatalf("chunk identity: %s", f)
			}
			if len(c.Choices) == 0 {
				if !includeUsage || i != len(frames)-2 {
					t.Fatalf("a chunk without choices that is not the last usage chunk: %s", f)
				}
				usage = c.Usage
				continue
			}
			if includeUsage && string(c.Usage) != "null" {
				t.Fatalf("usage must be null on normal chunks: %s", f)
			}
			if len(c.Choices) != 1 {
				t.Fatalf("a chunk carries one choice: %s", f)
			}
			ch := c.Choices[0]
			switch {
			case !roleSeen[ch.Index]:
				if string(ch.Delta) != `{"role":"assistant","content":""}` {
					t.Fatalf("first chunk of choice %d: %s", ch.Index, ch.Delta)
				}
				roleSeen[ch.Index] = true
			case ch.FinishReason != nil:
				if string(ch.Delta) != `{}` || finished[ch.Index] {
					t.Fatalf("finish chunk: %s", f)
				}
				finished[ch.Index] = true
			default:
				if finished[ch.Index] {
					t.Fatalf("delta after finish: %s", f)
				}
				var d struct {
					Content string `json:"content"`
				}
				_ = json.Unmarshal(ch.Delta, &d)
				if d.Content == "" || strings.Count(strings.TrimSpace(d.Content), " ") > 0 {
					t.Fatalf("a content delta is one token: %s", ch.Delta)
				}
				deltas++
			}
		}
		if len(finished) != 2 {
			t.Errorf("choices finished: %v", finished)
		}
		if includeUsage {
			var u struct {
				Prompt, Completion, Total int
			}
			var m map[string]int
			_ = json.Unmarshal(usage, &m)
			u.Prompt, u.Completion, u.Total = m["prompt_tokens"], m["completion_tokens"], m["total_tokens"]
			if u.Completion != deltas || u.Total != u.Prompt+u.Completion {
				t.Errorf("usage %s, deltas %d", usage, deltas)
			}
		}
	}
}

// TestClientDisconnect: generation stops at once when the client goes away, the stream's
// outcome is client_disconnected, and no goroutine outlives the request.
func TestClientDisconnect(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newHarness(t, func(d *Deps) { d.Catalog = slowCatalog(t, 20*time.Millisecond) })
	srv := httptest.NewServer(h.handler)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-slow", `"stream":true`)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for frames := 0; frames < 3; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			frames++
		}
	}
	cancel()
	resp.Body.Close()
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" && m["route"] == chatPath })
	if rec["stream_outcome"] != "client_disconnected" {
		t.Errorf("outcome = %v", rec["stream_outcome"])
	}
	if c := rec["chunks"].(float64); c < 3 || c > 6 {
		t.Errorf("chunks = %v: generation did not stop at once", c)
	}
	srv.Close()
	http.DefaultClient.CloseIdleConnections()
}

func waitForLog(t *testing.T, logs *syncBuffer, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range logs.records(t) {
			if match(r) {
				return r
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no such log record in:\n%s", logs.String())
	return nil
}

// TestStreamAbortedByDrain: after the drain deadline, an open stream gets a shutting_down error
// frame and [DONE], and its outcome is aborted.
func TestStreamAbortedByDrain(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newHarness(t, func(d *Deps) { d.Catalog = slowCatalog(t, 30*time.Millisecond) })
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	resp, err := http.Post(srv.URL+chatPath, "application/json", strings.NewReader(chatBody("mock-slow", `"stream":true`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var once sync.Once
	rd := bufio.NewReader(resp.Body)
	var frames []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			frames = append(frames, d)
			once.Do(h.drain.AbortStreams)
		}
	}
	if len(frames) < 3 || frames[len(frames)-1] != "[DONE]" || !strings.Contains(frames[len(frames)-2], `"code":"shutting_down"`) {
		t.Fatalf("frames: %v", frames)
	}
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" && m["route"] == chatPath })
	if rec["stream_outcome"] != "aborted" || rec["error_code"] != "shutting_down" {
		t.Errorf("log: %v", rec)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestStreamTimeout(t *testing.T) {
	h := newHarness(t, func(d *Deps) {
		d.Catalog = slowCatalog(t, 20*time.Millisecond)
		d.Config.StreamTimeout = 100 * time.Millisecond
	})
	rr := h.do("POST", chatPath, chatBody("mock-slow", `"stream":true`))
	frames := sseFrames(t, rr.Body.String())
	if frames[len(frames)-1] != "[DONE]" || !strings.Contains(frames[len(frames)-2], `"code":"stream_timeout"`) {
		t.Fatalf("frames: %v", frames)
	}
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" })
	if rec["stream_outcome"] != "timed_out" {
		t.Errorf("log: %v", rec)
	}
}

// TestFNV64aMatchesHashFNV: the latency seed is hash/fnv's FNV-1a, so a request keeps the
// schedule it always had.
func TestFNV64aMatchesHashFNV(t *testing.T) {
	for _, s := range []string{"", "a", chatBody("mock-slow", `"stream":true`), strings.Repeat("\xff\x00x", 500)} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(s))
		if got, want := fnv64a([]byte(s)), h.Sum64(); got != want {
			t.Fatalf("%q: %x, want %x", s, got, want)
		}
	}
}
