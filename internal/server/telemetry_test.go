package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/observability"
)

func openMetricsText(t *testing.T, m *observability.Metrics) string {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	rr := httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, req)
	if !strings.HasPrefix(rr.Header().Get("Content-Type"), "application/openmetrics-text") {
		t.Fatalf("/metrics did not negotiate OpenMetrics: %q", rr.Header().Get("Content-Type"))
	}
	return rr.Body.String()
}

// attributeKeys lists a span's attribute keys.
func attributeKeys(attrs []attribute.KeyValue) map[string]attribute.Value {
	out := map[string]attribute.Value{}
	for _, a := range attrs {
		out[string(a.Key)] = a.Value
	}
	return out
}

func TestSpans(t *testing.T) {
	h := newHarness(t)
	parent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	rr := h.do("POST", chatPath, chatBody("mock-chat", `"stream":true,"temperature":0.5,"max_tokens":8,"n":2`),
		"Traceparent", parent, "User-Agent", "OpenAI/Go 3.96.0 "+strings.Repeat("x", 200))
	if rr.Code != 200 {
		t.Fatal(rr.Code)
	}
	h.do("GET", "/v1/models/no-such-model", "")
	h.do("GET", "/nope", "")

	spans := h.spans.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (server+chat, server, server)", len(spans))
	}
	var server, chat tracetest.SpanStub
	for _, s := range spans {
		switch s.Name {
		case "POST /v1/chat/completions":
			server = s
		case "chat mock-chat":
			chat = s
		}
	}
	if server.SpanKind != trace.SpanKindServer || chat.SpanKind != trace.SpanKindInternal {
		t.Fatalf("kinds: server %v chat %v", server.SpanKind, chat.SpanKind)
	}
	if server.SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || server.Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("incoming traceparent not continued: trace %s parent %s", server.SpanContext.TraceID(), server.Parent.SpanID())
	}
	if chat.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Error("chat span is not the server span's child")
	}
	sa := attributeKeys(server.Attributes)
	for _, k := range []string{"http.request.method", "http.route", "url.path", "http.response.status_code", "mockgateway.request_id", "client.address", "user_agent.original", "url.scheme", "network.protocol.version"} {
		if _, ok := sa[k]; !ok {
			t.Errorf("server span lacks %s", k)
		}
	}
	if got := sa["mockgateway.request_id"].AsString(); got != rr.Header().Get("X-Request-Id") {
		t.Errorf("request id attribute %q, header %q", got, rr.Header().Get("X-Request-Id"))
	}
	if len(sa["user_agent.original"].AsString()) != 128 {
		t.Errorf("user agent not cut to 128: %d", len(sa["user_agent.original"].AsString()))
	}
	ca := attributeKeys(chat.Attributes)
	want := map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "mockgateway", "gen_ai.request.model": "mock-chat",
		"gen_ai.response.model": "mock-chat", "gen_ai.request.stream": "true", "gen_ai.request.max_tokens": "8",
		"gen_ai.request.temperature": "0.5", "gen_ai.request.choice.count": "2", "mockgateway.stream.outcome": "completed",
	}
	for k, v := range want {
		if got := ca[k].String(); got != v {
			t.Errorf("chat span %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"gen_ai.response.id", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "mockgateway.stream.chunks"} {
		if _, ok := ca[k]; !ok {
			t.Errorf("chat span lacks %s", k)
		}
	}
	for _, s := range spans {
		for _, a := range s.Attributes {
			if !observability.SpanAttributeAllowed(string(a.Key)) {
				t.Errorf("span %s has non-allowlisted attribute %s", s.Name, a.Key)
			}
		}
	}
	// Events in order, exactly one terminal event, carrying the chunk count.
	var names []string
	for _, e := range chat.Events {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "stream.started,stream.first_chunk,stream.completed" {
		t.Errorf("events = %v", names)
	}
	if chunks := attributeKeys(chat.Events[2].Attributes)["mockgateway.stream.chunks"].AsInt64(); chunks != ca["mockgateway.stream.chunks"].AsInt64() || chunks < 4 {
		t.Errorf("terminal event chunks %d", chunks)
	}
	// Failures: error.type on the server span; 4xx leaves the status unset.
	for _, s := range spans {
		a := attributeKeys(s.Attributes)
		switch s.Name {
		case "GET /v1/models/{model}":
			if a["error.type"].AsString() != "model_not_found" || a["url.path"].AsString() != "/v1/models/{model}" || s.Status.Code.String() != "Unset" {
				t.Errorf("model 404 span: %v %v", a, s.Status)
			}
		case "GET":
			if a["error.type"].AsString() != "not_found" {
				t.Errorf("unmatched span: %v", a)
			}
			if _, ok := a["url.path"]; ok {
				t.Error("unmatched span records url.path")
			}
		}
	}
}

func TestMetricsAfterKnownTraffic(t *testing.T) {
	h := newHarness(t)
	// 3 JSON chats, 2 streams with usage, 1 error.
	for i := 0; i < 3; i++ {
		h.do("POST", chatPath, chatBody("mock-echo", ""))
	}
	var chunks int
	var outputTokens int
	for i := 0; i < 2; i++ {
		rr := h.do("POST", chatPath, chatBody("mock-chat", `"stream":true,"stream_options":{"include_usage":true}`))
		frames := sseFrames(t, rr.Body.String())
		chunks += len(frames) - 1 // all but [DONE]
		var last struct {
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		_ = json.Unmarshal([]byte(frames[len(frames)-2]), &last)
		outputTokens += last.Usage.CompletionTokens
	}
	h.do("POST", chatPath, chatBody("nope", ""))

	echoOut := 3 * 3 // "echo:", " hello", " there"
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mockgateway_http_requests_total", map[string]string{"route": chatPath, "status_code": "200", "error_code": "none"}, 5},
		{"mockgateway_http_requests_total", map[string]string{"route": chatPath, "status_code": "404", "error_code": "model_not_found"}, 1},
		{"mockgateway_chat_completions_total", map[string]string{"model": "mock-echo", "stream": "false", "finish_reason": "stop"}, 3},
		{"mockgateway_chat_completions_total", map[string]string{"model": "mock-chat", "stream": "true"}, 2},
		{"mockgateway_chat_completions_total", map[string]string{"model": "other", "error_code": "model_not_found"}, 1},
		{"mockgateway_tokens_total", map[string]string{"model": "mock-echo", "type": "output"}, float64(echoOut)},
		{"mockgateway_tokens_total", map[string]string{"model": "mock-chat", "type": "output"}, float64(outputTokens)},
		{"mockgateway_stream_events_total", map[string]string{"model": "mock-chat", "event": "started"}, 2},
		{"mockgateway_stream_events_total", map[string]string{"model": "mock-chat", "event": "completed"}, 2},
		{"mockgateway_stream_chunks", map[string]string{"model": "mock-chat", "outcome": "completed"}, 2},
		{"mockgateway_streams_active", nil, 0},
		{"mockgateway_http_requests_in_flight", nil, 0},
		{"mockgateway_build_info", map[string]string{"version": "4.2.0", "release": "Gateway Foundation"}, 1},
	}
	for _, c := range checks {
		if got := metricValue(t, h.metrics, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The chunk histogram's sum is exactly the chunks the streams sent.
	mfs, _ := h.metrics.Registry().Gather()
	for _, mf := range mfs {
		if mf.GetName() == "mockgateway_stream_chunks" {
			sum := 0.0
			for _, m := range mf.GetMetric() {
				sum += m.GetHistogram().GetSampleSum()
			}
			if int(sum) != chunks {
				t.Errorf("chunk histogram sum %v, streams sent %d", sum, chunks)
			}
		}
	}
	problems, err := testutil.GatherAndLint(h.metrics.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "mockgateway_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	text := openMetricsText(t, h.metrics)
	if !strings.Contains(text, `# {trace_id="`) {
		t.Error("no exemplar with a trace_id in the OpenMetrics output")
	}
}

func TestModelLabelCardinality(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 1000; i++ {
		h.do("POST", chatPath, chatBody(fmt.Sprintf("random-model-%d-%x", i, rand.Uint64()), ""))
	}
	mfs, _ := h.metrics.Registry().Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "model" && strings.HasPrefix(lp.GetValue(), "random-model") {
					t.Fatalf("%s has a client model name as label", mf.GetName())
				}
			}
		}
		if n := len(mf.GetMetric()); n > 200 {
			t.Errorf("%s has %d series after 1000 random model names", mf.GetName(), n)
		}
	}
	if got := metricValue(t, h.metrics, "mockgateway_chat_completions_total", map[string]string{"model": "other"}); got != 1000 {
		t.Errorf("other = %v", got)
	}
}

func TestAccessLog(t *testing.T) {
	h := newHarness(t)
	rr := h.do("POST", chatPath, chatBody("mock-echo", `"stream":true`))
	h.do("GET", "/health", "")
	time.Sleep(10 * time.Millisecond)
	var access []map[string]any
	for _, r := range h.logs.records(t) {
		if r["msg"] == "request" {
			access = append(access, r)
		}
	}
	if len(access) != 2 {
		t.Fatalf("%d access lines for 2 requests", len(access))
	}
	a := access[0]
	for _, k := range []string{"time", "level", "request_id", "trace_id", "span_id", "method", "route", "status", "error_code", "duration_ms", "model", "stream", "stream_outcome", "chunks", "prompt_tokens", "completion_tokens"} {
		if _, ok := a[k]; !ok {
			t.Errorf("access line lacks %s: %v", k, a)
		}
	}
	if a["request_id"] != rr.Header().Get("X-Request-Id") {
		t.Errorf("log request_id %v, header %s", a["request_id"], rr.Header().Get("X-Request-Id"))
	}
	found := false
	for _, s := range h.spans.GetSpans() {
		if s.Name != "POST /v1/chat/completions" || attributeKeys(s.Attributes)["mockgateway.request_id"].AsString() != a["request_id"] {
			continue
		}
		found = true
		if a["trace_id"] != s.SpanContext.TraceID().String() || a["span_id"] != s.SpanContext.SpanID().String() {
			t.Errorf("log trace %v/%v, span %s/%s", a["trace_id"], a["span_id"], s.SpanContext.TraceID(), s.SpanContext.SpanID())
		}
	}
	if !found {
		t.Errorf("no server span carries the access line's request id %v", a["request_id"])
	}
	for k := range a {
		if !observability.LogFieldAllowed(k) {
			t.Errorf("log field %s is not allowlisted", k)
		}
	}
}

func TestDebugTraces(t *testing.T) {
	h := newHarness(t)
	rr := h.do("POST", chatPath, chatBody("mock-echo", ""))
	id := rr.Header().Get("X-Request-Id")
	got := h.do("GET", "/debug/traces?request_id="+id, "")
	var body struct {
		Count int                        `json:"count"`
		Spans []observability.SpanRecord `json:"spans"`
	}
	if err := json.Unmarshal(got.Body.Bytes(), &body); err != nil || body.Count != 2 {
		t.Fatalf("debug traces by request id: %s", got.Body.String())
	}
	trace := body.Spans[0].TraceID
	got = h.do("GET", "/debug/traces?trace_id="+trace, "")
	_ = json.Unmarshal(got.Body.Bytes(), &body)
	if body.Count != 2 {
		t.Errorf("by trace id: %d spans", body.Count)
	}
	checkError(t, h.do("GET", "/debug/traces?trace_id=xyz", ""), 400, "invalid_value", "trace_id")
	checkError(t, h.do("GET", "/debug/traces?request_id=a%20b", ""), 400, "invalid_value", "request_id")
}
