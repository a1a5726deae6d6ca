package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect/chat"
	"mockgateway/observability"
)

func TestSimulatedFaultsBeforeOutput(t *testing.T) {
	h := newHarness(t)
	rows := []struct {
		fault, code string
		status      int
		headers     []string
	}{
		{"rate_limit;retry_after=2s", "simulated_rate_limit", 429, []string{"Retry-After", "Retry-After-Ms", "X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests", "X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"}},
		{"server_error", "simulated_server_error", 500, nil},
		{"unavailable", "simulated_unavailable", 503, []string{"Retry-After", "Retry-After-Ms"}},
		{"timeout;for=30ms", "simulated_timeout", 504, nil},
		{"stream_error", "simulated_stream_error", 500, nil}, // on a request that does not stream
	}
	for _, row := range rows {
		t.Run(row.fault, func(t *testing.T) {
			before := metricValue(t, h.metrics, "mockgateway_simulated_faults_total", map[string]string{"model": "mock-chat", "fault": strings.Split(row.fault, ";")[0]})
			rr := h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", row.fault)
			checkError(t, rr, row.status, row.code, "")
			for _, name := range row.headers {
				if rr.Header().Get(name) == "" {
					t.Errorf("missing %s", name)
				}
			}
			after := metricValue(t, h.metrics, "mockgateway_simulated_faults_total", map[string]string{"model": "mock-chat", "fault": strings.Split(row.fault, ";")[0]})
			if after != before+1 {
				t.Errorf("faults_total %v → %v", before, after)
			}
			rec := lastAccess(t, h)
			if rec["fault"] != strings.Split(row.fault, ";")[0] || rec["error_code"] != row.code {
				t.Errorf("access log: %v", rec)
			}
		})
	}
	if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "rate_limit;retry_after=2s"); rr.Header().Get("Retry-After") != "2" || rr.Header().Get("Retry-After-Ms") != "2000" || rr.Header().Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Errorf("rate-limit headers: %v", rr.Header())
	}
	// The span carries the fault as an event.
	found := false
	for _, s := range h.spans.GetSpans() {
		for _, e := range s.Events {
			if e.Name == "simulation.fault" && attributeKeys(e.Attributes)["mockgateway.simulation.fault"].AsString() == "rate_limit" && attributeKeys(e.Attributes)["simulated"].AsBool() {
				found = true
			}
		}
	}
	if !found {
		t.Error("no simulation.fault span event")
	}
}

func lastAccess(t *testing.T, h *harness) map[string]any {
	t.Helper()
	var last map[string]any
	for _, r := range h.logs.records(t) {
		if r["msg"] == "request" {
			last = r
		}
	}
	return last
}

func TestFailFirstAttempts(t *testing.T) {
	h := newHarness(t)
	for attempt, want := range map[string]int{"1": 429, "2": 429, "3": 200} {
		if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "rate_limit;attempts=2", "X-Mock-Attempt", attempt); rr.Code != want {
			t.Errorf("x-mock-attempt %s: %d, want %d", attempt, rr.Code, want)
		}
	}
	for retry, want := range map[string]int{"0": 503, "1": 200} {
		if rr := h.do("POST", chatPath, chatBody("mock-flaky", ""), "X-Stainless-Retry-Count", retry); rr.Code != want {
			t.Errorf("mock-flaky with x-stainless-retry-count %s: %d, want %d", retry, rr.Code, want)
		}
	}
}

