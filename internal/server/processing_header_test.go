package server

import "testing"

// TestProcessingHeaderIsOpenAIs: Openai-Processing-Ms is OpenAI's header — a chat or Responses
// answer carries it, JSON or streamed; an Anthropic or a Gemini answer does not, as their APIs
// send none.
func TestProcessingHeaderIsOpenAIs(t *testing.T) {
	h := newHarness(t)
	messages := `{"model":"mock-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	for _, c := range []struct {
		name string
		do   func() map[string][]string
		want bool
	}{
		{"chat", func() map[string][]string { return h.do("POST", chatPath, chatBody("mock-chat", "")).Header() }, true},
		{"chat stream", func() map[string][]string {
			return h.do("POST", chatPath, chatBody("mock-chat", `"stream":true`)).Header()
		}, true},
		{"messages", func() map[string][]string { return h.anthropic(messagesPath, messages).Header() }, false},
		{"messages stream", func() map[string][]string {
			return h.anthropic(messagesPath, `{"model":"mock-chat","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`).Header()
		}, false},
		{"gemini", func() map[string][]string {
			return h.do("POST", geminiPath("v1beta", "mock-chat", "generateContent"), gemini, googleKeyHeader...).Header()
		}, false},
		{"gemini stream", func() map[string][]string {
			return h.do("POST", geminiPath("v1beta", "mock-chat", "streamGenerateContent")+"?alt=sse", gemini, googleKeyHeader...).Header()
		}, false},
	} {
		_, got := c.do()["Openai-Processing-Ms"]
		if got != c.want {
			t.Errorf("%s: Openai-Processing-Ms present %v, want %v", c.name, got, c.want)
		}
	}
}
