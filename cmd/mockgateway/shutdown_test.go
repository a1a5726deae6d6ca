package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// gauge reads one unlabelled gauge from /metrics.
func gauge(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` ([0-9.e+]+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestShutdownUnderLoad: SIGTERM (the context main cancels on it) while 200 JSON and 200 stream
// requests are in flight. Every JSON request completes; every stream ends with [DONE], either
// completed or after a shutting_down error frame; and the last spans are flushed to the OTLP
// receiver before run returns.
func TestShutdownUnderLoad(t *testing.T) {
	const jsonReqs, streams = 200, 200
	recv := &otlpHTTPReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	in := startService(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_BSP_MAX_QUEUE_SIZE": "8192"},
		"--drain-timeout", "700ms", "--max-concurrent", "2000")

	tr := &http.Transport{MaxIdleConnsPerHost: jsonReqs + streams, MaxConnsPerHost: 0}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()

	var wg sync.WaitGroup
	var mu sync.Mutex
	problems := []string{}
	outcomes := map[string]int{}
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, a...))
	}
	send := func(stream bool, latency string) (*http.Response, error) {
		body := fmt.Sprintf(`{"model":"mock-chat","stream":%v,"messages":[{"role":"user","content":"hold on"}]}`, stream)
		req, _ := http.NewRequest("POST", in.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Latency", latency)
		return client.Do(req)
	}
	for i := 0; i < jsonReqs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Long enough that every request is still waiting when the last one starts, on a
			// loaded machine too; shutdown's drain deadline answers them.
			resp, err := send(false, "ttfc=20s;between=0s")
			if err != nil {
				fail("json: %v", err)
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), `"finish_reason":"stop"`) {
				fail("json: %d %v %.80s", resp.StatusCode, err, b)
			}
		}()
	}
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := send(true, "ttfc=0s;between=1s") // 32 tokens: ~32s, far past the drain deadline
			if err != nil {
				fail("stream: %v", err)
				return
			}
			defer resp.Body.Close()
			var frames []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					frames = append(frames, d)
				}
			}
			n := len(frames)
			switch {
			case n == 0 || frames[n-1] != "[DONE]":
				fail("stream without [DONE]: %d frames, err %v", n, sc.Err())
			case strings.Contains(frames[n-2], `"code":"shutting_down"`):
				mu.Lock()
				outcomes["shutting_down"]++
				mu.Unlock()
			case strings.Contains(frames[n-2], `"finish_reason":"stop"`):
				mu.Lock()
				outcomes["completed"]++
				mu.Unlock()
			default:
				fail("stream ended oddly: %s", frames[n-2])
			}
		}()
	}

	// Wait until all 400 are in flight, then shut down.
	deadline := time.Now().Add(20 * time.Second)
	for gauge(t, in.URL, "mockgateway_http_requests_in_flight") < jsonReqs+streams {
		if time.Now().After(deadline) {
			t.Fatalf("only %v requests in flight", gauge(t, in.URL, "mockgateway_http_requests_in_flight"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := in.Stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	if outcomes["shutting_down"]+outcomes["completed"] != streams {
		t.Errorf("stream endings: %v", outcomes)
	}

	// Every request's server span reached the receiver before run returned.
	recv.mu.Lock()
	defer recv.mu.Unlock()
	chats := 0
	for _, s := range recv.spans {
		if s.GetName() == "POST /v1/chat/completions" {
			chats++
		}
	}
	if chats != jsonReqs+streams {
		t.Errorf("%d chat server spans exported, want %d", chats, jsonReqs+streams)
	}
	t.Logf("streams: %v; spans exported: %d", outcomes, len(recv.spans))
}
