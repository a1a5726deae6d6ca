package observability

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// statusWriter notes the status in the Record, starts the write deadline and adds the Date
// header, X-Content-Type-Options: nosniff and the drain's Connection: close as the response
// begins, and notes a response the client did not take. It keeps Flush and Unwrap so that streams and http.ResponseController
// work through it.
type statusWriter struct {
	http.ResponseWriter
	rec *Record
	o   *observer
}

// StatusClientClosed is the status logged and counted for a response (not a stream: a stream
// reports its outcome) that the client did not take — it went away, or stopped reading until
// the write timeout cut it (error_code request_timeout). It is nginx's "client closed request":
// the status line sent, if any, reached no one who read it.
const StatusClientClosed = 499

// begin runs once, as the response starts.
func (w *statusWriter) begin(code int) {
	w.rec.Status = code
	c, h := &w.o.c, w.ResponseWriter.Header()
	now := ClockAfter(w.rec.Start)
	if _, ok := h["Date"]; !ok {
		h["Date"] = w.o.dates.at(now)
	}
	// Every answer: a browser then takes no body for another type than its Content-Type says (a
	// JSON answer loaded as a script by another site's page). Set here, as the headers go, rather
	// than as the request comes in: one more header during the handler made a Messages stream's
	// deepest moment deeper (TestParkedStreamStack).
	h["X-Content-Type-Options"] = w.o.nosniff
	if c.Draining != nil && c.Draining() {
		h.Set("Connection", "close")
	}
	// net/http set the same deadline as it read the request (the server's WriteTimeout is this
	// flag too); it is set again only when the handler waited before answering (simulated
	// latency) long enough to move it by more than a 32nd of the timeout — a runtime timer
	// update spared to nearly every answer, which is then cut within the 1/16 of its exact
	// bound that a stream's writes are (TestWriteDeadlineRestarted).
	if c.WriteTimeout > 0 && now.Sub(w.rec.Start) > c.WriteTimeout/32 {
		if d, ok := w.ResponseWriter.(interface{ SetWriteDeadline(time.Time) error }); ok {
			_ = d.SetWriteDeadline(now.Add(c.WriteTimeout))
		}
	}
}

// failed notes a write the client did not take.
func (w *statusWriter) failed(err error) {
	if w.rec.Stream {
		return // the stream writer records the outcome itself
	}
	w.rec.Status = StatusClientClosed
	if w.rec.ErrorCode == "" && errors.Is(err, os.ErrDeadlineExceeded) {
		w.rec.SetError("request_timeout")
	}
}

func (w *statusWriter) WriteHeader(code int) {
	// An informational answer (103 Early Hints, say) goes before the response's own status:
	// net/http sends it at once and the handler answers after it, so it begins nothing.
	if w.rec.Status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.begin(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.rec.Status == 0 {
		w.begin(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	if err != nil {
		w.failed(err)
	}
	return n, err
}

func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController calls: a stream must learn that its flush failed
// (a stalled or gone client), which Flush alone would swallow.
func (w *statusWriter) FlushError() error {
	if w.rec.Status == 0 {
		w.begin(http.StatusOK)
	}
	var err error
	switch f := w.ResponseWriter.(type) {
	case interface{ FlushError() error }: // net/http's own writer: no controller per chunk
		err = f.FlushError()
	default:
		err = http.NewResponseController(w.ResponseWriter).Flush()
	}
	if err != nil {
		w.failed(err)
	}
	return err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
