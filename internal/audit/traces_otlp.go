package audit

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// ---- OTLP/HTTP: a receiver the audit runs; the service's exporter points at it ----

type otlpReceiver struct {
	addr string
	grpc bool // OTLP/gRPC (otlp+grpc://) rather than OTLP/HTTP

	ln   net.Listener
	srv  *http.Server
	gsrv *grpc.Server

	mu       sync.Mutex
	records  []record
	bytes    int64
	exports  int
	badBody  int
	nonTrace int
}

func (s *otlpReceiver) name() string { return "traces:otlp" }
func (s *otlpReceiver) kind() string { return "traces" }
func (s *otlpReceiver) location() string {
	if s.grpc {
		return "otlp+grpc://" + s.addr
	}
	return "otlp://" + s.addr
}

func (s *otlpReceiver) start(context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("the OTLP receiver cannot listen on %s: %w", s.addr, err)
	}
	s.ln = ln
	if s.grpc {
		s.gsrv = grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(s.gsrv, grpcTraces{r: s})
		go func() { _ = s.gsrv.Serve(ln) }()
		return nil
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

func (s *otlpReceiver) close() {
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
	}
	if s.gsrv != nil {
		done := make(chan struct{})
		go func() { s.gsrv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			s.gsrv.Stop()
		}
	}
}

// grpcTraces is the OTLP/gRPC trace service.
type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	r *otlpReceiver
}

func (g grpcTraces) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.r.mu.Lock()
	defer g.r.mu.Unlock()
	g.r.exports++
	g.r.bytes += int64(proto.Size(req))
	g.r.records = append(g.r.records, otlpRecords(req, fmt.Sprintf("export %d (gRPC)", g.r.exports))...)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (s *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "OTLP/HTTP wants POST", http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader = r.Body
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = zr
	}
	data, err := readLimited(body, 64<<20)
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	isJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	traces := strings.HasSuffix(r.URL.Path, "/v1/traces")

	s.mu.Lock()
	s.exports++
	n := s.exports
	s.bytes += int64(len(data))
	label := fmt.Sprintf("export %d (%s)", n, r.URL.Path)
	switch {
	case traces && isJSON:
		if doc, err := parseJSON(data); err == nil {
			spans, rest := spanRecordsFromJSON(doc, label)
			s.records = append(s.records, spans...)
			s.records = append(s.records, rest)
		} else {
			s.badBody++
			s.records = append(s.records, record{id: label + " (not JSON)", key: label, parts: []part{{"raw", string(data)}}})
		}
	case traces:
		var msg coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &msg); err != nil {
			s.badBody++
			s.records = append(s.records, record{id: label + " (not OTLP protobuf)", key: label, parts: []part{{"raw", string(data)}}})
		} else {
			s.records = append(s.records, otlpRecords(&msg, label)...)
		}
	default:
		// Logs or metrics over OTLP: searched as raw bytes.
		s.nonTrace++
		s.records = append(s.records, record{id: label, key: label, parts: []part{{"raw", string(data)}}})
	}
	s.mu.Unlock()

	if isJSON {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (s *otlpReceiver) snapshot() *collection {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := traceCollection(append([]record(nil), s.records...), s.bytes)
	c.add("exports", int64(s.exports))
	if s.badBody > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d export bodies could not be decoded; they were searched as raw bytes", s.badBody))
	}
	if s.nonTrace > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d exports of logs or metrics were searched as raw bytes", s.nonTrace))
	}
	return c
}

func (s *otlpReceiver) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	for {
		c := s.snapshot()
		c.correlate(exp.corr)
		if len(tracedMissing(c, exp)) == 0 || time.Now().After(deadline) || !sleepCtx(ctx, 200*time.Millisecond) {
			exp.settle(c)
			if c.get("exports") == 0 {
				want := "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + s.addr + " (protocol http/protobuf, the default, or http/json)"
				if s.grpc {
					want = "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + s.addr + " with OTEL_EXPORTER_OTLP_PROTOCOL=grpc"
				}
				c.notes = append(c.notes, "nothing was exported to the receiver: does the service run with "+want+"?")
			}
			return c, nil
		}
	}
}

