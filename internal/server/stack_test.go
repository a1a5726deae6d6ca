//go:build !race

package server

import (
	"bufio"
	"net"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/testutil"
)

// TestParkedStreamStack measures the goroutine stack that one open stream holds while it waits
// between chunks. A parked stream keeps every frame below it, and the deepest moment of its
// life sets its stack's size: Go doubles a stack that overflows and shrinks it only at a
// collection, so a handler whose deepest call needs more than 8 KB holds 16 KB for the whole
// stream (docs/performance.md, "Stacks"). The clients here are raw connections read from the
// test's own goroutine, so the stacks counted are the server's alone: per stream, net/http's
// connection goroutine (with the handler parked on it) and its background reader.
//
// Not built with -race: the race detector's instrumentation doubles every stack, so there the
// test could not tell an 8 KB handler from a 16 KB one; make test runs it on its own, without.
func TestParkedStreamStack(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 200 streams per dialect")
	}
	t.Run("chat", func(t *testing.T) {
		parkedStreamStack(t, chatPath, `{"model":"mock-long","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	})
	t.Run("responses", func(t *testing.T) {
		parkedStreamStack(t, "/v1/responses", `{"model":"mock-long","stream":true,"input":"hi"}`)
	})
	// Content parts and a tool's round trip, as SDKs send them: the deepest decoding of each
	// dialect (a Responses stream with a content part once held a doubled stack).
	t.Run("chat parts and tool round trip", func(t *testing.T) {
		parkedStreamStack(t, chatPath, `{"model":"mock-long","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},`+
			`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},`+
			`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"}]}]}`)
	})
	t.Run("messages", func(t *testing.T) {
		parkedStreamStack(t, messagesPath, `{"model":"mock-long","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	})
	// A tool result's content in blocks is the Messages dialect's deepest decoding (read inside
	// the result's key pass, it doubled the stack; docs/performance.md has the figure).
	t.Run("messages blocks and tool round trip", func(t *testing.T) {
		parkedStreamStack(t, messagesPath, `{"model":"mock-long","max_tokens":4096,"stream":true,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],`+
			`"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},`+
			`{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"x"}]}]}]}`)
	})
	t.Run("Claude Code's tool round trip", func(t *testing.T) {
		body, err := os.ReadFile("../protocol/testdata/anthropic/claude-code-2.1.332-tool-result.json")
		if err != nil {
			t.Fatal(err)
		}
		parkedStreamStack(t, messagesPath, strings.Replace(string(body), `"model": "mock-tools"`, `"model": "mock-long"`, 1))
	})
	// Gemini's: a plain stream, and its deepest decoding — parts, a function call and its
	// response, a system instruction, declarations in Google's OpenAPI subset.
	t.Run("gemini", func(t *testing.T) {
		parkedStreamStack(t, "/v1beta/models/mock-long:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	})
	t.Run("gemini parts and function round trip", func(t *testing.T) {
		parkedStreamStack(t, "/v1/models/mock-long:streamGenerateContent?alt=sse", `{"systemInstruction":{"role":"user","parts":[{"text":"s"}]},`+
			`"contents":[{"role":"user","parts":[{"text":"hi"},{"text":"there"}]},`+
			`{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":{"b":[1]}}},"thoughtSignature":"skip_thought_signature_validator"}]},`+
			`{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"x":{"y":"z"}}}}]}],`+
			`"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true}}}}]}],`+
			`"generationConfig":{"temperature":1,"topP":0.95,"topK":64,"thinkingConfig":{"includeThoughts":true}}}`)
	})
	t.Run("responses parts and tool round trip", func(t *testing.T) {
		parkedStreamStack(t, "/v1/responses", `{"model":"mock-long","stream":true,"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},`+
			`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},`+
			`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}]}`)
	})
	// Answers whose making goes deep — a JSON instance of a schema, tool calls — are made on a
	// goroutine of their own (onOwnStack): made on the stream's, they left it at 16 KB.
	schema := `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":"integer"}}}}}}`
	t.Run("chat json_object", func(t *testing.T) {
		parkedStreamStack(t, chatPath, `{"model":"mock-long","stream":true,"response_format":{"type":"json_object"},"messages":[{"role":"user","content":"hi json"}]}`)
	})
	t.Run("chat json_schema", func(t *testing.T) {
		parkedStreamStack(t, chatPath, `{"model":"mock-long","stream":true,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":`+schema+`}},"messages":[{"role":"user","content":"hi"}]}`)
	})
	t.Run("responses text.format", func(t *testing.T) {
		parkedStreamStack(t, "/v1/responses", `{"model":"mock-long","stream":true,"text":{"format":{"type":"json_schema","name":"s","schema":`+schema+`}},"input":"hi"}`)
	})
	t.Run("tool calls", func(t *testing.T) {
		cat, err := catalog.Parse([]byte("models:\n  - {id: mock-tools, kind: mock, behavior: tools, default_tokens: 24, " +
			"capabilities: {streaming: true, tools: true}, latency: {first_chunk: 0s, between_chunks: 1h}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		parkedStreamStackOn(t, cat, chatPath, `{"model":"mock-tools","stream":true,"messages":[{"role":"user","content":"hi"}],`+
			`"tools":[{"type":"function","function":{"name":"f","parameters":`+schema+`}}]}`)
	})
}

func parkedStreamStack(t *testing.T, path, body string) {
	t.Helper()
	parkedStreamStackOn(t, longProse(t, "{first_chunk: 0s, between_chunks: 1h}"), path, body)
}

func parkedStreamStackOn(t *testing.T, cat *catalog.Catalog, path, body string) {
	const K = 200
	// The connection goroutine's 8 KB and the background reader's few KB make about 10–12 KB;
	// one doubling of the connection goroutine's stack (to 16 KB) makes about 20 KB.
	const bound = 16 << 10
	h := newHarness(t, journaled, func(d *Deps) { d.Catalog = cat })
	srv := httptest.NewServer(h.handler)
	t.Cleanup(srv.Close) // cleanups run last-added first: the connections close before this
	request := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if strings.HasPrefix(path, messagesPath) { // Anthropic's dialect wants its version header
		request = strings.Replace(request, "\r\n\r\n", "\r\nAnthropic-Version: 2023-06-01\r\n\r\n", 1)
	}

	open := func(k int) {
		conns := make([]net.Conn, 0, k)
		for range k {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() }) // before srv.Close, which waits for the streams to end
			conns = append(conns, c)
			if _, err := c.Write([]byte(request)); err != nil {
				t.Fatal(err)
			}
		}
		// Every stream has sent its first frame (a role chunk, response.created), then parks for
		// an hour before its first token.
		for _, c := range conns {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			for frames := 0; frames < 1; {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(line, "data: ") {
					frames++
				}
			}
		}
	}
	open(1) // warm: the server's first allocations
	before := testutil.MemStats()
	open(K)
	time.Sleep(50 * time.Millisecond) // let every stream reach its pause
	after := testutil.MemStats()
	perStream := (int64(after.StackInuse) - int64(before.StackInuse)) / K
	t.Logf("goroutine stacks per parked stream: %d bytes", perStream)
	if perStream > bound {
		t.Errorf("a parked stream holds %d KiB of stack, want at most %d KiB: a handler frame grew past 8 KB", perStream>>10, bound>>10)
	}
}

// TestBlockedStreamStack measures the stack a stream holds while its write is blocked: an
// instant stream (it never pauses) whose client does not read, so the handler waits in a write
// for up to --write-timeout, as long as a slow reader keeps it there. Such a stream parks in
// the write, deep in the chunk loop, so its stack must be as small as a paused stream's: a
// change that wrote the response headers from inside the loop (net/http formats them in a deep
// frame) doubled it, with every other test passing (docs/performance-history.md).
func TestBlockedStreamStack(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 200 streams per dialect")
	}
	for _, tc := range []struct{ name, path, body string }{
		{"chat", chatPath, `{"model":"mock-long","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"responses", "/v1/responses", `{"model":"mock-long","stream":true,"input":"hi"}`},
		// Eight role chunks and a token, more than net/http's 2 KB response buffer: its first
		// write takes the longer path to the headers (response.Write, not Flush).
		{"chat n=8", chatPath, `{"model":"mock-long","stream":true,"n":8,"messages":[{"role":"user","content":"hi"}]}`},
		{"gemini", "/v1beta/models/mock-long:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const K = 200
			const bound = 16 << 10 // as TestParkedStreamStack
			h := newHarness(t, func(d *Deps) { d.Catalog = longProse(t, "instant") })
			srv := httptest.NewUnstartedServer(h.handler)
			srv.Listener = smallSendBuffers{srv.Listener} // a few KB fill them: the write blocks
			srv.Start()
			t.Cleanup(srv.Close)
			request := "POST " + tc.path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " +
				strconv.Itoa(len(tc.body)) + "\r\n\r\n" + tc.body
			open := func(k int) {
				for range k {
					c, err := net.Dial("tcp", srv.Listener.Addr().String())
					if err != nil {
						t.Fatal(err)
					}
					_ = c.(*net.TCPConn).SetReadBuffer(4096)
					t.Cleanup(func() { _ = c.Close() }) // before srv.Close: the writes fail, the streams end
					if _, err := c.Write([]byte(request)); err != nil {
						t.Fatal(err)
					}
				}
			}
			open(1)
			time.Sleep(300 * time.Millisecond)
			before := testutil.MemStats()
			open(K)
			time.Sleep(time.Second) // every stream has filled the buffers and waits in a write
			after := testutil.MemStats()
			perStream := (int64(after.StackInuse) - int64(before.StackInuse)) / K
			t.Logf("goroutine stacks per stream blocked in a write: %d bytes", perStream)
			if perStream > bound {
				t.Errorf("a stream blocked in a write holds %d KiB of stack, want at most %d KiB", perStream>>10, bound>>10)
			}
		})
	}
}

// smallSendBuffers gives every accepted connection a small send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}
