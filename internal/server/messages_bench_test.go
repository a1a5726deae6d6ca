package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"mockgateway/internal/catalog"
)

// BenchmarkMessagesJSON and BenchmarkMessagesStream64 are the same answer as ChatJSON and
// ChatStream64 (mock-chat, the same user text, 64 tokens) through POST /v1/messages: the
// difference per op against the chat benchmarks is what Anthropic's dialect costs a request
// (docs/performance.md).
func BenchmarkMessagesJSON(b *testing.B) {
	body := messagesBenchBody("")
	b.Run("telemetry=on", func(b *testing.B) { benchMessages(b, benchHandler(b, true), body) })
	b.Run("telemetry=off", func(b *testing.B) { benchMessages(b, benchHandler(b, false), body) })
}

func BenchmarkMessagesStream64(b *testing.B) {
	body := messagesBenchBody(`"stream":true`)
	b.Run("telemetry=on", func(b *testing.B) { benchMessages(b, benchHandler(b, true), body) })
	b.Run("telemetry=off", func(b *testing.B) { benchMessages(b, benchHandler(b, false), body) })
}

// messagesBenchBody is chatBody's request in Anthropic's dialect: the same user text, and a
// budget above the answer's 64 tokens (Anthropic requires one).
func messagesBenchBody(extra string) string {
	b := `{"model":"mock-chat","max_tokens":1024,"messages":[{"role":"user","content":"hello there"}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// benchMessages is benchStatus with the anthropic-version header every Anthropic client sends.
func benchMessages(b *testing.B, h *harness, body string) {
	b.ReportAllocs()
	start := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("POST", messagesPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		rr := httptest.NewRecorder()
		h.handler.ServeHTTP(rr, req)
		if rr.Code != 200 {
			b.Fatalf("%d %s", rr.Code, rr.Body.String())
		}
	}
}

// TestMessagesBenchSameLength holds the Messages benchmarks to the chat ones': an answer of the
// same length, JSON and streamed (a delta per token).
func TestMessagesBenchSameLength(t *testing.T) {
	cat, err := catalog.Parse([]byte("models:\n  - {id: mock-chat, kind: mock, behavior: chat, default_tokens: 64, capabilities: {streaming: true, tools: false}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) { d.Catalog = cat })
	m := decodeMessage(t, h.anthropic(messagesPath, messagesBenchBody("")).Body.Bytes())
	if m.Usage["output_tokens"] != float64(64) || m.StopReason != "end_turn" {
		t.Fatalf("%+v", m)
	}
	sr := h.anthropic(messagesPath, messagesBenchBody(`"stream":true`))
	if n := strings.Count(sr.Body.String(), "event: content_block_delta"); n != 64 {
		t.Fatalf("%d deltas", n)
	}
}
