package server

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// normalize replaces what may differ between runs (id, created, processing time).
func normalize(b []byte) []byte {
	s := regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]+"`).ReplaceAllString(string(b), `"id":"chatcmpl-ID"`)
	s = regexp.MustCompile(`"created":\d+`).ReplaceAllString(s, `"created":0`)
	// A Responses answer's times (its ids are derived from the request: they stay).
	s = regexp.MustCompile(`"(created_at|completed_at)":\d+`).ReplaceAllString(s, `"$1":1800000000`)
	return []byte(s)
}

func TestGolden(t *testing.T) {
	h := newHarness(t)
	cases := []struct{ name, body string }{
		{"chat_json.golden", chatBody("mock-chat", `"seed":7`)},
		{"echo_stream_usage.golden", chatBody("mock-echo", `"stream":true,"stream_options":{"include_usage":true}`)},
		{"tools_json.golden", `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}]}`},
		{"tools_stream.golden", `{"model":"mock-tools","stream":true,"messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`},
	}
	cases = append(cases, []struct{ name, body string }{
		{"responses_json.golden", `{"model":"mock-chat","instructions":"Be brief.","input":"hi","max_output_tokens":16}`},
		{"responses_echo_stream.golden", `{"model":"mock-echo","stream":true,"input":"Say hello to the world"}`},
		{"responses_tools_stream.golden", `{"model":"mock-tools","stream":true,"input":"weather?","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}`},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := chatPath
			if strings.HasPrefix(c.name, "responses_") {
				path = "/v1/responses"
			}
			rr := h.do("POST", path, c.body)
			if rr.Code != 200 {
				t.Fatalf("%d %s", rr.Code, rr.Body.String())
			}
			golden(t, c.name, normalize(rr.Body.Bytes()))
		})
	}
	rr := h.do("GET", "/v1/models", "")
	golden(t, "models.golden", rr.Body.Bytes())
}

func contentOf(t *testing.T, body []byte) []string {
	t.Helper()
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string         `json:"content"`
				ToolCalls json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ch := range c.Choices {
		s := string(ch.Message.ToolCalls)
		if ch.Message.Content != nil {
			s += *ch.Message.Content
		}
		out = append(out, s)
	}
	return append(out, string(c.Usage))
}

func TestDeterminismAcrossInstances(t *testing.T) {
	a, b := newHarness(t), newHarness(t)
	reqs := []string{
		chatBody("mock-chat", `"n":3`),
		chatBody("mock-chat", `"seed":42,"max_tokens":9`),
		chatBody("mock-echo", `"stop":["there"]`),
		`{"model":"mock-tools","messages":[{"role":"user","content":"go"}],"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}},{"type":"function","function":{"name":"b"}}]}`,
	}
	for _, r := range reqs {
		ca, cb := contentOf(t, a.do("POST", chatPath, r).Body.Bytes()), contentOf(t, b.do("POST", chatPath, r).Body.Bytes())
		if strings.Join(ca, "|") != strings.Join(cb, "|") {
			t.Errorf("two instances differ for %s:\n%v\n%v", r, ca, cb)
		}
	}
	s1 := contentOf(t, a.do("POST", chatPath, chatBody("mock-chat", `"seed":1`)).Body.Bytes())[0]
	s2 := contentOf(t, a.do("POST", chatPath, chatBody("mock-chat", `"seed":2`)).Body.Bytes())[0]
	m2 := contentOf(t, a.do("POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"another question"}],"seed":1}`).Body.Bytes())[0]
	if s1 == s2 || s1 == m2 {
		t.Errorf("different seeds or messages gave the same content: %q %q %q", s1, s2, m2)
	}
}
