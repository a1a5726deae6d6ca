package observability

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
)

// TestDateHeader: every response through the chain, over a real connection, carries a Date
// header as net/http writes it (http.TimeFormat, within the request's second or the next); a
// handler's own Date wins, and so does its nil Date (none sent); and one second's value is
// shared, a new second's formatted anew.
func TestDateHeader(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) })
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/stream", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("data: x\n\n"))
		w.(http.Flusher).Flush()
	})
	mux.HandleFunc("/own", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
		_, _ = w.Write([]byte("{}")) // through the chain's writer, which sets Date as it begins
	})
	mux.HandleFunc("/none", func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = nil // net/http's documented way to send no Date
		_, _ = w.Write([]byte("{}"))
	})
	chain := Chain(mux, ChainConfig{
		Logger: slog.New(slog.DiscardHandler), Tracer: noop.NewTracerProvider().Tracer(""), Propagator: Propagator(),
		WriteInternalError: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
	})
	// The chain sets it itself (a recorder adds none), so net/http has none to format.
	rr := httptest.NewRecorder()
	chain.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/json", nil))
	if rr.Header().Get("Date") == "" {
		t.Error("the chain set no Date header")
	}
	srv := httptest.NewServer(chain)
	defer srv.Close()
	for _, path := range []string{"/json", "/status", "/stream", "/nowhere"} {
		before := time.Now().Truncate(time.Second)
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		after := time.Now()
		values := resp.Header.Values("Date")
		if len(values) != 1 {
			t.Fatalf("%s: Date %q, want exactly one", path, values)
		}
		d, err := time.Parse(http.TimeFormat, values[0])
		if err != nil || d.Before(before) || d.After(after) {
			t.Errorf("%s: Date %q (%v), want http.TimeFormat between %v and %v", path, values[0], err, before, after)
		}
	}
	resp, err := http.Get(srv.URL + "/own")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Values("Date"); len(got) != 1 || got[0] != "Mon, 02 Jan 2006 15:04:05 GMT" {
		t.Errorf("a handler's own Date: got %q", got)
	}
	resp, err = http.Get(srv.URL + "/none")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Values("Date"); len(got) != 0 {
		t.Errorf("a handler that asks for no Date: got %q", got)
	}

	var dates dateHeader
	at := time.Date(2026, 11, 25, 23, 59, 59, 100, time.FixedZone("CET", 3600))
	one, same := dates.at(at), dates.at(at.Add(800*time.Millisecond))
	next := dates.at(at.Add(time.Second))
	if &one[0] != &same[0] || one[0] != "Wed, 25 Nov 2026 22:59:59 GMT" {
		t.Errorf("one second: %q and %q, want one shared value in GMT", one, same)
	}
	if next[0] != "Wed, 25 Nov 2026 23:00:00 GMT" {
		t.Errorf("the next second: %q", next)
	}
}
