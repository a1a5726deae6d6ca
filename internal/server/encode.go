package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"mockgateway/internal/dialect"
)

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer put back in bufferPool. The pool serves the everyday
// body and answer of a few KB; a rare body or answer of megabytes is left to the collector
// rather than held by the pool for the requests after it.
const maxPooledBuffer = 64 << 10

// getBuffer returns an empty buffer from the pool; putBuffer gives it back.
func getBuffer() *bytes.Buffer {
	buf := bufferPool.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

func putBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		bufferPool.Put(buf)
	}
}

// encodeJSON is the one place responses are encoded and written (encodeBody, writeJSONBytes).
func encodeJSON(w http.ResponseWriter, status int, v any) {
	buf, status := encodeBody(status, v)
	defer putBuffer(buf)
	writeJSONBytes(w, status, buf.Bytes())
}

// encodeBody encodes v into a buffer from the pool, which the caller gives back with putBuffer.
// It encodes before anything is written, so a value that fails to encode becomes a clean 500
// instead of half a 200. A dialect's answer encodes itself by appending (dialect.Body): its buffer is sized once from its hint, so a large answer is
// not copied through every doubling of its buffer (BenchmarkHeavyAnswerMemory).
func encodeBody(status int, v any) (*bytes.Buffer, int) {
	buf := getBuffer()
	if a, ok := v.(dialect.Body); ok {
		buf.Grow(a.SizeHint() + 1)
		// The same bytes as the Encoder below would write, trailing newline included.
		b := a.AppendJSON(buf.AvailableBuffer())
		buf.Write(append(b, '\n'))
		return buf, status
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"message":"The response could not be encoded.","type":"server_error","param":null,"code":"internal_error"}}` + "\n")
	}
	return buf, status
}

// answerContentType is the Content-Type of every JSON answer, one slice for all of them:
// net/http only reads a header's values, and nothing writes into this one (Header.Set makes a
// slice per call).
var answerContentType = []string{"application/json"}

// selfLengthMax is the largest body written whole in one Write that net/http gives a
// Content-Length itself, from the buffer it holds it in until the handler returns (as
// http.ResponseWriter's Write documents: "under a few KB"; the buffer is 2 KB). Below it, the
// header is left to net/http, which formats it without an allocation; TestContentLength holds
// every size, below, at and above it, over a real connection. (A JSON body is never empty: for
// an empty one net/http would write no Content-Length to a HEAD request.)
const selfLengthMax = 1024

// writeJSONBytes writes an already encoded JSON body, in one Write.
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = answerContentType
	if len(body) > selfLengthMax {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that went away is not an error of ours
}
