package main

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// otlpHTTPReceiver is a minimal OTLP/HTTP trace receiver: it keeps the raw request bodies (to
// search for canaries byte by byte) and the decoded spans.
type otlpHTTPReceiver struct {
	mu     sync.Mutex
	raw    [][]byte
	spans  []*tracepb.Span
	res    map[string]string
	header http.Header
}

func (r *otlpHTTPReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var msg coltracepb.ExportTraceServiceRequest
	if req.URL.Path != "/v1/traces" || proto.Unmarshal(body, &msg) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.raw = append(r.raw, body)
	r.header = req.Header.Clone()
	for _, rs := range msg.GetResourceSpans() {
		r.res = map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			r.res[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func spanAttrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.GetAttributes() {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			m[kv.GetKey()] = v.GetStringValue()
		default:
			m[kv.GetKey()] = strings.Trim(v.String(), " ")
		}
	}
	return m
}

// TestOTLPExportJoinsSignals runs the real service with OTEL_EXPORTER_OTLP_ENDPOINT pointing at
// a receiver started here, makes a traced chat call, and checks that the exported spans carry
// the right attributes, that the request id joins the response header, the log line and the
// span, that the exemplar's trace id is an exported trace, and that no canary was exported.
func TestOTLPExportJoinsSignals(t *testing.T) {
	recv := &otlpHTTPReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	in := startService(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-collector-token=abc",
	})

	canary := "cnryOTLP" + hex.EncodeToString([]byte{1, 2, 3, 4})
	req, _ := http.NewRequest("POST", in.URL+"/v1/chat/completions?x="+canary,
		strings.NewReader(`{"model":"mock-echo","stream":true,"messages":[{"role":"user","content":"`+canary+`"}],"user":"`+canary+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+canary)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(canary)) {
		t.Fatalf("echo did not answer with the message: %s", body)
	}
	requestID := resp.Header.Get("X-Request-Id")

	mreq, _ := http.NewRequest("GET", in.URL+"/metrics", nil)
	mreq.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	mresp, err := http.DefaultClient.Do(mreq)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()

	if err := in.Stop(); err != nil { // flushes the batch exporter
		t.Fatal(err)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if recv.header.Get("X-Collector-Token") != "abc" {
		t.Error("OTEL_EXPORTER_OTLP_HEADERS not sent")
	}
	if recv.res["service.name"] != "mockgateway" || recv.res["service.version"] != version || recv.res["mockgateway.release"] != release {
		t.Errorf("resource = %v", recv.res)
	}
	var server, chat *tracepb.Span
	for _, s := range recv.spans {
		switch s.GetName() {
		case "POST /v1/chat/completions":
			server = s
		case "chat mock-echo":
			chat = s
		}
	}
	if server == nil || chat == nil {
		t.Fatalf("exported spans: %d, missing server or chat span", len(recv.spans))
	}
	if hex.EncodeToString(server.GetTraceId()) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Error("incoming traceparent not continued in the exported span")
	}
	sa, ca := spanAttrs(server), spanAttrs(chat)
	if sa["mockgateway.request_id"] != requestID || sa["http.route"] != "/v1/chat/completions" {
		t.Errorf("server span attributes: %v", sa)
	}
	if ca["gen_ai.request.model"] != "mock-echo" || ca["gen_ai.operation.name"] != "chat" || ca["mockgateway.stream.outcome"] != "completed" {
		t.Errorf("chat span attributes: %v", ca)
	}
	var events []string
	for _, e := range chat.GetEvents() {
		events = append(events, e.GetName())
	}
	if strings.Join(events, ",") != "stream.started,stream.first_chunk,stream.completed" {
		t.Errorf("chat span events: %v", events)
	}

	// The log line of the call joins by request id and trace id.
	var access map[string]any
	for _, r := range in.Logs.Records(t) {
		if r["msg"] == "request" && r["request_id"] == requestID {
			access = r
		}
	}
	if access == nil || access["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" || access["span_id"] != hex.EncodeToString(server.GetSpanId()) {
		t.Errorf("access line %v does not join the span", access)
	}

	// The exemplars name an exported trace.
	m := regexp.MustCompile(`trace_id="([0-9a-f]{32})"`).FindAllStringSubmatch(string(metrics), -1)
	if len(m) == 0 {
		t.Fatal("no exemplar in /metrics")
	}
	exported := map[string]bool{}
	for _, s := range recv.spans {
		exported[hex.EncodeToString(s.GetTraceId())] = true
	}
	for _, x := range m {
		if !exported[x[1]] {
			t.Errorf("exemplar trace %s was not exported", x[1])
		}
	}

	// And nothing the client sent was exported, logged or measured.
	for _, raw := range recv.raw {
		if bytes.Contains(raw, []byte(canary)) {
			t.Error("canary in the OTLP export")
		}
	}
	if strings.Contains(strings.Join(in.Logs.Lines(), "\n"), canary) || bytes.Contains(metrics, []byte(canary)) {
		t.Error("canary in the log or /metrics")
	}
}
