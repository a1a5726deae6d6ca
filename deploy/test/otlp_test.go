package test

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is the trace backend of the end-to-end test: an OTLP/HTTP endpoint on loopback
// that decodes what the service exports and keeps, per trace id, the request ids of its spans.
type otlpReceiver struct {
	url string

	mu        sync.Mutex
	requestID map[string]string // trace id -> mockgateway.request_id of its server span
	spans     int
	exports   int
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{requestID: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "only POST /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	// An ExportTraceServiceRequest is, on the wire, a TracesData (both are field 1, repeated
	// ResourceSpans; OTLP keeps them compatible on purpose). Decoding it as TracesData keeps the
	// collector package, and the gRPC stack it imports, out of this module's build.
	var export tracepb.TracesData
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
		err = protojson.Unmarshal(raw, &export)
	} else {
		err = proto.Unmarshal(raw, &export)
	}
	if err != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	r.record(&export)
	// An empty ExportTraceServiceResponse (full success) encodes as zero bytes.
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (r *otlpReceiver) record(export *tracepb.TracesData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exports++
	for _, rs := range export.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, span := range ss.GetSpans() {
				r.spans++
				id := hex.EncodeToString(span.GetTraceId())
				if _, ok := r.requestID[id]; !ok {
					r.requestID[id] = ""
				}
				for _, kv := range span.GetAttributes() {
					if kv.GetKey() == "mockgateway.request_id" {
						r.requestID[id] = kv.GetValue().GetStringValue()
					}
				}
			}
		}
	}
}

// has reports whether a trace id arrived, and the request id its spans carry.
func (r *otlpReceiver) has(traceID string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rid, ok := r.requestID[traceID]
	return rid, ok
}

func (r *otlpReceiver) counts() (exports, spans, traces int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exports, r.spans, len(r.requestID)
}
