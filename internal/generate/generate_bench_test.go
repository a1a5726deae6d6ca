package generate

import (
	"strings"
	"testing"

	"mockgateway/internal/protocol"
)

// The benchmarks of the common answers (issue 16). The short answer is the load test's: mock-echo
// answering a 15-word message with 16 pieces, as JSON (Generate) and as a stream (Prepare, which
// makes an echo whole as Generate does). The 4,096-piece answers show that the short answer's
// savings cost the long ones nothing.
//
//	go test -run '^$' -bench 'Generate|RequestSeed|CheckContext' -benchmem ./internal/generate

func BenchmarkGenerateEcho16(b *testing.B) {
	in := echo16()
	b.ReportAllocs()
	for b.Loop() {
		_ = Generate(in)
	}
}

func BenchmarkGenerateEcho16Stream(b *testing.B) {
	in := echo16()
	in.Request.Stream = true
	b.ReportAllocs()
	for b.Loop() {
		_ = Prepare(in)
	}
}

// BenchmarkGenerateLong: 4,096 output pieces, of prose (n=1 and n=8) and of an echoed prompt.
func BenchmarkGenerateLong(b *testing.B) {
	echo := userRequest(strings.Repeat("lorem ipsum dolor sit amet ", 1000))
	for _, c := range []struct {
		name string
		in   Input
	}{
		{"chat-4096", Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096, Request: userRequest("hello")}},
		{"chat-4096-n=8", Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 4096,
			Request: &protocol.Request{N: 8, Messages: userRequest("hello").Messages}}},
		{"echo-4096", Input{Model: "mock-echo", Behavior: BehaviorEcho, TokenCeiling: 4096, Request: echo}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Generate(c.in)
			}
		})
	}
}

// BenchmarkGenerateToolCalls: mock-tools calling two tools in parallel, with small schemas.
func BenchmarkGenerateToolCalls(b *testing.B) {
	in := Input{Model: "mock-tools", Behavior: BehaviorTools, DefaultTokens: 24, Request: &protocol.Request{
		N: 1, Messages: userRequest("weather?").Messages, Tools: weatherTools(), ParallelToolCalls: true}}
	b.ReportAllocs()
	for b.Loop() {
		_ = Generate(in)
	}
}

// BenchmarkRequestSeed: the hash of a short request (the load test's) and of one with a 4 KiB
// system prompt, whose encoding does not fit the seed's stack buffer.
func BenchmarkRequestSeed(b *testing.B) {
	long := &protocol.Request{N: 1, Messages: []protocol.Message{
		{Role: "system", Content: strings.Repeat("be brief ", 455)}, {Role: "user", Content: loadTestMessage}}}
	for _, c := range []struct {
		name string
		req  *protocol.Request
	}{{"short", userRequest(loadTestMessage)}, {"4KiB", long}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = requestSeed("mock-chat", c.req)
			}
		})
	}
}

// BenchmarkCheckContext: a request that fits, as nearly every request does.
func BenchmarkCheckContext(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if CheckContext(30, 0, 128000) != nil {
			b.Fatal("rejected")
		}
	}
}
