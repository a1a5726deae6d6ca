package observability

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"
)

// TestLogPanicLocation: a handler's panic is logged by its type and the place it happened; a
// LocatedPanic (raised again off the goroutine it began on) by its value's type and the place it
// carries — never the value itself.
func TestLogPanicLocation(t *testing.T) {
	var logs bytes.Buffer
	mux := http.NewServeMux()
	mux.HandleFunc("/here", func(http.ResponseWriter, *http.Request) { panic("secret prompt text") })
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) {
		panic(LocatedPanic{Value: 42, Location: "generate.deep (schema.go:7)"})
	})
	h := Chain(mux, ChainConfig{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Tracer: noop.NewTracerProvider().Tracer(""), Propagator: Propagator(),
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	})
	for _, path := range []string{"/here", "/elsewhere"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	out := logs.String()
	for _, want := range []string{`"panic_type":"string"`, `"panic_location":"mockgateway/observability.TestLogPanicLocation.func1 (panic_test.go:`,
		`"panic_type":"int"`, `"panic_location":"generate.deep (schema.go:7)"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("the panic's value reached the log:\n%s", out)
	}
}
