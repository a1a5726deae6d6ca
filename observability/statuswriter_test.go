package observability

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
)

// deadlineWriter notes the write deadlines set through it, as a connection's response writer
// takes them.
type deadlineWriter struct {
	discardWriter
	set []time.Time
}

func (w *deadlineWriter) SetWriteDeadline(t time.Time) error {
	w.set = append(w.set, t)
	return nil
}

// TestWriteDeadlineRestarted: a response that begins at once keeps the write deadline net/http
// set as it read the request; one that begins after the handler waited more than a 32nd of
// --write-timeout has it set again, the whole timeout from when it begins.
func TestWriteDeadlineRestarted(t *testing.T) {
	// A 32nd of it, 100 ms, is far more than a loaded machine delays a response that begins at
	// once: that case must not be taken for a wait.
	const timeout = 3200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		wait    time.Duration
		restart bool
	}{
		{"at once", 0, false},
		{"after simulated latency", 3 * timeout / 32, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				time.Sleep(tc.wait)
				_, _ = w.Write([]byte("{}"))
			}), ChainConfig{
				Tracer: noop.NewTracerProvider().Tracer(""), Logger: slog.New(slog.DiscardHandler),
				Propagator: Propagator(), WriteTimeout: timeout,
				WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			})
			w := &deadlineWriter{discardWriter: discardWriter{h: http.Header{}}}
			before := time.Now()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
			if !tc.restart {
				if len(w.set) != 0 {
					t.Errorf("deadline set again %v for a response that began at once", w.set)
				}
				return
			}
			if len(w.set) != 1 {
				t.Fatalf("deadlines set: %v, want one", w.set)
			}
			if earliest := before.Add(tc.wait + timeout); w.set[0].Before(earliest) {
				t.Errorf("deadline %v, want the whole timeout from the response's start (after %v)", w.set[0], earliest)
			}
		})
	}
}

// TestInformationalStatusBeginsNothing: a 103 before the answer is not the answer's status —
// the access log, metrics and span report the 200 that follows it.
func TestInformationalStatusBeginsNothing(t *testing.T) {
	var rec *Record
	h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec = RecordFrom(r.Context())
		w.WriteHeader(http.StatusEarlyHints)
		if rec.Status != 0 {
			t.Errorf("after a 103 the record's status is %d, want none yet", rec.Status)
		}
		w.WriteHeader(http.StatusOK)
	}), ChainConfig{
		Tracer: noop.NewTracerProvider().Tracer(""), Logger: slog.New(slog.DiscardHandler), Propagator: Propagator(),
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	})
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	if rec == nil || rec.Status != http.StatusOK {
		t.Errorf("the record's status after 103 then 200: %v, want 200", rec)
	}
}
