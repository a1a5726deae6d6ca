package chat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"mockgateway/internal/generate"
)

// FuzzChatStream writes arbitrary content pieces and tool-argument fragments as a stream and
// reads it back by the SSE grammar: whatever the text holds (newlines, "data:", "[DONE]",
// invalid UTF-8), every frame is one "data: <json>" line and a blank line, every chunk is valid
// JSON, and the deltas reassemble the text (invalid UTF-8 becoming U+FFFD, as JSON requires).
func FuzzChatStream(f *testing.F) {
	f.Add("hello", " world", "{\"a\":", "1}", true)
	f.Add("line\nbreak", "\r\n\r\ndata: [DONE]\n\n", "", "\"", false)
	f.Add("\xff\xfe", "<script>", "\u2028", "\x00", true)
	f.Fuzz(func(t *testing.T, p1, p2, a1, a2 string, usage bool) {
		res := generate.Result{Choices: []generate.Choice{
			{Index: 0, Content: generate.PiecesOf(p1, p2), FinishReason: "stop"},
			{Index: 1, ToolCalls: []generate.ToolCall{{ID: "call_x", Name: "f", Arguments: generate.PiecesOf(a1, a2)}}, FinishReason: "tool_calls"},
		}}
		stream := streamBytes(t, res, usage)

		var content, args strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(stream))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		frames, done := 0, false
		for sc.Scan() {
			line := sc.Text()
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || done {
				t.Fatalf("not a data line, or data after [DONE]: %q", line)
			}
			if !sc.Scan() || sc.Text() != "" {
				t.Fatalf("frame not followed by a blank line")
			}
			if data == "[DONE]" {
				done = true
				continue
			}
			frames++
			var c struct {
				Choices []struct {
					Delta struct {
						Content   *string `json:"content"`
						ToolCalls []struct {
							Function struct {
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("chunk is not JSON: %v: %q", err, data)
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil {
					content.WriteString(*ch.Delta.Content)
				}
				for _, tc := range ch.Delta.ToolCalls {
					args.WriteString(tc.Function.Arguments)
				}
			}
		}
		if !done {
			t.Fatal("no [DONE]")
		}
		// encoding/json replaces each invalid byte with U+FFFD.
		valid := func(s string) string {
			var b strings.Builder
			for _, r := range s {
				b.WriteRune(r) // ranging over a string yields utf8.RuneError per invalid byte
			}
			return b.String()
		}
		if content.String() != valid(p1)+valid(p2) || args.String() != valid(a1)+valid(a2) {
			t.Fatalf("reassembled %q / %q", content.String(), args.String())
		}
	})
}
