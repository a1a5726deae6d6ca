package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unsafe"

	"mockgateway/internal/catalog"
	"mockgateway/internal/simulation"
)

// loadCatalog has mock-busy: one request served at once, one more waiting.
func loadCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Parse([]byte("models:\n  - {id: mock-busy, kind: mock, behavior: chat, capacity: 1, queue: 1, capabilities: {streaming: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitFor polls a gauge of the harness until it reads want.
func waitFor(t *testing.T, h *harness, name string, want float64) {
	t.Helper()
	for range 500 {
		if metricValue(t, h.metrics, name, map[string]string{"model": "mock-busy"}) == want {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s never read %v", name, want)
}

// post sends a chat request to srv in its own goroutine; the answer's status comes on the
// channel (0: the request failed).
func post(ctx context.Context, srv *httptest.Server, path, body string, header ...string) chan int {
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		_ = resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// TestLoadQueueThenOverloaded: past its capacity a request waits its turn (the wait in its
// access line), past the queue it is refused as overloaded in the dialect's words — OpenAI's
// 503 server_is_overloaded, Anthropic's 529 overloaded_error — and a client that leaves the
// queue gives its place up.
func TestLoadQueueThenOverloaded(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Catalog = loadCatalog(t) })
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	ctx := context.Background()
	slow := []string{"X-Mock-Latency", "ttfc=300ms;between=0ms"}

	first := post(ctx, srv, chatPath, chatBody("mock-busy", ""), slow...)
	waitFor(t, h, "mockgateway_model_running", 1)
	second := post(ctx, srv, chatPath, chatBody("mock-busy", ""))
	waitFor(t, h, "mockgateway_model_queued", 1)

	rr := h.do("POST", chatPath, chatBody("mock-busy", ""))
	e := decodeError(t, rr.Body.Bytes())
	if rr.Code != 503 || e.Code != "server_is_overloaded" || e.Type != "service_unavailable_error" || e.Message != "Our servers are currently overloaded. Please try again later." {
		t.Errorf("OpenAI, past the queue: %d %s", rr.Code, rr.Body)
	}
	if rec := lastAccess(t, h); rec["fault"] != "overloaded" || rec["error_code"] != "server_is_overloaded" {
		t.Errorf("access line: %v", rec)
	}
	rr = h.anthropic(messagesPath, `{"model":"mock-busy","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)
	if rr.Code != 529 || rr.Header().Get("X-Should-Retry") != "true" || !strings.Contains(rr.Body.String(), `"error":{"type":"overloaded_error","message":"Overloaded"}`) {
		t.Errorf("Anthropic, past the queue: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}
	if v := metricValue(t, h.metrics, "mockgateway_quota_refusals_total", map[string]string{"model": "mock-busy", "limit": "overloaded"}); v != 2 {
		t.Errorf("refusals counted: %v", v)
	}
	if s := <-first; s != 200 {
		t.Fatalf("first: %d", s)
	}
	if s := <-second; s != 200 {
		t.Fatalf("second, once it had waited: %d", s)
	}
	waitFor(t, h, "mockgateway_model_running", 0)
	var queued map[string]any
	for _, r := range h.logs.records(t) {
		if r["msg"] == "request" && r["queue_ms"] != nil {
			queued = r
		}
	}
	if queued == nil || queued["queue_ms"].(float64) < 100 || queued["status"].(float64) != 200 {
		t.Errorf("the waiting request's access line: %v", queued)
	}
	waitedSpan := false
	for _, s := range h.spans.GetSpans() {
		if v, ok := attributeKeys(s.Attributes)["mockgateway.simulation.queue_wait_ms"]; ok && v.AsInt64() >= 100 {
			waitedSpan = true
		}
	}
	if !waitedSpan {
		t.Errorf("no chat span carries the queue's wait")
	}

	// A client that leaves the queue gives its place up: the next one may wait there.
	first = post(ctx, srv, chatPath, chatBody("mock-busy", ""), slow...)
	waitFor(t, h, "mockgateway_model_running", 1)
	leaving, leave := context.WithCancel(ctx)
	gone := post(leaving, srv, chatPath, chatBody("mock-busy", ""))
	waitFor(t, h, "mockgateway_model_queued", 1)
	leave()
	<-gone
	waitFor(t, h, "mockgateway_model_queued", 0)
	next := post(ctx, srv, chatPath, chatBody("mock-busy", ""))
	if s, n := <-first, <-next; s != 200 || n != 200 {
		t.Errorf("after a client left the queue: %d, %d", s, n)
	}
	waitFor(t, h, "mockgateway_model_running", 0)
}

// TestLoadedLatency: the latency grows as llm-d-inference-sim models it,
// f = 1 + (F−1)·(running−1)/(capacity−1): unchanged for a request alone, F times at capacity.
func TestLoadedLatency(t *testing.T) {
	g := &loadGate{capacity: 5, factor: 3}
	l := simulation.Latency{FirstChunk: 100 * time.Millisecond, BetweenChunks: 10 * time.Millisecond, Jitter: 2 * time.Millisecond}
	for serving, want := range map[int]simulation.Latency{
		1: l,
		3: {FirstChunk: 200 * time.Millisecond, BetweenChunks: 20 * time.Millisecond, Jitter: 4 * time.Millisecond},
		5: {FirstChunk: 300 * time.Millisecond, BetweenChunks: 30 * time.Millisecond, Jitter: 6 * time.Millisecond},
	} {
		if got := g.loaded(l, serving); got != want {
			t.Errorf("%d serving: %+v, want %+v", serving, got, want)
		}
	}
	if got := (&loadGate{capacity: 5, factor: 0}).loaded(l, 5); got != l {
		t.Errorf("no load_factor: %+v", got)
	}
}

// TestNoLimitsCostNothing: a model without limits or a capacity pays for them with one nil
// pointer in the simulation's decision (held), which keeps the decision, allocated once per
// request, within the size class it had before quotas: its bytes per request are unchanged
// (BenchmarkChatJSON), and so are its allocations (TestRequestAllocations).
func TestNoLimitsCostNothing(t *testing.T) {
	if size := unsafe.Sizeof(simulated{}); size > 160 {
		t.Errorf("the decision is %d bytes: past 160, every request allocates the next size class", size)
	}
}
