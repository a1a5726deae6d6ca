package server

import (
	"context"
	"net/http"
	"strconv"

	"mockgateway/internal/dialect"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// respond writes the call's JSON answer, in its dialect, after the model's simulated latency.
func (h *chatHandler) respond(ctx context.Context, w http.ResponseWriter, r *http.Request, c *chatCall) {
	rec := observability.RecordFrom(ctx)
	if !h.wait(ctx, c.Timings.Total(c.Result.CompletionTokens)) {
		return
	}
	if f := c.Fault; f != nil {
		// A mid-stream fault on a request that does not stream: an error, or a cut body.
		recordFault(ctx, c.Span, h.metrics, rec.Model, f.Kind)
		if f.Kind == simulation.StreamError {
			writeError(w, r, faultError(f))
			return
		}
	}
	body := c.reply.JSON()
	setProcessingMS(w, rec, h.dialect.ProcessingHeader())
	if c.Fault != nil && c.Fault.Kind == simulation.StreamCut {
		cutJSON(w, body)
		return
	}
	buf, status := encodeBody(http.StatusOK, body)
	defer putBuffer(buf)
	// What is left to send is the bytes: a client that reads slowly holds them, not the
	// generated text as well.
	c.Result.DropText()
	writeJSONBytes(w, status, buf.Bytes())
}

// cutJSON sends the headers and half of the body, then drops the connection.
func cutJSON(w http.ResponseWriter, body dialect.Body) {
	b := body.AppendJSON(nil) // the bytes an uncut response would have carried
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	cutConnection(w)
}
