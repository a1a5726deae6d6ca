package observability

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

const envCanary = "canary-c0ffee"

// fakeEnv is a getenv over a map, so tests never depend on (or change) the process environment.
func fakeEnv(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

var testTracingConfig = TracingConfig{ServiceVersion: "4.2.0", Release: "Gateway Foundation", BufferSize: 16}

func newTestTracing(t *testing.T, env map[string]string) *Tracing {
	t.Helper()
	tr, err := NewTracing(context.Background(), fakeEnv(env), testTracingConfig)
	if err != nil {
		t.Fatalf("NewTracing: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tr.Shutdown(ctx)
	})
	return tr
}

func TestTracingDefaultIsEmbedded(t *testing.T) {
	tr := newTestTracing(t, nil)
	if tr.Exporter != ExporterEmbedded || tr.Sampler != "parentbased_always_on" {
		t.Errorf("Exporter, Sampler = %q, %q; want embedded, parentbased_always_on", tr.Exporter, tr.Sampler)
	}
	_, span := tr.Provider.Tracer("test").Start(context.Background(), "GET /v1/models",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.route", "/v1/models"),
			attribute.String("gen_ai.input.messages", envCanary),
		))
	span.End()

	// The buffer sits behind a synchronous processor: the span is there as soon as it ended,
	// and it went through the redacting exporter on the way.
	got := tr.Buffer.Query(SpanFilter{})
	if len(got) != 1 {
		t.Fatalf("buffer holds %d spans, want 1", len(got))
	}
	if got[0].Attributes["http.route"] != "/v1/models" || got[0].Kind != "server" {
		t.Errorf("record = %+v", got[0])
	}
	if _, ok := got[0].Attributes["gen_ai.input.messages"]; ok {
		t.Error("forbidden attribute reached the span buffer")
	}
}

func TestTracingSamplers(t *testing.T) {
	for _, tc := range []struct {
		sampler, arg string
		wantName     string
		recorded     bool
	}{
		{"", "", "parentbased_always_on", true},
		{"always_on", "", "always_on", true},
		{"ALWAYS_OFF", "", "always_off", false},
		{"parentbased_always_off", "", "parentbased_always_off", false},
		{"traceidratio", "0", "traceidratio:0", false},
		{"traceidratio", "", "traceidratio:1", true},
		{"parentbased_traceidratio", "1", "parentbased_traceidratio:1", true},
		{"parentbased_traceidratio", "0.25", "parentbased_traceidratio:0.25", false /* not checked */},
	} {
		tr := newTestTracing(t, map[string]string{"OTEL_TRACES_SAMPLER": tc.sampler, "OTEL_TRACES_SAMPLER_ARG": tc.arg})
		if tr.Sampler != tc.wantName {
			t.Errorf("sampler %q arg %q: Sampler = %q, want %q", tc.sampler, tc.arg, tr.Sampler, tc.wantName)
		}
		if tc.arg == "0.25" {
			continue // sampling outcome depends on the random trace id
		}
		_, span := tr.Provider.Tracer("test").Start(context.Background(), "s")
		span.End()
		if (tr.Buffer.Len() == 1) != tc.recorded {
			t.Errorf("sampler %q arg %q: buffered %d spans, want recorded=%v", tc.sampler, tc.arg, tr.Buffer.Len(), tc.recorded)
		}
	}
}

func TestTracingExporterSelection(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"nothing set", nil, ExporterEmbedded},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, ExporterOTLPHTTP},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector.example/v1/traces"}, ExporterOTLPHTTP},
		{"none wins over endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, ExporterEmbedded},
		{"otlp without endpoint uses the default", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, ExporterOTLPHTTP},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ExporterOTLPGRPC},
		{"grpc host:port", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, ExporterOTLPGRPC},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, ExporterOTLPHTTP},
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_SAMPLER": "ignored"}, ExporterDisabled},
		{"headers, timeout, compression", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":    "http://127.0.0.1:1",
			"OTEL_EXPORTER_OTLP_HEADERS":     "api-key=abc%20def, x-tenant = t1",
			"OTEL_EXPORTER_OTLP_TIMEOUT":     "2500",
			"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
			"OTEL_BSP_SCHEDULE_DELAY":        "100",
		}, ExporterOTLPHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracing(t, tc.env)
			if tr.Exporter != tc.want {
				t.Errorf("Exporter = %q, want %q", tr.Exporter, tc.want)
			}
		})
	}
}

func TestTracingDisabledRecordsNothing(t *testing.T) {
	tr := newTestTracing(t, map[string]string{"OTEL_SDK_DISABLED": "true"})
	_, span := tr.Provider.Tracer("test").Start(context.Background(), "s")
	if span.IsRecording() {
		t.Error("span records with the SDK disabled")
	}
	span.End()
	if tr.Buffer == nil || tr.Buffer.Len() != 0 {
		t.Errorf("buffer = %v, want present and empty", tr.Buffer)
	}
}

