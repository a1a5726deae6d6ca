package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// portkeyCompat is where Portkey's AI gateway is installed (package.json and its lock file pin
// it; make deps runs npm ci there, which applies Portkey's own patch to async-retry).
const portkeyCompat = "../../internal/clientcompat/portkey"

// TestPortkeyGateway puts a real gateway, Portkey's AI gateway 1.15.2, between the test and the
// mock, both real servers on loopback, and checks that it acts on the mock's simulated quotas as
// it does on a provider's — each case in a scope of its own, the quota sent by x-mock-quota,
// which Portkey forwards only when a config's forward_headers names it:
//
//   - the rate-limit headers reach the client through the gateway;
//   - retry with use_retry_after_header: the mock refuses the second call of rpm=1 in 3s,
//     Portkey waits the refusal's retry-after-ms — not its own backoff of 1s — retries once, and
//     the client gets the retry's 200;
//   - without a retry, the refusal reaches the client: status, headers and OpenAI's body, its
//     message prefixed by Portkey;
//   - fallback on 429: the first target's quota refuses, the second target serves;
//   - a daily quota's retry-after (a day) is beyond the minute Portkey waits at most: it skips
//     its retries and falls back at once;
//   - the same retry on Anthropic's Messages API, its anthropic-ratelimit-* headers passed on and
//     its retry-after (whole seconds) waited.
func TestPortkeyGateway(t *testing.T) {
	testutil.EndToEnd(t)
	mock := startService(t, nil)
	gateway := startPortkey(t)
	upstream := mock.URL + "/v1"
	target := func(key string, extra map[string]any) map[string]any {
		m := map[string]any{"provider": "openai", "api_key": key, "custom_host": upstream,
			"forward_headers": []string{"x-mock-quota", "x-mock-scope"}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	retry := map[string]any{"attempts": 2, "on_status_codes": []int{429}, "use_retry_after_header": true}

	t.Run("retry waits retry-after", func(t *testing.T) {
		cfg := target("sk-portkey-retry", map[string]any{"retry": retry})
		h := portkeyHeaders(cfg, "rpm=1;window=3s", "portkey-retry")
		first := portkeyChat(t, gateway, h, "mock-chat")
		wantHeaders(t, first, map[string]string{"x-ratelimit-limit-requests": "1", "x-ratelimit-remaining-requests": "0",
			"x-ratelimit-reset-requests": "3s", "x-portkey-retry-attempt-count": "0"})
		second := portkeyChat(t, gateway, h, "mock-chat")
		wantHeaders(t, second, map[string]string{"x-ratelimit-remaining-requests": "0", "x-portkey-retry-attempt-count": "1"})
		calls := portkeyJournal(t, mock.URL, "portkey-retry")
		if got := portkeyCalls(calls); got != "200 mock-chat,429 mock-chat quota_requests,200 mock-chat" {
			t.Fatalf("calls: %s", got)
		}
		// The refusal's retry-after-ms, which Portkey reads before retry-after, is what was left
		// of the window the first call opened; async-retry's own first backoff is 1s.
		retryAfter := calls[0].Time.Add(3 * time.Second).Sub(calls[1].Time)
		if waited := calls[2].Time.Sub(calls[1].Time); waited < retryAfter-2*time.Millisecond || waited < 2*time.Second {
			t.Errorf("Portkey retried %v after the refusal, whose retry-after-ms was about %v", waited, retryAfter)
		}
	})

	t.Run("refusal passed on", func(t *testing.T) {
		h := portkeyHeaders(target("sk-portkey-refused", nil), "rpm=1;window=1m", "portkey-refused")
		portkeyChat(t, gateway, h, "mock-chat")
		resp, body := portkeyPost(t, gateway+"/v1/chat/completions", h, `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("second call: %d %s", resp.StatusCode, body)
		}
		wantHeaders(t, resp, map[string]string{"retry-after": "60", "x-ratelimit-limit-requests": "1", "x-ratelimit-remaining-requests": "0"})
		if ms := resp.Header.Get("retry-after-ms"); ms == "" {
			t.Error("no retry-after-ms")
		}
		// Portkey rewrites the error: the provider's name before its message, and "provider".
		var e struct {
			Error    struct{ Message, Type, Code string }
			Provider string
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "rate_limit_exceeded" || e.Error.Type != "requests" ||
			e.Provider != "openai" || !strings.HasPrefix(e.Error.Message, "openai error: Rate limit reached for mock-chat in organization org-") {
			t.Fatalf("refusal through Portkey: %v %s", err, body)
		}
	})

	fallback := func(first map[string]any) map[string]any {
		// The second target does not forward the quota: it serves without one, as mock-echo.
		second := target("sk-portkey-second", map[string]any{"forward_headers": []string{"x-mock-scope"},
			"override_params": map[string]any{"model": "mock-echo"}})
		return map[string]any{"strategy": map[string]any{"mode": "fallback", "on_status_codes": []int{429}},
			"targets": []any{first, second}}
	}
	t.Run("fallback on 429", func(t *testing.T) {
		h := portkeyHeaders(fallback(target("sk-portkey-first", nil)), "rpm=1;window=1m", "portkey-fallback")
		wantHeaders(t, portkeyChat(t, gateway, h, "mock-chat"), map[string]string{"x-portkey-last-used-option-index": "config.targets[0]",
			"x-ratelimit-remaining-requests": "0"})
		resp := portkeyChat(t, gateway, h, "mock-echo")
		wantHeaders(t, resp, map[string]string{"x-portkey-last-used-option-index": "config.targets[1]", "x-ratelimit-limit-requests": ""})
		if got := portkeyCalls(portkeyJournal(t, mock.URL, "portkey-fallback")); got != "200 mock-chat,429 mock-chat quota_requests,200 mock-echo" {
			t.Fatalf("calls: %s", got)
		}
	})

	t.Run("daily quota: no retry, fallback", func(t *testing.T) {
		h := portkeyHeaders(fallback(target("sk-portkey-daily", map[string]any{"retry": retry})), "rpd=1", "portkey-daily")
		wantHeaders(t, portkeyChat(t, gateway, h, "mock-chat"), map[string]string{"x-ratelimit-limit-requests": "1",
			"x-ratelimit-reset-requests": "24h0m0s"})
		wantHeaders(t, portkeyChat(t, gateway, h, "mock-echo"), map[string]string{"x-portkey-last-used-option-index": "config.targets[1]"})
		if got := portkeyCalls(portkeyJournal(t, mock.URL, "portkey-daily")); got != "200 mock-chat,429 mock-chat quota_daily,200 mock-echo" {
			t.Fatalf("calls: %s", got)
		}
	})

	t.Run("anthropic retry waits retry-after", func(t *testing.T) {
		cfg := map[string]any{"provider": "anthropic", "api_key": "sk-ant-portkey", "custom_host": upstream,
			"forward_headers": []string{"x-mock-quota", "x-mock-scope"}, "retry": retry}
		h := portkeyHeaders(cfg, "rpm=1;window=3s", "portkey-anthropic")
		h.Set("anthropic-version", "2023-06-01")
		const messages = `{"model":"mock-chat","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
		for i, want := range []string{"0", "1"} {
			resp, body := portkeyPost(t, gateway+"/v1/messages", h, messages)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"type":"message"`) {
				t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, body)
			}
			wantHeaders(t, resp, map[string]string{"anthropic-ratelimit-requests-limit": "1", "anthropic-ratelimit-requests-remaining": "0",
				"x-portkey-retry-attempt-count": want})
		}
		calls := portkeyJournal(t, mock.URL, "portkey-anthropic")
		if got := portkeyCalls(calls); got != "200 mock-chat,429 mock-chat quota_requests,200 mock-chat" {
			t.Fatalf("calls: %s", got)
		}
		// Anthropic's refusal has retry-after alone, in whole seconds rounded up: 3.
		if waited := calls[2].Time.Sub(calls[1].Time); waited < 3*time.Second {
			t.Errorf("Portkey retried %v after the refusal, whose retry-after was 3", waited)
		}
	})
}

// startPortkey starts Portkey's gateway on a free loopback port (internal/clientcompat/portkey's
// loopback.mjs binds it there and prints the port), with a HOME and TMPDIR of its own and
// nothing of this machine's environment but PATH, and stops it when the test ends. It returns
// the gateway's base URL.
func startPortkey(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(portkeyCompat)
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; Portkey's gateway needs Node 20+ (make deps installs it)")
	}
	server := filepath.Join("node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
	if _, err := os.Stat(filepath.Join(dir, server)); err != nil {
		t.Fatalf("Portkey's gateway is not installed in %s: run 'make deps' (make test does): %v", portkeyCompat, err)
	}
	// Without Portkey's patch its retry does not wait retry-after (internal/clientcompat/portkey/README.md).
	if src, err := os.ReadFile(filepath.Join(dir, "node_modules", "async-retry", "lib", "index.js")); err != nil ||
		!strings.Contains(string(src), "fn(bail, num, op)") {
		t.Fatalf("async-retry in %s lacks Portkey's patch (npm ci applies it; run 'make deps'): %v", portkeyCompat, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "--import", "./loopback.mjs", server, "--port=0", "--headless")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir(), "NO_COLOR=1"}
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		logs []string
	)
	addr := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "listening on "); ok {
				select {
				case addr <- a:
				default: // only the first listen is the gateway's
				}
				continue
			}
			mu.Lock()
			logs = append(logs, line)
			mu.Unlock()
		}
	}()
	stop := func() {
		cancel()
		<-drained
		_ = cmd.Wait()
	}
	select {
	case a := <-addr:
		t.Cleanup(func() {
			stop()
			mu.Lock()
			defer mu.Unlock()
			if t.Failed() && len(logs) > 0 {
				t.Logf("Portkey's stderr:\n%s", strings.Join(logs, "\n"))
			}
		})
		return "http://" + a
	case <-drained:
		stop()
		t.Fatalf("Portkey's gateway exited before listening:\n%s", strings.Join(logs, "\n"))
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("Portkey's gateway not listening within 30s:\n%s", strings.Join(logs, "\n"))
	}
	return ""
}

// portkeyHeaders are a request's headers to the gateway: its config, and the quota and scope it
// forwards to the mock.
func portkeyHeaders(config map[string]any, quota, scope string) http.Header {
	cfg, _ := json.Marshal(config)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("x-portkey-config", string(cfg))
	h.Set("x-mock-quota", quota)
	h.Set("x-mock-scope", scope)
	return h
}

// portkeyChat sends a chat completion through the gateway and requires a 200 answered by model.
func portkeyChat(t *testing.T, gateway string, h http.Header, model string) *http.Response {
	t.Helper()
	resp, body := portkeyPost(t, gateway+"/v1/chat/completions", h, `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`)
	var c struct{ Model string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &c) != nil || c.Model != model {
		t.Fatalf("through Portkey: %d %s (want %s's answer)", resp.StatusCode, body, model)
	}
	return resp
}

// portkeyPost posts body to url with h and returns the answer and its body.
func portkeyPost(t *testing.T, url string, h http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// wantHeaders requires each header's value; "" requires its absence.
func wantHeaders(t *testing.T, resp *http.Response, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

// portkeyCall is a journal entry as TestPortkeyGateway reads it.
type portkeyCall struct {
	Time                time.Time
	Model, Fault, Route string
	Status              int
}

// portkeyJournal is the scope's journal, oldest first.
func portkeyJournal(t *testing.T, base, scope string) []portkeyCall {
	t.Helper()
	var j struct{ Data []portkeyCall }
	getJSON(t, base+"/_mock/journal?limit=100&scope="+url.QueryEscape(scope), &j)
	calls := make([]portkeyCall, 0, len(j.Data))
	for i := len(j.Data) - 1; i >= 0; i-- { // newest first
		calls = append(calls, j.Data[i])
	}
	return calls
}

// portkeyCalls is "STATUS MODEL[ FAULT]" per call.
func portkeyCalls(calls []portkeyCall) string {
	s := make([]string, len(calls))
	for i, c := range calls {
		s[i] = strings.TrimSpace(strconv.Itoa(c.Status) + " " + c.Model + " " + c.Fault)
	}
	return strings.Join(s, ",")
}
