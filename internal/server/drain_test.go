package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"

	"mockgateway/observability"
)

// TestDrainWaitsForHijackedHandlers: a simulated stream cut hijacks its connection, which
// http.Server's Shutdown then forgets, though the handler has its access line still to write
// (TestAccessLogErrorsKeepsOnlyErrors lost that line when the log closed first). Drain.Wait
// waits for it.
func TestDrainWaitsForHijackedHandlers(t *testing.T) {
	d := NewDrain()
	cut, release := make(chan struct{}), make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		cutConnection(w)
		close(cut)
		<-release // the handler's tail: then the chain writes the access line
	})
	srv := httptest.NewServer(observability.Chain(handler, observability.ChainConfig{
		Logger: slog.New(slog.DiscardHandler), Tracer: noop.NewTracerProvider().Tracer(""),
		Propagator: propagation.TraceContext{}, WriteInternalError: writeInternalError, Handling: &d.handling,
	}))
	defer srv.Close()
	go func() {
		if resp, err := http.Get(srv.URL); err == nil {
			resp.Body.Close()
		}
	}()
	<-cut
	if n := d.Handling(); n != 1 {
		t.Fatalf("handling %d, want the hijacked request", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Wait(ctx); err == nil {
		t.Fatal("Wait returned while a hijacked request was still in its handler")
	}
	close(release)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Wait(ctx); err != nil {
		t.Fatalf("Wait after the handler returned: %v", err)
	}
}
