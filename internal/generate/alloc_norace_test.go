//go:build !race

package generate

import "testing"

// Not built with -race: the race detector's instrumentation changes what escapes to the heap,
// so there the counts below are not the program's.

// TestShortAnswerAllocations: the load test's answer (mock-echo, 16 pieces) costs the generation,
// the choices, the text and its piece ends; prose adds its random stream; a request that fits
// the context window and the seed of a short request allocate nothing.
func TestShortAnswerAllocations(t *testing.T) {
	chat := Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 64, Request: userRequest("Tell me something"), PromptTokens: 12}
	short, echo := userRequest(loadTestMessage), echo16()
	for _, c := range []struct {
		name string
		max  float64
		f    func()
	}{
		{"echo", 4, func() { Generate(echo) }},
		{"echo stream", 4, func() { Prepare(echo) }},
		{"chat", 5, func() { Generate(chat) }},
		{"CheckContext", 0, func() { CheckContext(30, 16, 128000) }},
		{"requestSeed", 0, func() { requestSeed("mock-chat", short) }},
	} {
		if got := testing.AllocsPerRun(100, c.f); got > c.max {
			t.Errorf("%s: %v allocations, want at most %v", c.name, got, c.max)
		}
	}
}
