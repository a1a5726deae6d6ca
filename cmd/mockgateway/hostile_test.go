package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileCatalog adds a model whose stream is far larger than any socket buffer, for the client
// that never reads.
const hostileCatalog = `models:
  - {id: mock-echo, kind: mock, behavior: echo, capabilities: {streaming: true, tools: false}}
  - {id: mock-chat, kind: mock, behavior: chat, capabilities: {streaming: true, tools: false}}
  - {id: mock-long, kind: mock, behavior: chat, default_tokens: 4096, capabilities: {streaming: true, tools: false}}
`

func post(t *testing.T, c *http.Client, url, body string) (int, string) {
	t.Helper()
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("no x-request-id on a %d", resp.StatusCode)
	}
	return resp.StatusCode, e.Error.Code
}

// settle waits for the goroutine count to come back near its baseline: every connection the
// hostile clients opened must be gone, not parked.
func settle(t *testing.T, baseline int) int {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var n int
	for time.Now().Before(deadline) {
		runtime.GC()
		if n = runtime.NumGoroutine(); n <= baseline+10 {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("goroutines %d, baseline %d:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	return n
}

// TestHostileClients: each hostile client gets the contract's error or a closed connection,
// the service keeps serving others meanwhile, and its goroutines and heap return to baseline.
func TestHostileClients(t *testing.T) {
	catalogPath := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(catalogPath, []byte(hostileCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	in := startService(t, nil, "--catalog", catalogPath, "--read-header-timeout", "300ms", "--read-timeout", "1s",
		"--stream-timeout", "2s", "--max-body-bytes", "65536", "--idle-timeout", "1s")
	addr := strings.TrimPrefix(in.URL, "http://")
	// No keep-alive: a pooled connection the server just closed as idle would fail a POST.
	tr := &http.Transport{DisableKeepAlives: true}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()

	ok := func() {
		t.Helper()
		if code, _ := post(t, client, in.URL, `{"model":"mock-echo","messages":[{"role":"user","content":"still there?"}]}`); code != 200 {
			t.Fatalf("the service stopped serving: %d", code)
		}
	}
	ok()
	tr.CloseIdleConnections()
	baseline := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapAlloc

	t.Run("slow headers", func(t *testing.T) {
		var conns []net.Conn
		for i := 0; i < 20; i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n") // and never the rest
			conns = append(conns, c)
		}
		ok() // others are served meanwhile
		for _, c := range conns {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadAll(c); err != nil {
				t.Errorf("slowloris connection not closed by the server: %v", err)
			}
			c.Close()
		}
	})

	t.Run("slow body", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":")
		ok()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("slow body: no answer: %v", err)
		}
		// The read deadline ends the body: 408 request_timeout, in contract shape.
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 408 || !bytes.Contains(b, []byte(`"code":"request_timeout"`)) || resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("slow body: %d %s", resp.StatusCode, b)
		}
	})

	t.Run("client never reads a stream", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		body := `{"model":"mock-long","stream":true,"n":16,"messages":[{"role":"user","content":"x"}]}`
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		ok() // served while that stream is stuck
		rec := waitForLog(t, in, func(m map[string]any) bool { return m["model"] == "mock-long" })
		if rec["stream_outcome"] != "timed_out" {
			t.Errorf("a stream nobody reads ends as %v", rec["stream_outcome"])
		}
		c.Close()
	})

	t.Run("10000 connections opened and dropped", func(t *testing.T) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 200)
		for i := 0; i < 10000; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return // the accept queue may be full for a moment; that is the point
				}
				if i%2 == 0 {
					fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: localhost\r\n")
				}
				c.Close()
			}(i)
		}
		wg.Wait()
		ok()
	})

	t.Run("bodies at and over the limit", func(t *testing.T) {
		msg := `{"model":"mock-echo","messages":[{"role":"user","content":"%s"}]}`
		pad := 65536 - len(fmt.Sprintf(msg, ""))
		if code, _ := post(t, client, in.URL, fmt.Sprintf(msg, strings.Repeat("a", pad))); code != 200 {
			t.Errorf("a body exactly at the limit: %d", code)
		}
		if code, errCode := post(t, client, in.URL, fmt.Sprintf(msg, strings.Repeat("a", pad+1))); code != 413 || errCode != "request_too_large" {
			t.Errorf("one byte over the limit: %d %s", code, errCode)
		}
		// Chunked, with no Content-Length to reject early.
		req, _ := http.NewRequest("POST", in.URL+"/v1/chat/completions", io.MultiReader(strings.NewReader(fmt.Sprintf(msg, strings.Repeat("a", 200000)))))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 413 {
				t.Errorf("chunked oversized body: %d", resp.StatusCode)
			}
		}
	})

	t.Run("malformed and extreme requests", func(t *testing.T) {
		cases := []struct {
			name, body string
			status     int
			code       string
		}{
			{"deep nesting", `{"model":"mock-echo","messages":[{"role":"user","content":"x"}],"metadata":` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + `}`, 400, "invalid_json"},
			{"deep nesting unterminated", strings.Repeat(`{"a":`, 10000), 400, "invalid_json"},
			{"invalid utf-8", "{\"model\":\"mock-echo\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\xfd\"}]}", 200, ""},
			{"huge n", `{"model":"mock-echo","n":1000000000,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_value"},
			{"huge max_tokens", `{"model":"mock-echo","max_tokens":99999999999999999999,"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_value"},
			{"thousands of messages", `{"model":"mock-echo","messages":[` + strings.Repeat(`{"role":"user","content":"x"},`, 2000) + `{"role":"user","content":"last"}]}`, 200, ""},
			{"null bytes", "{\"model\":\"mock-echo\u0000\",\"messages\":[]}", 400, ""},
			{"not json at all", "\x00\x01\x02", 400, "invalid_json"},
		}
		for _, c := range cases {
			code, errCode := post(t, client, in.URL, c.body)
			if code != c.status || (c.code != "" && errCode != c.code) {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, errCode, c.status, c.code)
			}
		}
	})

	ok()
	tr.CloseIdleConnections()
	settle(t, baseline)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapAlloc) - int64(heapBefore); grew > 32<<20 {
		t.Errorf("heap grew by %d MiB after the hostile clients left", grew>>20)
	}
}

// waitForLog waits for an access line matching m.
func waitForLog(t *testing.T, in *instance, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range in.Logs.Records(t) {
			if r["msg"] == "request" && match(r) {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no matching access line in:\n%s", strings.Join(in.Logs.Lines(), "\n"))
	return nil
}
