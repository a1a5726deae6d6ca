package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// anthropicShapes are encoding/json's forms of what encode_anthropic.go writes by hand.
type anthropicMessageJSON struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []json.RawMessage  `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthropicUsageJSON `json:"usage"`
}

type anthropicUsageJSON struct {
	InputTokens              int    `json:"input_tokens"`
	CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
	OutputTokens             int    `json:"output_tokens"`
	ServiceTier              string `json:"service_tier"`
}

type textBlockJSON struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolUseBlockJSON struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func marshalNoEscape(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// checkAnthropicMatches holds a message, its blocks, a delta and an error to encoding/json's
// bytes for the same values.
func checkAnthropicMatches(t *testing.T, text, name, stop string, n int) {
	t.Helper()
	input := `{"q":` + string(marshalNoEscape(t, text)) + `}`
	m := AnthropicMessage{ID: "msg_" + name, Model: name, StopReason: stop, StopSequence: stop,
		Content: []ContentBlock{{Text: text}, {ToolUse: true, ID: "toolu_" + name, Name: name, Input: input}},
		Usage:   AnthropicUsage{Input: n, Output: n / 2}}
	want := marshalNoEscape(t, anthropicMessageJSON{ID: m.ID, Type: "message", Role: "assistant", Model: name,
		Content: []json.RawMessage{marshalNoEscape(t, textBlockJSON{"text", text}),
			marshalNoEscape(t, toolUseBlockJSON{"tool_use", "toolu_" + name, name, json.RawMessage(input)})},
		StopReason: optional(stop), StopSequence: optional(stop),
		Usage: anthropicUsageJSON{InputTokens: n, OutputTokens: n / 2, ServiceTier: "standard"}})
	if got := m.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("message\n got %s\nwant %s", got, want)
	}
	if got, want := AppendAnthropicDelta(nil, false, text), []byte(`,"delta":`+string(marshalNoEscape(t, map[string]string{"text": text, "type": "text_delta"}))); !json.Valid(append([]byte("{"), append(got[1:], '}')...)) || !bytes.Equal(canonical(t, got), canonical(t, want)) {
		t.Fatalf("delta %s, want %s", got, want)
	}
	e := AppendAnthropicError(nil, name, text)
	if want := marshalNoEscape(t, struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}{name, text}); !bytes.Equal(e, want) {
		t.Fatalf("error %s, want %s", e, want)
	}
}

// canonical re-encodes a member list (",\"k\":v…") as a sorted object, to compare members
// whatever their order.
func canonical(t *testing.T, members []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(append(append([]byte("{"), members[1:]...), '}'), &v); err != nil {
		t.Fatalf("%s: %v", members, err)
	}
	return marshalNoEscape(t, v)
}

func TestAnthropicAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "hello world", `quote " and \ backslash`, "tab\tnl\ncr", "\x00\x1f\x7f", "<b>&amp;</b>",
		"café ☕ 😀", "line\u2028para\u2029"} {
		checkAnthropicMatches(t, s, "mock-tools", "end_turn", 12)
	}
}

// FuzzAnthropicAppendMatchesEncodingJSON: whatever text ends up in a Messages answer, the
// hand-written encoding is encoding/json's, byte for byte (invalid UTF-8 as encoding/json
// replaces it).
func FuzzAnthropicAppendMatchesEncodingJSON(f *testing.F) {
	f.Add("hello", "mock-echo", "stop_sequence", 3)
	f.Add("\"\\\n\x00<>&\u2028\xff", "", "", 0)
	f.Fuzz(func(t *testing.T, text, name, stop string, n int) {
		checkAnthropicMatches(t, text, name, stop, n)
	})
}
