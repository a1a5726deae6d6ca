// Command baseline is a bench-only server: a bare net/http handler with no router, no
// middleware and no telemetry, answering POST /v1/chat/completions with fixed bytes of the same
// size and shape as mockgateway's answer to the load test's request (mock-echo, a 15-word user
// message: "echo:" + 15 words = 16 content tokens). It is the yardstick of `make bench`: the
// issue's targets are ratios of mockgateway's throughput to this server's, measured side by side.
//
// A body containing "stream":true gets the stream: a role chunk, 16 content chunks, a finish
// chunk, each flushed at once, then data: [DONE]. Anything else gets the chat.completion JSON.
//
// A stream request with an x-mock-latency header naming between=<duration> waits that long
// between its frames, as mockgateway does: the bench's memory run holds 10,000 such streams open
// on both servers, so that what net/http itself holds per open stream is measured beside
// mockgateway's figure.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// The response identity is fixed: same lengths as mockgateway's ("chatcmpl-" + 24 hex digits,
// a 10-digit created), so the bytes on the wire match in size.
const (
	completionID = "chatcmpl-0123456789abcdef01234567"
	created      = "1795370166"
	model        = "mock-echo"
)

// Words is the 15-word user message of the load test; the mock echoes it after "echo:".
var Words = strings.Fields("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen")

// JSONBody is the fixed chat.completion answer (with its trailing newline, as mockgateway's
// encoder writes it).
var JSONBody = []byte(`{"id":"` + completionID + `","object":"chat.completion","created":` + created + `,"model":"` + model + `",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"echo: ` + strings.Join(Words, " ") + `","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":30,"completion_tokens":16,"total_tokens":46,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},` +
	`"system_fingerprint":"fp_mockgateway_4_2","service_tier":"default"}` + "\n")

// StreamFrames are the SSE frames of the fixed stream, each "data: …\n\n", ending with [DONE].
var StreamFrames = streamFrames()

func streamFrames() [][]byte {
	chunk := func(delta, finish string) []byte {
		return []byte(`data: {"id":"` + completionID + `","object":"chat.completion.chunk","created":` + created + `,"model":"` + model + `",` +
			`"system_fingerprint":"fp_mockgateway_4_2","service_tier":"default","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}]}` + "\n\n")
	}
	frames := [][]byte{chunk(`{"role":"assistant","content":""}`, "null"), chunk(`{"content":"echo:"}`, "null")}
	for _, w := range Words {
		frames = append(frames, chunk(`{"content":" `+w+`"}`, "null"))
	}
	frames = append(frames, chunk(`{}`, `"stop"`), []byte("data: [DONE]\n\n"))
	return frames
}

var streamMarker = []byte(`"stream":true`)

// Handler is the whole server: no routing beyond one path and method check.
func Handler() http.Handler {
	jsonLen := strconv.Itoa(len(JSONBody))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return
		}
		h := w.Header()
		if !bytes.Contains(body, streamMarker) {
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", jsonLen)
			_, _ = w.Write(JSONBody)
			return
		}
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		f, _ := w.(http.Flusher)
		between := holdBetween(r.Header.Get("X-Mock-Latency"))
		for i, fr := range StreamFrames {
			if i > 0 && between > 0 {
				select {
				case <-time.After(between):
				case <-r.Context().Done():
					return
				}
			}
			if _, err := w.Write(fr); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
	})
}

// holdBetween is the between=<duration> of an x-mock-latency value ("ttfc=0s;between=30s"),
// or 0.
func holdBetween(v string) time.Duration {
	for part := range strings.SplitSeq(v, ";") {
		if d, ok := strings.CutPrefix(strings.TrimSpace(part), "between="); ok {
			between, _ := time.ParseDuration(d)
			return between
		}
	}
	return 0
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address host:port (port 0 picks a free port)")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "baseline: %v\n", err)
		os.Exit(1)
	}
	// The orchestrator reads the chosen address from this line.
	fmt.Printf("baseline listening on %s\n", ln.Addr())
	if err := http.Serve(ln, Handler()); err != nil {
		fmt.Fprintf(os.Stderr, "baseline: %v\n", err)
		os.Exit(1)
	}
}
