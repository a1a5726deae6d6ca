package protocol

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestDecodeChatRequestAccepts(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		lim   Limits
		check func(t *testing.T, r *Request)
	}{
		{name: "minimal", body: reqWithMessages(`{"role":"user","content":"hi"}`), check: func(t *testing.T, r *Request) {
			want := Request{Model: "mock-echo", Messages: []Message{{Role: "user", Content: "hi"}}, N: 1, ParallelToolCalls: true}
			if fmt.Sprintf("%+v", *r) != fmt.Sprintf("%+v", want) {
				t.Errorf("got %+v, want %+v", *r, want)
			}
		}},
		{name: "leading and trailing whitespace", body: " \n" + reqWithMessages(`{"role":"user","content":"hi"}`) + "\n\t "},
		{name: "every optional field null", body: reqWith(`"stream":null,"stream_options":null,"max_tokens":null,
			"max_completion_tokens":null,"n":null,"stop":null,"seed":null,"tools":null,"tool_choice":null,
			"parallel_tool_calls":null,"response_format":null,"temperature":null,"top_p":null,
			"presence_penalty":null,"frequency_penalty":null,"logit_bias":null,"user":null,
			"safety_identifier":null,"prompt_cache_key":null,"metadata":null,"store":null,"service_tier":null,
			"reasoning_effort":null,"verbosity":null,"prompt_cache_retention":null,"prompt_cache_options":null,
			"logprobs":null,"top_logprobs":null,"modalities":null,"audio":null,"prediction":null,
			"web_search_options":null,"functions":null,"function_call":null,"moderation":null`),
			check: func(t *testing.T, r *Request) {
				if r.N != 1 || !r.ParallelToolCalls || r.Stream || r.Seed != nil || r.Temperature != nil ||
					r.Stop != nil || r.Tools != nil || r.ToolChoice.Mode != "" || r.ResponseFormat.Type != "" ||
					r.MaxTokens != 0 || r.MaxTokensParam != "" {
					t.Errorf("defaults not kept: %+v", r)
				}
			}},
		{name: "unknown key with null value", body: reqWith(`"vendor_extension":null,"Temperature":null`)},
		{name: "nested nulls", body: reqWithMessages(
			`{"role":"user","content":[{"type":"text","text":"hi","prompt_cache_breakpoint":null,"extra":null}],"name":null,"foo":null}`,
			`{"role":"assistant","content":null,"refusal":null,"audio":null,"function_call":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","parsed_arguments":null,"x":null}}],"annotations":null,"parsed":null}`,
			`{"role":"tool","tool_call_id":"c","content":"{}","name":null}`)},
		{name: "stream with options", body: reqWith(`"stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false}`),
			check: func(t *testing.T, r *Request) {
				if !r.Stream || !r.IncludeUsage {
					t.Errorf("stream %v include_usage %v", r.Stream, r.IncludeUsage)
				}
			}},
		{name: "stream false", body: reqWith(`"stream":false`)},
		{name: "empty stream_options with stream", body: reqWith(`"stream":true,"stream_options":{}`)},
		{name: "max_completion_tokens wins", body: reqWith(`"max_tokens":7,"max_completion_tokens":9`),
			check: wantBudget(9, "max_completion_tokens")},
		{name: "max_tokens alone", body: reqWith(`"max_tokens":7`), check: wantBudget(7, "max_tokens")},
		{name: "budget at ceiling", body: reqWith(`"max_completion_tokens":4096`), check: wantBudget(4096, "max_completion_tokens")},
		{name: "budget integral float", body: reqWith(`"max_tokens":1e2`), check: wantBudget(100, "max_tokens")},
		{name: "budget 2.0", body: reqWith(`"max_tokens":2.0`), check: wantBudget(2, "max_tokens")},
		{name: "above the ceiling", body: reqWith(`"max_tokens":32000`), check: wantBudget(32000, "max_tokens")},
		{name: "the largest budget", body: reqWith(`"max_completion_tokens":2147483647`), check: wantBudget(MaxBudget, "max_completion_tokens")},
		{name: "n 2.0", body: reqWith(`"n":2.0`), check: func(t *testing.T, r *Request) {
			if r.N != 2 {
				t.Errorf("n = %d", r.N)
			}
		}},
		{name: "n at max", body: reqWith(`"n":128`)},
		{name: "stop string", body: reqWith(`"stop":"END"`), check: wantStop("END")},
		{name: "stop empty string", body: reqWith(`"stop":""`), check: wantStop()},
		{name: "stop array drops empties", body: reqWith(`"stop":["a","","b","c"]`), check: wantStop("a", "b", "c")},
		{name: "stop empty array", body: reqWith(`"stop":[]`), check: wantStop()},
		{name: "seed int64 bounds", body: reqWith(`"seed":-9223372036854775808`), check: wantSeed(-9223372036854775808)},
		{name: "seed max", body: reqWith(`"seed":9223372036854775807`), check: wantSeed(9223372036854775807)},
		{name: "seed exponent", body: reqWith(`"seed":1.5e3`), check: wantSeed(1500)},
		{name: "seed negative zero", body: reqWith(`"seed":-0.0`), check: wantSeed(0)},
		{name: "sampling in range", body: reqWith(`"temperature":0,"top_p":1,"presence_penalty":-2,"frequency_penalty":2,"logit_bias":{"50256":-100,"1":100,"2":0.5}`),
			check: func(t *testing.T, r *Request) {
				if r.Temperature == nil || *r.Temperature != 0 {
					t.Errorf("temperature %v", r.Temperature)
				}
			}},
		{name: "temperature kept", body: reqWith(`"temperature":1.25`), check: func(t *testing.T, r *Request) {
			if r.Temperature == nil || *r.Temperature != 1.25 {
				t.Errorf("temperature %v", r.Temperature)
			}
		}},
		{name: "accepted with no effect", body: reqWith(`"user":"u","safety_identifier":"s","prompt_cache_key":"k",
			"metadata":{"a":"b"},"store":true,"service_tier":"flex","reasoning_effort":"xhigh","verbosity":"low",
			"prompt_cache_retention":"24h","prompt_cache_options":{"mode":"explicit","ttl":"30m"},
			"logprobs":false,"modalities":["text"],"parallel_tool_calls":true`)},
		{name: "metadata at limits", body: reqWith(`"metadata":{` + metadataPairs(15) + `,"` + strings.Repeat("k", 64) + `":"` + strings.Repeat("v", 512) + `"}`)},
		{name: "newest enum values", body: reqWith(`"service_tier":"fast","reasoning_effort":"max"`)},
		{name: "prompt_cache_retention in_memory", body: reqWith(`"prompt_cache_retention":"in_memory"`)},
		{name: "prompt_cache_retention in-memory", body: reqWith(`"prompt_cache_retention":"in-memory"`)},
		{name: "parallel_tool_calls false", body: reqWith(`"parallel_tool_calls":false,"tools":[` + weatherToolJSON + `]`),
			check: func(t *testing.T, r *Request) {
				if r.ParallelToolCalls {
					t.Errorf("parallel_tool_calls false not kept")
				}
			}},
		{name: "text parts joined", body: reqWithMessages(
			`{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
			`{"role":"developer","content":[{"type":"text","text":"c"}],"name":"dev"}`,
			`{"role":"user","content":[{"type":"text","text":"d","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}},{"type":"text","text":"e"}],"name":"ann"}`,
			`{"role":"assistant","content":[{"type":"text","text":"f"},{"type":"refusal","refusal":"g"}]}`,
			`{"role":"user","content":[]}`),
			check: func(t *testing.T, r *Request) {
				got := []string{}
				for _, m := range r.Messages {
					got = append(got, m.Role+":"+m.Name+":"+m.Content)
				}
				want := []string{"system::ab", "developer:dev:c", "user:ann:de", "assistant::fg", "user::"}
				if !slices.Equal(got, want) {
					t.Errorf("got %q, want %q", got, want)
				}
			}},
		{name: "assistant with only refusal", body: reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"assistant","refusal":"no"}`)},
		{name: "assistant with only audio", body: reqWithMessages(`{"role":"user","content":"hi"}`, `{"role":"assistant","audio":{"id":"audio_1"}}`)},
		{name: "assistant empty string content", body: reqWithMessages(`{"role":"assistant","content":""}`)},
		{name: "tool round trip", body: `{"model":"mock-tools","messages":[
			{"role":"user","content":"weather?"},
			{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[
				{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
				{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_a","content":"sunny"},
			{"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"noon"}]}],
			"tools":[` + weatherToolJSON + `],"tool_choice":"auto"}`,
			check: func(t *testing.T, r *Request) {
				a := r.Messages[1]
				want := []ToolCall{{"call_a", "get_weather", `{"city":"Paris"}`}, {"call_b", "get_time", "{}"}}
				if !slices.Equal(a.ToolCalls, want) || a.Content != "" {
					t.Errorf("assistant %+v", a)
				}
				if r.Messages[2].ToolCallID != "call_a" || r.Messages[3].Content != "noon" || r.ToolChoice.Mode != ToolChoiceAuto {
					t.Errorf("tool messages %+v / choice %+v", r.Messages[2:], r.ToolChoice)
				}
			}},
		{name: "SDK helper artefacts on sent-back messages", body: reqWithMessages(`{"role":"user","content":"hi"}`,
			`{"role":"assistant","content":null,"refusal":null,"parsed":{"a":1},"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}","parsed_arguments":{"a":1}}}]}`,
			`{"role":"tool","tool_call_id":"c","content":"ok"}`)},
		{name: "tools and parameters compacted", body: reqWith(`"tools":[{"type":"function","function":{"name":"get_weather","description":"d",
			"parameters": { "type" : "object", "properties": {"city": {"type":"string"}}, "required": ["city"] },"strict":true}},
			{"type":"function","function":{"name":"no-params_2"}}]`),
			check: func(t *testing.T, r *Request) {
				if len(r.Tools) != 2 {
					t.Fatalf("tools %+v", r.Tools)
				}
				t0 := r.Tools[0]
				if t0.Name != "get_weather" || t0.Description != "d" || !t0.Strict ||
					string(t0.Parameters) != `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}` {
					t.Errorf("tool 0 %+v (%s)", t0, t0.Parameters)
				}
				if r.Tools[1].Parameters != nil || r.Tools[1].Strict {
					t.Errorf("tool 1 %+v", r.Tools[1])
				}
			}},
		{name: "empty tools array", body: reqWith(`"tools":[],"tool_choice":"auto"`), check: func(t *testing.T, r *Request) {
			if r.Tools != nil {
				t.Errorf("tools %+v", r.Tools)
			}
		}},
		{name: "tool_choice none without tools", body: reqWith(`"tool_choice":"none"`), check: wantChoice(ToolChoiceNone, "")},
		{name: "tool_choice auto without tools", body: reqWith(`"tool_choice":"auto"`), check: wantChoice(ToolChoiceAuto, "")},
		{name: "tool_choice required", body: reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":"required"`), check: wantChoice(ToolChoiceRequired, "")},
		{name: "tool_choice named", body: reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"get_weather"}}`),
			check: wantChoice(ToolChoiceFunction, "get_weather")},
		{name: "response_format text", body: reqWith(`"response_format":{"type":"text"}`), check: wantFormat(FormatText, "", "")},
		{name: "response_format json_object", body: reqWith(`"response_format":{"type":"json_object"}`), check: wantFormat(FormatJSONObject, "", "")},
		{name: "response_format json_schema", body: reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"Out-1","description":"d","strict":true,
			"schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}}`),
			check: wantFormat(FormatJSONSchema, "Out-1", `{"type":"object","properties":{"a":{"type":"integer"}}}`)},
		{name: "response_format json_schema without schema", body: reqWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x"}}`),
			check: wantFormat(FormatJSONSchema, "x", "")},
		{name: "duplicate key last wins", body: `{"model":"x","model":"mock-echo","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Model != "mock-echo" {
					t.Errorf("model %q", r.Model)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeChatRequest([]byte(tc.body), tc.lim)
			if err != nil {
				t.Fatalf("error %s param=%q: %s", err.Code, err.Param, err.Message)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func wantBudget(n int, param string) func(*testing.T, *Request) {
	return func(t *testing.T, r *Request) {
		if r.MaxTokens != n || r.MaxTokensParam != param {
			t.Errorf("budget %d from %q, want %d from %q", r.MaxTokens, r.MaxTokensParam, n, param)
		}
	}
}

func wantStop(want ...string) func(*testing.T, *Request) {
	return func(t *testing.T, r *Request) {
		if !slices.Equal(r.Stop, want) || (len(want) == 0 && r.Stop != nil) {
			t.Errorf("stop %q, want %q", r.Stop, want)
		}
	}
}

func wantSeed(want int64) func(*testing.T, *Request) {
	return func(t *testing.T, r *Request) {
		if r.Seed == nil || *r.Seed != want {
			t.Errorf("seed %v, want %d", r.Seed, want)
		}
	}
}

func wantChoice(mode, fn string) func(*testing.T, *Request) {
	return func(t *testing.T, r *Request) {
		if r.ToolChoice != (ToolChoice{Mode: mode, Function: fn}) {
			t.Errorf("tool_choice %+v", r.ToolChoice)
		}
	}
}

func wantFormat(typ, name, schema string) func(*testing.T, *Request) {
	return func(t *testing.T, r *Request) {
		f := r.ResponseFormat
		if f.Type != typ || f.Name != name || string(f.Schema) != schema {
			t.Errorf("response_format %+v (%s)", f, f.Schema)
		}
	}
}
