package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"mockgateway/internal/chatclient"
)

// The load test's requests: mock-echo with a 15-word user message answers "echo:" + 15 words,
// 16 content tokens — as JSON, or as a stream of a role chunk, 16 content chunks and a finish
// chunk, then [DONE].
const userMessage = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"

var (
	jsonRequest   = `{"model":"mock-echo","messages":[{"role":"user","content":"` + userMessage + `"}]}`
	streamRequest = `{"model":"mock-echo","stream":true,"messages":[{"role":"user","content":"` + userMessage + `"}]}`
)

const wantContentTokens = 16

// streamShape is what one stream carried.
type streamShape struct {
	Bytes         int  `json:"bytes"`
	DataFrames    int  `json:"data_frames"` // every "data:" frame, [DONE] included
	Chunks        int  `json:"chunks"`      // chat.completion.chunk frames
	ContentTokens int  `json:"content_tokens"`
	ErrorFrames   int  `json:"error_frames"`
	Done          bool `json:"done"` // ended with data: [DONE]
}

// shapeOf counts a stream's frames, chunks and non-empty content deltas. The load test compares
// the two servers byte for byte, so every frame must be one "data: " line, as mockgateway
// writes them.
func shapeOf(body []byte) (streamShape, error) {
	st, err := chatclient.Read(bytes.NewReader(body), 0)
	s := streamShape{Bytes: len(body), DataFrames: st.Events, Chunks: st.Completion, ContentTokens: st.ContentDeltas,
		ErrorFrames: len(st.ErrorFrames), Done: st.Done}
	switch {
	case err != nil:
		return s, err
	case st.Inexact > 0:
		return s, errors.New("a frame that is not a single data line")
	case st.Ended != nil:
		return s, fmt.Errorf("the stream ended mid-frame: %v", st.Ended)
	}
	return s, nil
}

// probeResult is one server's answer to the load test's two requests, fetched once before the
// load runs to check that both servers send what the comparison assumes.
type probeResult struct {
	JSONStatus int         `json:"json_status"`
	JSONBytes  int         `json:"json_bytes"`
	Stream     streamShape `json:"stream"`
}

// maxAnswer bounds what the load test reads of one answer: far above any the cases provoke.
const maxAnswer = 1 << 30

// post sends a chat request and reads the whole answer.
func post(ctx context.Context, client *http.Client, s *server, body string) (*http.Response, []byte, error) {
	return chatclient.Request{URL: s.url(chatclient.ChatPath), Body: []byte(body)}.Do(ctx, client, maxAnswer)
}

// postOK sends a probe of another dialect (dialects.go) and returns its body, an error unless it is a 200.
func postOK(ctx context.Context, client *http.Client, req chatclient.Request) ([]byte, error) {
	resp, b, err := req.Do(ctx, client, maxAnswer)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
	}
	return b, err
}

func probe(ctx context.Context, s *server) (probeResult, error) {
	var p probeResult
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, b, err := post(ctx, client, s, jsonRequest)
	if err != nil {
		return p, fmt.Errorf("%s JSON probe: %v", s.name, err)
	}
	p.JSONStatus, p.JSONBytes = resp.StatusCode, len(b)
	if resp.StatusCode != 200 {
		return p, fmt.Errorf("%s JSON probe: status %d", s.name, resp.StatusCode)
	}
	resp, b, err = post(ctx, client, s, streamRequest)
	if err != nil {
		return p, fmt.Errorf("%s stream probe: %v", s.name, err)
	}
	if resp.StatusCode != 200 {
		return p, fmt.Errorf("%s stream probe: status %d", s.name, resp.StatusCode)
	}
	if p.Stream, err = shapeOf(b); err != nil {
		return p, fmt.Errorf("%s stream probe: %v", s.name, err)
	}
	if !p.Stream.Done || p.Stream.ContentTokens != wantContentTokens {
		return p, fmt.Errorf("%s stream probe: %d content tokens, [DONE]=%v; want %d and [DONE]", s.name, p.Stream.ContentTokens, p.Stream.Done, wantContentTokens)
	}
	return p, nil
}

// --- 10,000 open streams ---

