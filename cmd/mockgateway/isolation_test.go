package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counter sums the samples of a metric in /metrics whose labels include the given ones.
func counter(t *testing.T, url, name string, labels map[string]string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		end := strings.Index(rest, "} ")
		if end < 0 {
			continue
		}
		for k, v := range labels {
			if !strings.Contains(","+rest[:end]+",", ","+k+`="`+v+`",`) {
				continue lines
			}
		}
		f, err := strconv.ParseFloat(strings.Fields(rest[end+2:])[0], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += f
	}
	return sum
}

// rawPost sends a chat request on a connection of its own and returns it unread.
func rawPost(t *testing.T, addr, requestID, body string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		requestID, len(body), body)
	return c
}

// waitForLogs waits until every request id has its access line and returns them by id.
func waitForLogs(t *testing.T, in *instance, ids []string, within time.Duration) map[string]map[string]any {
	t.Helper()
	found := map[string]map[string]any{}
	for deadline := time.Now().Add(within); ; {
		for _, r := range in.Logs.Records(t) {
			if id, _ := r["request_id"].(string); r["msg"] == "request" && id != "" {
				found[id] = r
			}
		}
		missing := 0
		for _, id := range ids {
			if found[id] == nil {
				missing++
			}
		}
		if missing == 0 {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests have no access line within %v:\n%s", missing, len(ids), within, strings.Join(in.Logs.Lines(), "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWriteTimeoutReleasesStalledClients: clients that send a request and never read the answer
// hold every concurrency slot, each with megabytes of answer in hand. The write timeout cuts
// each of them — a JSON answer as a whole, a stream on its next write — their log lines and
// metrics say why, and the slots, goroutines and memory come back: a fresh request is served.
// Simulated latency longer than the write timeout is waiting, not writing, and is not cut.
func TestWriteTimeoutReleasesStalledClients(t *testing.T) {
	catalogPath := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(catalogPath, []byte(hostileCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	in := startService(t, nil, "--catalog", catalogPath, "--write-timeout", "2s", "--max-concurrent", "8")
	addr := strings.TrimPrefix(in.URL, "http://")
	tr := &http.Transport{DisableKeepAlives: true}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	if code, _ := post(t, client, in.URL, `{"model":"mock-echo","messages":[{"role":"user","content":"warm up"}]}`); code != 200 {
		t.Fatalf("warm-up: %d", code)
	}
	baseline := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapAlloc

	// n=128 of a 4096-token model: about 3.5 MB of JSON. The kernel takes up to about 4 MB of
	// an answer nobody reads (the send buffer grows to net.ipv4.tcp_wmem's maximum), so each
	// JSON client sends three requests at once (HTTP/1.1 pipelining) and reads none of the
	// answers: the first fills the buffers, the next cannot be written.
	const jsonBody = `{"model":"mock-long","n":128,"messages":[{"role":"user","content":"x"}]}`
	const streamBody = `{"model":"mock-long","n":16,"stream":true,"messages":[{"role":"user","content":"x"}]}`
	var conns []net.Conn
	for i := range 6 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: stalled-json-%d-%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				i, k, len(jsonBody), jsonBody)
		}
		conns = append(conns, c)
	}
	var streamIDs []string
	for i := range 2 {
		id := fmt.Sprintf("stalled-stream-%d", i)
		streamIDs = append(streamIDs, id)
		conns = append(conns, rawPost(t, addr, id, streamBody))
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	// Nobody reads: each is released by the write timeout alone. Each JSON client's connection
	// ends with one answer cut (the ones before it went into the socket buffers; the ones after
	// it are never read).
	cut := map[string]map[string]any{} // the JSON client's number → its answer that was not taken
	for deadline := time.Now().Add(60 * time.Second); len(cut) < 6; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 6 JSON clients were cut:\n%s", len(cut), strings.Join(in.Logs.Lines(), "\n"))
		}
		for _, r := range in.Logs.Records(t) {
			id, _ := r["request_id"].(string)
			if rest, ok := strings.CutPrefix(id, "stalled-json-"); ok && r["status"] != float64(200) {
				cut[rest[:1]] = r
			}
		}
	}
	for _, r := range cut {
		if r["status"] != float64(499) || r["error_code"] != "request_timeout" {
			t.Errorf("%s: status %v error_code %v, want 499 request_timeout", r["request_id"], r["status"], r["error_code"])
		}
	}
	recs := waitForLogs(t, in, streamIDs, 60*time.Second)
	for _, id := range streamIDs {
		r := recs[id]
		if r["stream_outcome"] != "timed_out" || r["error_code"] != "request_timeout" || r["status"] != float64(200) {
			t.Errorf("%s: status %v outcome %v error_code %v, want 200 timed_out request_timeout", id, r["status"], r["stream_outcome"], r["error_code"])
		}
	}
	if n := counter(t, in.URL, "mockgateway_http_requests_total", map[string]string{"status_code": "499", "error_code": "request_timeout"}); n != 6 {
		t.Errorf("requests counted 499 request_timeout: %v, want 6", n)
	}
	if n := counter(t, in.URL, "mockgateway_stream_events_total", map[string]string{"model": "mock-long", "event": "timed_out"}); n != 2 {
		t.Errorf("streams counted timed_out: %v, want 2", n)
	}
	// The server closed each connection: the client finds its end of it closed after what
	// the buffers held.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("connection %d was not closed by the server: %v", i, err)
		}
	}

	// Every slot is free again.
	if code, errCode := post(t, client, in.URL, `{"model":"mock-echo","messages":[{"role":"user","content":"my turn"}]}`); code != 200 {
		t.Fatalf("a fresh request after the stalled clients: %d %s", code, errCode)
	}

	// Waiting is not writing: latency longer than the write timeout is served in full.
	var slow sync.WaitGroup
	for _, stream := range []bool{false, true} {
		slow.Add(1)
		go func() {
			defer slow.Done()
			req, _ := http.NewRequest("POST", in.URL+"/v1/chat/completions",
				strings.NewReader(fmt.Sprintf(`{"model":"mock-chat","stream":%v,"max_tokens":2,"messages":[{"role":"user","content":"slow"}]}`, stream)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Mock-Latency", "ttfc=2500ms;between=2500ms")
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("slow answer (stream %v): %v", stream, err)
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			complete := bytes.Contains(b, []byte(`"finish_reason":"length"`))
			if stream {
				complete = complete && bytes.HasSuffix(b, []byte("data: [DONE]\n\n"))
			}
			if err != nil || resp.StatusCode != 200 || !complete {
				t.Errorf("slow answer (stream %v) cut: %d %v %.200s", stream, resp.StatusCode, err, b)
			}
		}()
	}
	slow.Wait()

	for _, c := range conns {
		c.Close()
	}
	tr.CloseIdleConnections()
	settle(t, baseline)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapAlloc) - int64(heapBefore); grew > 32<<20 {
		t.Errorf("heap grew by %d MiB after the stalled clients were cut", grew>>20)
	}
}

