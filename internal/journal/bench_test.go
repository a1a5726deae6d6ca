package journal

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// sdkHeadersOf are the headers openai-python sends, plus the usual others.
func sdkHeadersOf() http.Header {
	return http.Header{
		"Authorization":               {"Bearer sk-test"},
		"Content-Type":                {"application/json"},
		"Accept":                      {"application/json"},
		"User-Agent":                  {"OpenAI/Python 1.109.1"},
		"X-Stainless-Lang":            {"python"},
		"X-Stainless-Package-Version": {"1.109.1"},
		"X-Stainless-Os":              {"Linux"},
		"X-Stainless-Arch":            {"x64"},
		"X-Stainless-Runtime":         {"CPython"},
		"X-Stainless-Runtime-Version": {"3.12.4"},
		"X-Stainless-Retry-Count":     {"0"},
		"X-Stainless-Async":           {"false"},
	}
}

// BenchmarkJournalAdd is what a call costs the journal: its shape, its SDK identity and the Add,
// for a one-message chat and a streamed tool round trip.
func BenchmarkJournalAdd(b *testing.B) {
	h := sdkHeadersOf()
	for _, bc := range []struct{ name, body string }{{"one-message", oneMessageBody}, {"tool-round-trip", toolRoundTripBody}} {
		b.Run(bc.name, func(b *testing.B) {
			req := decode(b, bc.body)
			j := New(Config{})
			start := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				j.Add("bench-scope", Entry{RequestID: "req_0123456789abcdef0123456789abcdef", Time: start,
					Method: "POST", Route: "/v1/chat/completions", Status: 200, Model: req.Model, Stream: req.Stream,
					DurationMS: 1.5, FinishReason: "stop", PromptTokens: 20, CompletionTokens: 9, Fixture: "generated",
					SDK: SDKOf(h), Shape: ShapeOf(req)})
			}
		})
	}
}

// BenchmarkJournalAddParallel adds from every P at once, each goroutine in its own scope (as
// parallel tests are) or all unscoped: the contention on the scope index and on a ring.
func BenchmarkJournalAddParallel(b *testing.B) {
	req := decode(b, oneMessageBody)
	h := sdkHeadersOf()
	for _, scoped := range []bool{true, false} {
		name := "unscoped"
		if scoped {
			name = "scope-per-goroutine"
		}
		b.Run(name, func(b *testing.B) {
			j := New(Config{})
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				scope := ""
				if scoped {
					scope = "scope-" + strconv.FormatInt(next.Add(1), 10)
				}
				for pb.Next() {
					j.Add(scope, Entry{RequestID: "req_1", Method: "POST", Route: "/v1/chat/completions", Status: 200,
						SDK: SDKOf(h), Shape: ShapeOf(req)})
				}
			})
		})
	}
}