// memResult is the RSS of mockgateway with many streams held open at once.
type memResult struct {
	Streams          int      `json:"streams"`
	Opened           int      `json:"opened"`
	Errors           int      `json:"errors"`
	ErrorSamples     []string `json:"error_samples,omitempty"`
	OpenSeconds      float64  `json:"open_seconds"`
	RSSBefore        int64    `json:"rss_before_bytes"`
	RSSOpen          int64    `json:"rss_open_bytes"`
	RSSAfter         int64    `json:"rss_after_bytes"`
	PerStreamBytes   float64  `json:"per_stream_bytes"`
	StreamsActive    float64  `json:"streams_active_gauge"`
	GoroutinesBefore float64  `json:"goroutines_before"`
	GoroutinesOpen   float64  `json:"goroutines_open"`
	GoroutinesAfter  float64  `json:"goroutines_after"`
	Latency          string   `json:"latency_header"`
	// Baseline is the same streams held by cmd/baseline (a bare net/http handler waiting between
	// its frames): what net/http itself holds per open stream, beside mockgateway's figure.
	Baseline *memResult `json:"baseline,omitempty"`
}

// holdLatency keeps a stream open: the role chunk comes at once, then one token every 30s, so
// a 16-token stream lasts 8 minutes — far longer than opening and measuring takes.
const holdLatency = "ttfc=0s;between=30s"

// openStream sends the stream request on a raw connection and returns once the response
// headers and the first frame have arrived; the connection is then left open, unread.
func openStream(addr string, req []byte) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (net.Conn, error) { c.Close(); return nil, err }
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.Write(req); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(c, 2048)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fail(fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b)))
	}
	ev, err := chatclient.NewReader(resp.Body).Next()
	if err != nil {
		return fail(fmt.Errorf("first frame: %v", err))
	}
	var first chatclient.Stream
	if err := first.Add(ev); err != nil || first.Chunks != 1 {
		return fail(fmt.Errorf("first frame is not a chunk: %.100q", ev.Data))
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// holdStreams opens n streams in batches, measures RSS with all of them open, closes them and
// measures again once the service reports no active stream.
func holdStreams(ctx context.Context, ws *workspace, s *server, n, batch int) (memResult, error) {
	m := memResult{Streams: n, Latency: holdLatency}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	gauges := func() map[string]float64 {
		g, _ := scrape(ctx, client, s.url("/metrics"), "go_goroutines", "mockgateway_streams_active")
		return g
	}
	time.Sleep(time.Second)
	var err error
	if m.RSSBefore, err = rss(s.pid()); err != nil {
		return m, err
	}
	m.GoroutinesBefore = gauges()["go_goroutines"]

	req := []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: " + s.addr + "\r\nContent-Type: application/json\r\n" +
		"x-mock-latency: " + holdLatency + "\r\n" + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(streamRequest)) + streamRequest)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var mu sync.Mutex
	start := time.Now()
	for opened := 0; opened < n && ctx.Err() == nil; {
		k := min(batch, n-opened)
		var wg sync.WaitGroup
		for range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := openStream(s.addr, req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					m.Errors++
					if len(m.ErrorSamples) < 5 {
						m.ErrorSamples = append(m.ErrorSamples, err.Error())
					}
					return
				}
				conns = append(conns, c)
			}()
		}
		wg.Wait()
		opened += k
		if opened%2000 == 0 || opened == n {
			ws.logf("open streams: %d/%d (%d errors)", len(conns), n, m.Errors)
		}
	}
	m.OpenSeconds = time.Since(start).Seconds()
	m.Opened = len(conns)
	if ctx.Err() != nil {
		return m, ctx.Err()
	}
	time.Sleep(2 * time.Second) // let the last batch's buffers settle
	if m.RSSOpen, err = rss(s.pid()); err != nil {
		return m, err
	}
	g := gauges()
	m.GoroutinesOpen, m.StreamsActive = g["go_goroutines"], g["mockgateway_streams_active"]
	if m.Opened > 0 {
		m.PerStreamBytes = float64(m.RSSOpen-m.RSSBefore) / float64(m.Opened)
	}

	for _, c := range conns {
		c.Close()
	}
	conns = conns[:0]
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if g := gauges(); g["mockgateway_streams_active"] == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	m.RSSAfter, _ = rss(s.pid())
	m.GoroutinesAfter = gauges()["go_goroutines"]
	return m, nil
}
