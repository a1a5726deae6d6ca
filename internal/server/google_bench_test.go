package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"mockgateway/internal/catalog"
)

// BenchmarkGoogleJSON and BenchmarkGoogleStream64 are the same answer as ChatJSON and
// ChatStream64 (mock-chat, the same user text, 64 tokens) through Gemini's generateContent and
// streamGenerateContent?alt=sse: the difference per op against the chat benchmarks is what
// Google's dialect costs a request (docs/performance.md).
func BenchmarkGoogleJSON(b *testing.B) {
	b.Run("telemetry=on", func(b *testing.B) {
		benchGoogle(b, benchHandler(b, true), geminiPath("v1beta", "mock-chat", "generateContent"))
	})
	b.Run("telemetry=off", func(b *testing.B) {
		benchGoogle(b, benchHandler(b, false), geminiPath("v1beta", "mock-chat", "generateContent"))
	})
}

func BenchmarkGoogleStream64(b *testing.B) {
	path := geminiPath("v1beta", "mock-chat", "streamGenerateContent") + "?alt=sse"
	b.Run("telemetry=on", func(b *testing.B) { benchGoogle(b, benchHandler(b, true), path) })
	b.Run("telemetry=off", func(b *testing.B) { benchGoogle(b, benchHandler(b, false), path) })
}

// googleBenchBody is chatBody's request in Gemini's dialect: the same user text.
const googleBenchBody = `{"contents":[{"role":"user","parts":[{"text":"hello there"}]}]}`

// benchGoogle is benchStatus with the x-goog-api-key header every Gemini client sends.
func benchGoogle(b *testing.B, h *harness, path string) {
	b.ReportAllocs()
	start := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("POST", path, strings.NewReader(googleBenchBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Goog-Api-Key", "dummy")
		rr := httptest.NewRecorder()
		h.handler.ServeHTTP(rr, req)
		if rr.Code != 200 {
			b.Fatalf("%d %s", rr.Code, rr.Body.String())
		}
	}
}

// TestGoogleBenchSameLength holds the Gemini benchmarks to the chat ones': an answer of the same
// length, JSON and streamed (a response per token, and the one that finishes).
func TestGoogleBenchSameLength(t *testing.T) {
	cat, err := catalog.Parse([]byte("models:\n  - {id: mock-chat, kind: mock, behavior: chat, default_tokens: 64, capabilities: {streaming: true, tools: false}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) { d.Catalog = cat })
	rr := h.do("POST", geminiPath("v1beta", "mock-chat", "generateContent"), googleBenchBody, googleKeyHeader...)
	if !strings.Contains(rr.Body.String(), `"candidatesTokenCount":64,`) {
		t.Fatalf("%s", rr.Body.String())
	}
	sr := h.do("POST", geminiPath("v1beta", "mock-chat", "streamGenerateContent")+"?alt=sse", googleBenchBody, googleKeyHeader...)
	if n := strings.Count(sr.Body.String(), "data: "); n != 65 {
		t.Fatalf("%d responses", n)
	}
}
