package journal

import (
	"encoding/json"
	"slices"
	"testing"

	"mockgateway/internal/protocol"
)

// decode decodes a request body as the server does.
func decode(t testing.TB, body string) *protocol.Request {
	t.Helper()
	r, e := protocol.DecodeChatRequest([]byte(body), protocol.Limits{})
	if e != nil {
		t.Fatalf("decode: %v", e)
	}
	return r
}

const (
	oneMessageBody = `{"model":"mock-echo","messages":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`

	toolRoundTripBody = `{"model":"mock-tools","stream":true,"stream_options":{"include_usage":true},` +
		`"messages":[{"role":"system","content":"You are terse."},` +
		`{"role":"user","content":"Weather in Zürich?","name":"alice"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Zürich\"}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21}"},` +
		`{"role":"tool","tool_call_id":"call_2","content":"12:00"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","strict":true,` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}},` +
		`{"type":"function","function":{"name":"get_time"}}],` +
		`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false,` +
		`"max_completion_tokens":50,"max_tokens":10,"n":2,"stop":["END","","STOP"],"temperature":0.2,"user":"u-1"}`
)

func TestShapeOf(t *testing.T) {
	cases := []struct {
		name string
		body string
		want Shape
	}{
		{"one message", oneMessageBody, Shape{
			Messages: RoleCounts{User: 1}, ContentChars: RoleCounts{User: 43}, LongestContentChars: 43,
			N: 1, ParallelToolCalls: true,
		}},
		{"tool round trip", toolRoundTripBody, Shape{
			Messages:            RoleCounts{System: 1, User: 1, Assistant: 1, Tool: 2},
			ContentChars:        RoleCounts{System: 14, User: 18, Tool: 16}, // runes: "Zürich" is 6
			LongestContentChars: 18, MessageNames: true, ToolCalls: 2,
			Tools: 2, StrictTools: 1, ToolSchemas: 1, ToolChoice: "function",
			N: 2, MaxTokens: 50, MaxTokensParam: "max_completion_tokens", Stop: 2,
			Stream: true, IncludeUsage: true, ParallelToolCalls: false,
		}},
		{"content parts and developer", `{"model":"m","messages":[{"role":"developer","content":"Be kind."},` +
			`{"role":"user","content":[{"type":"text","text":"ab"},{"type":"text","text":"cdé"}]},` +
			`{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]},{"role":"user","content":""}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object"}}},"max_tokens":9}`, Shape{
			Messages:     RoleCounts{Developer: 1, User: 2, Assistant: 1},
			ContentChars: RoleCounts{Developer: 8, User: 5, Assistant: 2}, LongestContentChars: 8,
			ResponseFormat: "json_schema", ResponseSchema: true, N: 1, MaxTokens: 9, MaxTokensParam: "max_tokens",
			ParallelToolCalls: true,
		}},
		{"json_schema without schema, tools auto", `{"model":"m","messages":[{"role":"user","content":"x"}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"n"}},"tool_choice":"auto",` +
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`, Shape{
			Messages: RoleCounts{User: 1}, ContentChars: RoleCounts{User: 1}, LongestContentChars: 1,
			Tools: 1, ToolSchemas: 1, ToolChoice: "auto", ResponseFormat: "json_schema", N: 1, ParallelToolCalls: true,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := decode(t, tc.body)
			got := ShapeOf(r)
			tc.want.Fields = r.Fields // checked on its own below
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestShapeFieldsAndJSON(t *testing.T) {
	s := ShapeOf(decode(t, toolRoundTripBody))
	want := []string{"max_completion_tokens", "max_tokens", "messages", "model", "n", "parallel_tool_calls", "stop",
		"stream", "stream_options", "temperature", "tool_choice", "tools", "user"}
	if got := s.Fields.Names(); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"fields":["max_completion_tokens","max_tokens","messages","model","n","parallel_tool_calls","stop",` +
		`"stream","stream_options","temperature","tool_choice","tools","user"],` +
		`"messages":{"system":1,"user":1,"assistant":1,"tool":2},"content_chars":{"system":14,"user":18,"tool":16},` +
		`"longest_content_chars":18,"message_names":true,"tool_calls":2,"tools":2,"strict_tools":1,"tool_schemas":1,` +
		`"tool_choice":"function","n":2,"max_tokens":50,"max_tokens_param":"max_completion_tokens","stop":2,` +
		`"stream":true,"include_usage":true,"parallel_tool_calls":false}`
	if string(b) != wantJSON {
		t.Errorf("JSON\n got %s\nwant %s", b, wantJSON)
	}
	var back Shape
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

func TestShapeOfNilAndHandBuilt(t *testing.T) {
	if (ShapeOf(nil) != Shape{}) {
		t.Error("nil request has a shape")
	}
	// Values outside the protocol's closed sets are not carried over, whoever built the request.
	s := ShapeOf(&protocol.Request{N: 1, ToolChoice: protocol.ToolChoice{Mode: "get_weather", Function: "get_weather"},
		ResponseFormat: protocol.ResponseFormat{Type: "secret", Name: "secret"}, MaxTokens: 3, MaxTokensParam: "secret",
		Messages: []protocol.Message{{Role: "secret", Content: "abc"}}})
	if s.ToolChoice != "" || s.ResponseFormat != "" || s.MaxTokensParam != "" || s.Messages != (RoleCounts{}) {
		t.Errorf("values outside the closed sets kept: %+v", s)
	}
	if s.LongestContentChars != 3 {
		t.Errorf("longest %d", s.LongestContentChars)
	}
}

func TestShapeOfAllocatesNothing(t *testing.T) {
	r := decode(t, toolRoundTripBody)
	if n := testing.AllocsPerRun(100, func() { _ = ShapeOf(r) }); n != 0 {
		t.Errorf("ShapeOf: %v allocations", n)
	}
}