func TestTracingRejectsBadValues(t *testing.T) {
	const endpoint = "http://127.0.0.1:1"
	for _, tc := range []struct {
		variable string
		env      map[string]string
	}{
		{"OTEL_SDK_DISABLED", map[string]string{"OTEL_SDK_DISABLED": envCanary}},
		{"OTEL_TRACES_SAMPLER", map[string]string{"OTEL_TRACES_SAMPLER": envCanary}},
		{"OTEL_TRACES_SAMPLER_ARG", map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": envCanary}},
		{"OTEL_TRACES_SAMPLER_ARG", map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"}},
		{"OTEL_TRACES_EXPORTER", map[string]string{"OTEL_TRACES_EXPORTER": envCanary}},
		{"OTEL_RESOURCE_ATTRIBUTES", map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "team=a," + envCanary}},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": envCanary}},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}},
		{"OTEL_EXPORTER_OTLP_HEADERS", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + envCanary + "," + envCanary}},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=%zz" + envCanary}},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:" + envCanary + "@host"}},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": envCanary + ":4318"}},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + envCanary + ":4317%", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{"OTEL_EXPORTER_OTLP_INSECURE", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_INSECURE": envCanary}},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TIMEOUT": envCanary}},
		{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": envCanary}},
		{"OTEL_BSP_MAX_QUEUE_SIZE", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "-1"}},
	} {
		_, err := NewTracing(context.Background(), fakeEnv(tc.env), testTracingConfig)
		if err == nil {
			t.Errorf("%v: NewTracing succeeded, want an error", tc.env)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.variable+":") {
			t.Errorf("%v: error %q does not name %s", tc.env, msg, tc.variable)
		}
		if strings.Contains(msg, envCanary) || strings.Contains(msg, "1.5") || strings.Contains(msg, "http/json") {
			t.Errorf("%v: error %q repeats the value", tc.env, msg)
		}
	}
}

func TestPropagator(t *testing.T) {
	fields := strings.Join(Propagator().Fields(), ",")
	if !strings.Contains(fields, "traceparent") || !strings.Contains(fields, "baggage") {
		t.Errorf("Propagator fields = %s, want W3C trace context and baggage", fields)
	}
}

// otlpReceiver collects what the exporter sent, for both transports.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu       sync.Mutex
	requests []*coltracepb.ExportTraceServiceRequest
	apiKeys  []string
}

func (r *otlpReceiver) record(req *coltracepb.ExportTraceServiceRequest, apiKey string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	r.apiKeys = append(r.apiKeys, apiKey)
}

// Export is the gRPC receiver.
func (r *otlpReceiver) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.record(req, strings.Join(md.Get("api-key"), ","))
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// ServeHTTP is the OTLP/HTTP receiver (binary protobuf).
func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP traces request", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.record(&msg, req.Header.Get("api-key"))
	resp, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func TestTracingExportsOTLPOverHTTP(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv) // listens on 127.0.0.1:0
	defer srv.Close()

	tr, err := NewTracing(context.Background(), fakeEnv(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "api-key=abc%20def",
	}), testTracingConfig)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Exporter != ExporterOTLPHTTP {
		t.Errorf("Exporter = %q", tr.Exporter)
	}
	exportAndCheck(t, tr, recv)
}

func TestTracingExportsOTLPOverGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recv := &otlpReceiver{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, recv)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	tr, err := NewTracing(context.Background(), fakeEnv(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + lis.Addr().String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_HEADERS":  "api-key=abc%20def",
	}), testTracingConfig)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Exporter != ExporterOTLPGRPC {
		t.Errorf("Exporter = %q", tr.Exporter)
	}
	exportAndCheck(t, tr, recv)
}

// exportAndCheck ends one span with an allowed and a forbidden attribute, shuts the provider
// down (which flushes the batcher) and checks what the receiver got.
func exportAndCheck(t *testing.T, tr *Tracing, recv *otlpReceiver) {
	t.Helper()
	_, span := tr.Provider.Tracer("test").Start(context.Background(), "chat m",
		trace.WithAttributes(
			attribute.String("gen_ai.request.model", "m"),
			attribute.String("gen_ai.input.messages", envCanary),
		))
	span.AddEvent("stream.completed", trace.WithAttributes(
		attribute.Int("mockgateway.stream.chunks", 3),
		attribute.String("chunk.text", envCanary),
	))
	span.End()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.requests) == 0 {
		t.Fatal("receiver got no export request")
	}
	if recv.apiKeys[0] != "abc def" {
		t.Errorf("api-key header = %q, want the percent-decoded configured value", recv.apiKeys[0])
	}
	var spans []*tracepb.Span
	for _, req := range recv.requests {
		if strings.Contains(req.String(), envCanary) {
			t.Errorf("export request contains the forbidden value: %v", req)
		}
		for _, rs := range req.GetResourceSpans() {
			res := attrMap(rs.GetResource().GetAttributes())
			for k, want := range map[string]string{
				"service.name":        "mockgateway",
				"service.version":     "4.2.0",
				"mockgateway.release": "Gateway Foundation",
			} {
				if res[k] != want {
					t.Errorf("resource %s = %q, want %q", k, res[k], want)
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				spans = append(spans, ss.GetSpans()...)
			}
		}
	}
	if len(spans) != 1 {
		t.Fatalf("receiver got %d spans, want 1", len(spans))
	}
	s := spans[0]
	attrs := attrMap(s.GetAttributes())
	if s.GetName() != "chat m" || attrs["gen_ai.request.model"] != "m" {
		t.Errorf("span %q attributes %v, want the allowed attribute", s.GetName(), attrs)
	}
	if _, ok := attrs["gen_ai.input.messages"]; ok {
		t.Error("forbidden attribute was exported")
	}
	if len(s.GetEvents()) != 1 || len(s.GetEvents()[0].GetAttributes()) != 1 {
		t.Errorf("events = %v, want one with only the allowed attribute", s.GetEvents())
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return m
}
