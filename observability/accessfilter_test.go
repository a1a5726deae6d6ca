package observability

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace/noop"

	"mockgateway/internal/testutil"
)

// filterRoutes are chainRoutes and a stream that is cut short: 200, no error code, its failure
// only in its outcome.
func filterRoutes() http.Handler {
	routes := chainRoutes(noop.NewTracerProvider().Tracer(""))
	mux := http.NewServeMux()
	mux.Handle("/", routes)
	mux.HandleFunc("/v1/stream", func(w http.ResponseWriter, r *http.Request) {
		rec := RecordFrom(r.Context())
		rec.SetRoute("/v1/stream")
		rec.Chat, rec.Stream, rec.Model, rec.Chunks = true, true, "mock-chat", 2
		rec.StreamOutcome = r.URL.Query().Get("outcome")
		_, _ = w.Write([]byte("data: {}\n\n"))
	})
	return mux
}

// serveFiltered serves the paths through a chain whose log OpenLog made with the given access
// setting, and returns the access lines (their paths, JSON or text) and the dropped count.
func serveFiltered(t *testing.T, format, access string, sample int, paths []string) (kept []string, dropped float64) {
	t.Helper()
	var out testutil.SyncBuffer
	log, err := OpenLog(LogSettings{Level: "info", Format: format, Access: access, AccessSample: sample}, &out)
	if err != nil {
		t.Fatal(err)
	}
	h := Chain(filterRoutes(), ChainConfig{
		Logger: log.Logger, Tracer: noop.NewTracerProvider().Tracer(""), Propagator: Propagator(),
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	})
	for i, p := range paths {
		r := httptest.NewRequest(http.MethodGet, p, nil)
		r.Header.Set(RequestIDHeader, "req-"+string(rune('a'+i)))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	log.Logger.Warn("a warning is always kept")
	reg := prometheus.NewRegistry()
	reg.MustRegister(log.Collector())
	dropped = promtest.ToFloat64(log.Collector())
	_ = log.Close()
	warned := false
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Contains(line, "a warning is always kept") {
			warned = true
		}
		if format == "text" {
			if strings.Contains(line, "msg=request ") {
				kept = append(kept, line[strings.Index(line, "request_id="):][:len("request_id=req-a")])
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["msg"] == "request" {
			kept = append(kept, "request_id="+m["request_id"].(string))
		}
	}
	if !warned {
		t.Error("the warning was dropped")
	}
	return kept, dropped
}

// TestAccessLogKeepsErrorsAndSamples: "errors" keeps the lines of 4xx, 5xx and streams whose
// outcome is not completed (a cut stream is 200 with no error code); "sample" keeps those and
// 1 in N of the rest, the first of each N; "all" keeps every line. Dropped lines are counted.
func TestAccessLogKeepsErrorsAndSamples(t *testing.T) {
	paths := []string{
		"/v1/chat", "/nowhere", "/v1/chat", "/fail", "/v1/stream?outcome=completed",
		"/v1/stream?outcome=aborted", "/v1/chat", "/v1/stream?outcome=client_disconnected",
		"/v1/chat", "/health", "/panic", "/v1/chat",
	}
	// a: ok, b: 404, c: ok, d: 502, e: ok, f: aborted, g: ok, h: disconnected, i: ok, j: ok,
	// k: 500, l: ok
	for _, c := range []struct {
		access  string
		sample  int
		want    string
		dropped float64
	}{
		{"all", 3, "abcdefghijkl", 0},
		{"errors", 3, "bdfhk", 7},
		{"sample", 3, "abdfghkl", 4}, // successes a c e g i j l: the 1st, 4th and 7th
		{"sample", 1, "abcdefghijkl", 0},
	} {
		for _, format := range []string{"json", "text"} {
			kept, dropped := serveFiltered(t, format, c.access, c.sample, paths)
			got := ""
			for _, k := range kept {
				got += strings.TrimPrefix(k, "request_id=req-")
			}
			if got != c.want || dropped != c.dropped {
				t.Errorf("%s %d (%s): kept %q, dropped %v; want %q, %v", c.access, c.sample, format, got, dropped, c.want, c.dropped)
			}
		}
	}
}

// TestOpenLogRejectsUnknownSettings: the access setting is checked once, when the log opens.
func TestOpenLogRejectsUnknownSettings(t *testing.T) {
	for _, s := range []LogSettings{
		{Level: "info", Format: "json", Access: "some"},
		{Level: "info", Format: "json", Access: "sample", AccessSample: 0},
		{Level: "info", Format: "json", Access: "all", File: t.TempDir() + "/x.log", FileMaxBytes: 0},
	} {
		if l, err := OpenLog(s, &testutil.SyncBuffer{}); err == nil {
			_ = l.Close()
			t.Errorf("%+v accepted", s)
		}
	}
}
