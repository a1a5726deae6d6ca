package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
)

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// jsonAppender is a body that encodes itself by appending, without reflection: the chat
// completion, sent by every successful JSON chat request (protocol.Completion.AppendJSON).
type jsonAppender interface{ AppendJSON([]byte) []byte }

// encodeJSON is the one place responses are encoded. It encodes into a buffer first, so a value
// that fails to encode becomes a clean 500 instead of half a 200.
func encodeJSON(w http.ResponseWriter, status int, v any) {
	buf := bufferPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufferPool.Put(buf)
	if a, ok := v.(jsonAppender); ok {
		// The same bytes as the Encoder below would write, trailing newline included.
		b := a.AppendJSON(buf.AvailableBuffer())
		buf.Write(append(b, '\n'))
		writeJSONBytes(w, status, buf.Bytes())
		return
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"message":"The response could not be encoded.","type":"server_error","param":null,"code":"internal_error"}}` + "\n")
	}
	writeJSONBytes(w, status, buf.Bytes())
}

// writeJSONBytes writes an already encoded JSON body.
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client that went away is not an error of ours
}