// TestTricklingBodiesHoldNoSlot: with four slots, eight clients trickle their bodies. None of
// them holds a slot while its body is coming, so a normal request is served meanwhile; each of
// them gets 408 request_timeout at the read timeout, with an x-request-id, logged and counted.
func TestTricklingBodiesHoldNoSlot(t *testing.T) {
	in := startService(t, nil, "--max-concurrent", "4", "--read-header-timeout", "2s", "--read-timeout", "3s")
	addr := strings.TrimPrefix(in.URL, "http://")
	idle := gauge(t, in.URL, "mockgateway_http_requests_in_flight")

	const tricklers = 8
	var answered atomic.Int32 // trickling clients answered so far
	type answer struct {
		status int
		id     string
		body   string
		err    error
	}
	answers := make(chan answer, tricklers)
	var wg sync.WaitGroup
	for i := range tricklers {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: trickle-%d\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":", i)
		stop := make(chan struct{})
		wg.Add(1)
		go func() { // a byte every 200 ms: the body would take minutes
			defer wg.Done()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		go func() {
			defer close(stop)
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			answered.Add(1)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{status: resp.StatusCode, id: resp.Header.Get("X-Request-Id"), body: string(b)}
		}()
	}
	// All eight are past their headers, in their handlers, reading.
	for deadline := time.Now().Add(20 * time.Second); gauge(t, in.URL, "mockgateway_http_requests_in_flight") < idle+tricklers; {
		if time.Now().After(deadline) {
			t.Fatal("the trickling requests never all arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	code, errCode := post(t, client, in.URL, `{"model":"mock-echo","messages":[{"role":"user","content":"not trickling"}]}`)
	early := answered.Load()
	if code != 200 {
		t.Errorf("a normal request beside %d trickling bodies and 4 slots: %d %s", tricklers, code, errCode)
	}
	if early != 0 {
		t.Logf("%d trickling clients were answered before the normal request: the check proved less than it should", early)
	}

	for range tricklers {
		a := <-answers
		if a.err != nil {
			t.Errorf("trickling client: no answer: %v", a.err)
			continue
		}
		if a.status != 408 || !strings.Contains(a.body, `"code":"request_timeout"`) || !strings.HasPrefix(a.id, "trickle-") {
			t.Errorf("trickling client: %d x-request-id %q %s", a.status, a.id, a.body)
		}
	}
	wg.Wait()
	var ids []string
	for i := range tricklers {
		ids = append(ids, fmt.Sprintf("trickle-%d", i))
	}
	for id, r := range waitForLogs(t, in, ids, 10*time.Second) {
		if strings.HasPrefix(id, "trickle-") && (r["status"] != float64(408) || r["error_code"] != "request_timeout") {
			t.Errorf("%s logged as %v %v", id, r["status"], r["error_code"])
		}
	}
	if n := counter(t, in.URL, "mockgateway_http_requests_total", map[string]string{"route": "/v1/chat/completions", "status_code": "408", "error_code": "request_timeout"}); n != tricklers {
		t.Errorf("408 request_timeout counted %v times, want %d", n, tricklers)
	}
}

// TestOptionsStarIsTheServices: "OPTIONS *" is not answered by net/http on the service's behalf
// (a bare 200 with no request id, not logged, not counted): it goes through the handler chain
// and, matching no route, is 404 not_found like any unknown path.
func TestOptionsStarIsTheServices(t *testing.T) {
	in := startService(t, nil)
	c, err := net.Dial("tcp", strings.TrimPrefix(in.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "OPTIONS * HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: options-star\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("X-Request-Id") != "options-star" || !strings.Contains(string(b), `"code":"not_found"`) {
		t.Errorf("OPTIONS *: %d x-request-id %q %s", resp.StatusCode, resp.Header.Get("X-Request-Id"), b)
	}
	r := waitForLogs(t, in, []string{"options-star"}, 10*time.Second)["options-star"]
	if r["method"] != "OPTIONS" || r["route"] != "unmatched" || r["status"] != float64(404) || r["error_code"] != "not_found" {
		t.Errorf("OPTIONS * logged as %v", r)
	}
	if n := counter(t, in.URL, "mockgateway_http_requests_total", map[string]string{"route": "unmatched", "method": "OPTIONS", "status_code": "404", "error_code": "not_found"}); n != 1 {
		t.Errorf("OPTIONS * counted %v times, want 1", n)
	}
}