// otlpRecords renders an export: one record per span with every field, one per resource and
// scope, and the raw bytes (with the span trace-state fields cleared, since those may hold the
// caller's tracestate by contract) as a backstop for fields this version of the protocol does
// not know.
func otlpRecords(msg *coltracepb.ExportTraceServiceRequest, label string) []record {
	var out []record
	for i, rs := range msg.GetResourceSpans() {
		res := record{id: fmt.Sprintf("%s resource %d", label, i+1), key: fmt.Sprintf("%s|res%d", label, i)}
		for _, kv := range rs.GetResource().GetAttributes() {
			res.parts = append(res.parts, anyParts("resource.attributes["+kv.GetKey()+"]", kv.GetValue())...)
		}
		res.parts = append(res.parts, part{"schema_url", "schema_url=" + rs.GetSchemaUrl()})
		for j, ss := range rs.GetScopeSpans() {
			sc := ss.GetScope()
			res.parts = append(res.parts, part{"scope", fmt.Sprintf("scope[%d]=%s %s %s", j, sc.GetName(), sc.GetVersion(), ss.GetSchemaUrl())})
			for _, kv := range sc.GetAttributes() {
				res.parts = append(res.parts, anyParts(fmt.Sprintf("scope[%d].attributes[%s]", j, kv.GetKey()), kv.GetValue())...)
			}
			for _, sp := range ss.GetSpans() {
				out = append(out, otlpSpanRecord(sp))
			}
		}
		out = append(out, res)
	}
	clone := proto.Clone(msg).(*coltracepb.ExportTraceServiceRequest)
	for _, rs := range clone.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				sp.TraceState = ""
				for _, l := range sp.GetLinks() {
					l.TraceState = ""
				}
			}
		}
	}
	if raw, err := proto.Marshal(clone); err == nil {
		out = append(out, record{id: label + " raw protobuf (trace_state cleared)", key: label + "|raw", parts: []part{{"raw protobuf", string(raw)}}, backstop: true})
	}
	return out
}

func otlpSpanRecord(sp *tracepb.Span) record {
	tid, sid := hex.EncodeToString(sp.GetTraceId()), hex.EncodeToString(sp.GetSpanId())
	r := record{id: fmt.Sprintf("span %q trace %s span %s", sp.GetName(), short(tid), sid), key: tid + "/" + sid, traceID: tid, name: sp.GetName()}
	add := func(where, text string) { r.parts = append(r.parts, part{where, where + "=" + text}) }
	add("name", sp.GetName())
	add("kind", sp.GetKind().String())
	add("parent_span_id", hex.EncodeToString(sp.GetParentSpanId()))
	add("trace_state", sp.GetTraceState())
	add("status.message", sp.GetStatus().GetMessage())
	for _, kv := range sp.GetAttributes() {
		r.parts = append(r.parts, anyParts("attributes["+kv.GetKey()+"]", kv.GetValue())...)
	}
	for i, ev := range sp.GetEvents() {
		add(fmt.Sprintf("events[%d].name", i), ev.GetName())
		for _, kv := range ev.GetAttributes() {
			r.parts = append(r.parts, anyParts(fmt.Sprintf("events[%d].attributes[%s]", i, kv.GetKey()), kv.GetValue())...)
		}
	}
	for i, l := range sp.GetLinks() {
		add(fmt.Sprintf("links[%d].trace_state", i), l.GetTraceState())
		add(fmt.Sprintf("links[%d].trace_id", i), hex.EncodeToString(l.GetTraceId()))
		for _, kv := range l.GetAttributes() {
			r.parts = append(r.parts, anyParts(fmt.Sprintf("links[%d].attributes[%s]", i, kv.GetKey()), kv.GetValue())...)
		}
	}
	return r
}

// anyParts renders an attribute value of any type, arrays and maps included; bytes values are
// searched as they are.
func anyParts(where string, v *commonpb.AnyValue) []part {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return []part{{where, where + "=" + x.StringValue}}
	case *commonpb.AnyValue_BytesValue:
		return []part{{where, where + "=" + string(x.BytesValue)}, {where + " (hex)", hex.EncodeToString(x.BytesValue)}}
	case *commonpb.AnyValue_ArrayValue:
		var out []part
		for i, e := range x.ArrayValue.GetValues() {
			out = append(out, anyParts(fmt.Sprintf("%s[%d]", where, i), e)...)
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		var out []part
		for _, kv := range x.KvlistValue.GetValues() {
			out = append(out, anyParts(where+"."+kv.GetKey(), kv.GetValue())...)
		}
		return out
	case nil:
		return []part{{where, where + "="}}
	}
	return []part{{where, where + "=" + strings.TrimSpace(fmt.Sprint(v.GetValue()))}}
}
