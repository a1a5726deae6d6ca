package observability

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestRequestIsTheContext: the context a handler sees — the request itself (request.go) — has
// the request's own deadline, values, cancellation and error, on a traced path with the buffer's
// tracer, on an untraced path, and with another tracer: a client that goes away or a server
// timeout must reach the handler and every stream.
func TestRequestIsTheContext(t *testing.T) {
	type key struct{}
	tr, err := NewTracing(context.Background(), fakeEnv(map[string]string{"OTEL_TRACES_SAMPLER": "always_on"}), testTracingConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	for _, c := range []struct {
		name   string
		tracer trace.Tracer
		path   string
	}{{"buffer tracer", tr.Tracer, "/v1/chat"}, {"untraced path", tr.Tracer, "/health"}, {"another tracer", noop.NewTracerProvider().Tracer(""), "/v1/chat"}} {
		t.Run(c.name, func(t *testing.T) {
			seen := make(chan error, 1)
			h := Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := r.Context()
				if d, ok := ctx.Deadline(); !ok || !d.Equal(time.Unix(2e9, 0)) {
					t.Errorf("deadline %v %v, want the request's", d, ok)
				}
				if ctx.Value(key{}) != "v" || RecordFrom(ctx).RequestID == "" {
					t.Error("the request's own value or its Record is not there")
				}
				if ctx.Err() != nil {
					t.Errorf("Err %v before the cancel", ctx.Err())
				}
				<-ctx.Done() // the test cancels the request's context
				seen <- ctx.Err()
			}), ChainConfig{
				Logger: slog.New(slog.DiscardHandler), Tracer: c.tracer, Propagator: Propagator(), UntracedPaths: []string{"/health"},
				WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			})
			parent, cancel := context.WithDeadline(context.WithValue(context.Background(), key{}, "v"), time.Unix(2e9, 0))
			req := httptest.NewRequest(http.MethodGet, c.path, nil).WithContext(parent)
			go h.ServeHTTP(httptest.NewRecorder(), req)
			time.Sleep(10 * time.Millisecond)
			cancel()
			select {
			case err := <-seen:
				if err != context.Canceled {
					t.Errorf("Err after the cancel: %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the handler never saw the cancel")
			}
		})
	}
}
