package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mockgateway/internal/server"
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

// TestDrainAnswersEverySentRequest: SIGTERM while 16 clients loop on keep-alive connections, 40
// streams and 20 JSON requests are in flight. A request that reached the service is answered —
// 200, or 503 shutting_down with Connection: close — and none is reset after it was sent; the
// clients leave as they are told, and run returns nil. Closing a keep-alive connection races
// with a request the client may be sending on it at that instant, so one shutdown proves
// little: three, each on a fresh service.
func TestDrainAnswersEverySentRequest(t *testing.T) {
	for try := 1; try <= 3; try++ {
		t.Run(fmt.Sprintf("try %d", try), func(t *testing.T) {
			lost, answered := drainUnderKeepAliveLoops(t)
			t.Logf("requests lost after they were sent: %d; answered during the drain: %d", lost, answered)
			if lost != 0 {
				t.Errorf("%d requests were lost after they were sent", lost)
			}
		})
	}
}

func drainUnderKeepAliveLoops(t *testing.T) (lost, answeredDraining int) {
	const loopers, streams, jsonReqs = 16, 40, 20
	// A quiet of 3 s, not the default 1 s: under make test the loopers run with -race beside
	// other packages' tests on two cores, and one starved for a second between an answer and its
	// next request looked idle and had that request reset (a CI run). The rule tested is the
	// same; a quiet of 0 loses requests here at once.
	in := startService(t, nil, "--drain-timeout", "1s", "--drain-quiet", "3s")

	var mu sync.Mutex
	var problems []string
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, a...))
	}
	chat := func(stream bool, latency string) *http.Request {
		body := fmt.Sprintf(`{"model":"mock-chat","stream":%v,"messages":[{"role":"user","content":"hold on"}]}`, stream)
		req, _ := http.NewRequest("POST", in.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Latency", latency)
		return req
	}
	longClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams + jsonReqs}, Timeout: 60 * time.Second}
	defer longClient.Transport.(*http.Transport).CloseIdleConnections()

	var wg sync.WaitGroup
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := longClient.Do(chat(true, "ttfc=0s;between=1s")) // ~32 s, far past the drain deadline
			if err != nil {
				fail("stream: %v", err)
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
				fail("stream without [DONE]: %v", err)
			}
		}()
	}
	for range jsonReqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := longClient.Do(chat(false, "ttfc=20s;between=0s")) // answered at the drain deadline
			if err != nil {
				fail("json: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"finish_reason":"stop"`)) {
				fail("json: %d %.80s", resp.StatusCode, b)
			}
		}()
	}

	// Each looper is one client with one keep-alive connection, sending a chat request (a POST:
	// no client retries it by itself) as soon as the last was answered, until it is refused.
	var sent, lostN, draining atomic.Int64
	stopped := make(chan struct{})
	var loops sync.WaitGroup
	for range loopers {
		loops.Add(1)
		go func() {
			defer loops.Done()
			tr := &http.Transport{MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			for {
				var wrote atomic.Bool
				req := chat(false, "ttfc=0s;between=0s")
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
					WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) },
				}))
				resp, err := client.Do(req)
				if err != nil {
					select {
					case <-stopped:
					default:
						if !wrote.Load() {
							fail("looper: refused before the shutdown: %v", err)
							return
						}
					}
					if wrote.Load() {
						lostN.Add(1)
						fail("looper: request lost after it was sent: %v", err)
						continue
					}
					return // refused: the service is gone, and the request was never sent
				}
				sent.Add(1)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 200:
				case resp.StatusCode == 503 && bytes.Contains(b, []byte(`"code":"shutting_down"`)):
					draining.Add(1)
					if !resp.Close {
						fail("looper: a 503 shutting_down without Connection: close")
					}
				default:
					fail("looper: %d %.80s", resp.StatusCode, b)
				}
			}
		}()
	}

	// Everything in flight, every looper going, then SIGTERM.
	deadline := time.Now().Add(20 * time.Second)
	for gauge(t, in.URL, "mockgateway_http_requests_in_flight") < streams+jsonReqs || sent.Load() < 10*loopers {
		if time.Now().After(deadline) {
			t.Fatalf("in flight: %v, looper requests answered: %d", gauge(t, in.URL, "mockgateway_http_requests_in_flight"), sent.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stopped)
	if err := in.Stop(); err != nil {
		t.Errorf("run: %v", err)
	}
	loops.Wait()
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	return int(lostN.Load()), int(draining.Load())
}

// TestConnWatchQuiet: the quiet is time since the last change that left no connection busy —
// changes while another connection is busy do not restart it, and the clock is read only when
// one leaves none busy — and no connection open is quiet at once.
func TestConnWatchQuiet(t *testing.T) {
	w := newConnWatch()
	a, _ := net.Pipe()
	b, _ := net.Pipe()
	if !w.quiet(time.Hour) {
		t.Fatal("no connection open, not quiet")
	}
	w.track(a, http.StateNew)
	w.track(b, http.StateNew)
	w.track(a, http.StateActive)
	w.track(b, http.StateIdle)
	if w.quiet(0) || w.busyNow() != 1 {
		t.Fatalf("a connection serving a request: quiet %v, %d busy", w.quiet(0), w.busyNow())
	}
	w.track(a, http.StateIdle) // none busy: the quiet starts
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	if !w.quiet(time.Since(start)) {
		t.Error("no change since none was busy, not quiet for that long")
	}
	if w.quiet(time.Hour) {
		t.Error("quiet for an hour after 20 ms")
	}
	w.track(b, http.StateActive)
	w.track(b, http.StateIdle)
	if w.quiet(15 * time.Millisecond) {
		t.Error("a request just served, still quiet from before it")
	}
	w.track(a, http.StateClosed)
	w.track(b, http.StateClosed)
	if !w.quiet(time.Hour) {
		t.Error("every connection closed, not quiet")
	}
}

// TestShutdownClosesListenerFirst: the listener closes before the drain begins. In the other
// order a client answered Connection: close in between dials again, and a connection the kernel
// has queued but Serve not yet accepted is reset when the listener closes — after the client
// wrote its request on it (a CI run lost four that way in TestDrainAnswersEverySentRequest, and
// a 50 ms pause between the two lost requests in every try).
func TestShutdownClosesListenerFirst(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	drain := server.NewDrain()
	ln := &closeNoter{Listener: raw, drain: drain}
	srv := &http.Server{}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	logger := slog.New(slog.DiscardHandler)
	if err := shutdown(srv, ln, newConnWatch(), drain, time.Second, time.Second, logger, serveErr); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if !ln.closed || ln.drainingAtClose {
		t.Errorf("listener closed: %v; the drain had begun when it closed: %v", ln.closed, ln.drainingAtClose)
	}
	if !drain.Draining() {
		t.Error("the drain never began")
	}
}

// closeNoter notes whether the drain had begun when the listener closed.
type closeNoter struct {
	net.Listener
	drain           *server.Drain
	once            sync.Once
	closed          bool
	drainingAtClose bool
}

func (c *closeNoter) Close() error {
	c.once.Do(func() { c.closed, c.drainingAtClose = true, c.drain.Draining() })
	return c.Listener.Close()
}