func TestSimulationHeaderErrors(t *testing.T) {
	h := newHarness(t)
	checkError(t, h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "explode"), 400, "invalid_simulation_header", "X-Mock-Fault")
	checkError(t, h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "rate_limit;attempts=many"), 400, "invalid_simulation_header", "X-Mock-Fault")
	checkError(t, h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Latency", "glacial"), 400, "invalid_simulation_header", "X-Mock-Latency")
	checkError(t, h.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Attempt", "first"), 400, "invalid_simulation_header", "X-Mock-Attempt")

	off := newHarness(t, func(d *Deps) { d.Config.AllowSimulationHeaders = false })
	if rr := off.do("POST", chatPath, chatBody("mock-chat", ""), "X-Mock-Fault", "explode"); rr.Code != 200 {
		t.Errorf("headers switched off: %d", rr.Code)
	}
	// The catalog still decides, following the SDKs' retry counter.
	if rr := off.do("POST", chatPath, chatBody("mock-flaky", "")); rr.Code != 503 {
		t.Errorf("mock-flaky with headers off: %d", rr.Code)
	}
}

func TestGatewayPolicyReported(t *testing.T) {
	h := newHarness(t)
	rr := h.do("POST", chatPath, chatBody("mock-gateway", ""))
	if rr.Code != 200 {
		t.Fatalf("%d %s", rr.Code, rr.Body.String())
	}
	hd := rr.Header()
	if hd.Get("X-Mock-Gateway-Attempts") != "3" || hd.Get("X-Mock-Gateway-Served-By") != "mock-chat" || hd.Get("X-Mock-Gateway-Fallback-From") != "mock-gateway" {
		t.Errorf("decision headers: %v", hd)
	}
	if !strings.Contains(rr.Body.String(), `"model":"mock-chat"`) {
		t.Errorf("served by: %s", rr.Body.String())
	}
	// The answer is mock-chat's own answer to the same request.
	direct := h.do("POST", chatPath, chatBody("mock-chat", ""))
	if strings.Join(contentOf(t, rr.Body.Bytes()), "") != strings.Join(contentOf(t, direct.Body.Bytes()), "") {
		t.Error("the fallback's answer differs from mock-chat's")
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mockgateway_simulated_retries_total", map[string]string{"model": "mock-gateway", "fault": "server_error"}, 2},
		{"mockgateway_simulated_fallbacks_total", map[string]string{"model": "mock-gateway", "target": "gpt-4o"}, 1},
		{"mockgateway_simulated_fallbacks_total", map[string]string{"model": "mock-gateway", "target": "mock-chat"}, 1},
		{"mockgateway_simulated_faults_total", map[string]string{"model": "mock-gateway"}, 0},
	}
	for _, c := range checks {
		if got := metricValue(t, h.metrics, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	var events []string
	for _, s := range h.spans.GetSpans() {
		if s.Name != "chat mock-gateway" {
			continue
		}
		for _, e := range s.Events {
			a := attributeKeys(e.Attributes)
			if !a["simulated"].AsBool() {
				t.Errorf("event %s not marked simulated", e.Name)
			}
			events = append(events, e.Name+":"+a["mockgateway.gateway.to"].AsString()+a["mockgateway.gateway.result"].AsString())
		}
	}
	want := "gateway.retry:,gateway.retry:,gateway.fallback:gpt-4ometadata_only_not_executed,gateway.fallback:mock-chatserved"
	if strings.Join(events, ",") != want {
		t.Errorf("events %v, want %s", events, want)
	}
	recs := h.logs.records(t)
	rec := recs[len(recs)-2] // the mock-gateway call, before the direct one
	if rec["attempts"] != 3.0 || rec["served_by"] != "mock-chat" || rec["fallback_from"] != "mock-gateway" {
		t.Errorf("access log: %v", rec)
	}
	// The same policy gives the same decision.
	again := h.do("POST", chatPath, chatBody("mock-gateway", ""))
	for _, k := range []string{"X-Mock-Gateway-Attempts", "X-Mock-Gateway-Served-By", "X-Mock-Gateway-Fallback-From"} {
		if again.Header().Get(k) != hd.Get(k) {
			t.Errorf("%s differs between two identical requests", k)
		}
	}
	// A header fault on a model with a policy: attempts=1 is absorbed by the first retry.
	rr = h.do("POST", chatPath, chatBody("mock-gateway", ""), "X-Mock-Fault", "unavailable;attempts=1")
	if rr.Code != 200 || rr.Header().Get("X-Mock-Gateway-Attempts") != "2" || rr.Header().Get("X-Mock-Gateway-Served-By") != "mock-gateway" {
		t.Errorf("recovered by retry: %d %v", rr.Code, rr.Header())
	}
}

func TestMidStreamFaults(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()

	// stream_error: 2 chunks, an error frame, [DONE]; outcome aborted.
	rr := h.do("POST", chatPath, chatBody("mock-chat", `"stream":true`), "X-Mock-Fault", "stream_error;after=2")
	frames := sseFrames(t, rr.Body.String())
	if len(frames) != 4 || frames[3] != "[DONE]" || !strings.Contains(frames[2], `"code":"simulated_stream_error"`) {
		t.Fatalf("stream_error frames: %v", frames)
	}
	rec := lastAccess(t, h)
	if rec["stream_outcome"] != "aborted" || rec["fault"] != "stream_error" || rec["chunks"] != 2.0 {
		t.Errorf("stream_error log: %v", rec)
	}

	// stream_cut: 3 chunks, then the connection drops: no [DONE], and the client sees a broken body.
	req, _ := http.NewRequest("POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-chat", `"stream":true`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Mock-Fault", "stream_cut;after=3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut stream read error = %v, want unexpected EOF", err)
	}
	if strings.Count(string(body), "data: ") != 3 || strings.Contains(string(body), "[DONE]") {
		t.Errorf("cut stream body: %q", body)
	}
	rec = waitForLog(t, h.logs, func(m map[string]any) bool { return m["fault"] == "stream_cut" })
	if rec["stream_outcome"] != "aborted" {
		t.Errorf("stream_cut log: %v", rec)
	}
	if got := metricValue(t, h.metrics, "mockgateway_stream_events_total", map[string]string{"model": "mock-chat", "event": "aborted"}); got != 2 {
		t.Errorf("aborted stream events = %v", got)
	}

	// stream_cut on a JSON request: half a body, then the connection drops.
	req, _ = http.NewRequest("POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-chat", "")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Mock-Fault", "stream_cut")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut JSON read error = %v", err)
	}
}

func TestLatencyProfiles(t *testing.T) {
	h := newHarness(t)
	start := time.Now()
	if rr := h.do("POST", chatPath, chatBody("mock-echo", ""), "X-Mock-Latency", "ttfc=80ms;between=10ms"); rr.Code != 200 {
		t.Fatal(rr.Code)
	}
	// echo "hello there": 3 tokens → 80ms + 3 × 10ms.
	if el := time.Since(start); el < 110*time.Millisecond {
		t.Errorf("JSON answered after %v, before its simulated latency", el)
	}
	if rr := h.do("POST", chatPath, chatBody("mock-echo", ""), "X-Mock-Latency", "instant"); rr.Code != 200 {
		t.Fatal(rr.Code)
	}
}

// TestJitterIsSeededByTheBody: the latency schedule is seeded by the request's bytes, so the
// same request waits the same and another request waits differently (TestTimingsAreSeededByTheRequest
// covers what a seed makes of the schedule). No clock is read: a shared machine's scheduler
// would decide a timing assertion.
func TestJitterIsSeededByTheBody(t *testing.T) {
	h := newChatHandler(withState(Deps{Config: testConfig(), Catalog: catalog.Builtin()}), chat.New(nil)).(*takesBody).next.(*chatHandler)
	seedOf := func(body string) uint64 {
		t.Helper()
		req := httptest.NewRequest("POST", chatPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if err := readBody(httptest.NewRecorder(), req, 1<<20); err != nil { // v1Guard's part
			t.Fatal(err)
		}
		_, facts, err := h.decode(req, observability.RecordFrom(req.Context()))
		if err != nil {
			t.Fatal(err)
		}
		return facts.seed
	}
	a := chatBody("mock-echo", `"stream":true`)
	if first, again := seedOf(a), seedOf(a); first != again {
		t.Error("the same request got two seeds")
	}
	if seedOf(a) == seedOf(chatBody("mock-chat", `"stream":true`)) {
		t.Error("two requests got one seed")
	}
}

func TestCatalogSimulationSettings(t *testing.T) {
	c, err := catalog.Parse([]byte(`models:
  - id: mock-a
    kind: mock
    behavior: chat
    capabilities: {streaming: true, tools: false}
    latency: fast
    fault: "rate_limit;attempts=1;retry_after=10ms"
    gateway: {retries: 0, fallback: [ext, mock-b]}
  - {id: mock-b, kind: mock, behavior: echo, capabilities: {streaming: true, tools: false}}
  - {id: ext, kind: external, provider: acme, capabilities: {streaming: true, tools: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) { d.Catalog = c })
	rr := h.do("POST", chatPath, chatBody("mock-a", ""))
	if rr.Code != 200 || rr.Header().Get("X-Mock-Gateway-Served-By") != "mock-b" || !strings.Contains(rr.Body.String(), "echo: hello there") {
		t.Errorf("catalog fault with policy: %d %v %s", rr.Code, rr.Header(), rr.Body.String())
	}
	for _, bad := range []string{
		"models:\n  - {id: a, kind: mock, behavior: chat, fault: explode}\n",
		"models:\n  - {id: a, kind: mock, behavior: chat, latency: glacial}\n",
		"models:\n  - {id: a, kind: mock, behavior: chat, gateway: {retries: 1, fallback: [nope]}}\n",
		"models:\n  - {id: a, kind: mock, behavior: chat, gateway: {retries: 99}}\n",
	} {
		if _, err := catalog.Parse([]byte(bad)); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
}

// TestFaultedStreamCountsWhatItSent: a stream struck after its last token holds that token until
// it ends, and still writes it — before the error frame, or before the cut — so its access line
// counts every token the client got.
func TestFaultedStreamCountsWhatItSent(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	// mock-echo answers "hello there" in three tokens: role chunk, 3 tokens, then the finish
	// chunk, which after=4 strikes.
	for _, fault := range []string{"stream_error;after=4", "stream_cut;after=4"} {
		req, _ := http.NewRequest("POST", srv.URL+chatPath, strings.NewReader(chatBody("mock-echo", `"stream":true`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Fault", fault)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strings.Count(string(body), `"content":"`) - 1; got != 3 { // less the role chunk's ""
			t.Errorf("%s: the client got %d tokens, want 3:\n%s", fault, got, body)
		}
		kind, _, _ := strings.Cut(fault, ";")
		rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["fault"] == kind })
		if rec["completion_tokens"] != 3.0 {
			t.Errorf("%s: access line completion_tokens %v, want the 3 sent", fault, rec["completion_tokens"])
		}
	}
}
