package protocol

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mockgateway/internal/apierr"
)

func msgsWith(extra string) string {
	body := `{"model":"mock-echo","max_tokens":64,"messages":[{"role":"user","content":"hi"}]`
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

func msgsWithTurns(turns ...string) string {
	return `{"model":"m","max_tokens":64,"messages":[` + strings.Join(turns, ",") + `]}`
}

const toolUseTurn = `{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a"}}]}`

// TestDecodeMessagesTranslates: what each form of an Anthropic conversation becomes, in order.
func TestDecodeMessagesTranslates(t *testing.T) {
	cases := []struct {
		name, body string
		want       []Message
	}{
		{"string content", msgsWith(""), []Message{{Role: "user", Content: "hi"}}},
		{"system string first", msgsWith(`"system":"be brief"`),
			[]Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}},
		{"system blocks joined", msgsWith(`"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b"}]`),
			[]Message{{Role: "system", Content: "ab"}, {Role: "user", Content: "hi"}}},
		{"text blocks joined, images add nothing", msgsWithTurns(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}},{"type":"text","text":"b"}]}`),
			[]Message{{Role: "user", Content: "ab"}}},
		{"a tool loop", msgsWithTurns(`{"role":"user","content":"read it"}`, toolUseTurn,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"1\tPAPAYA","cache_control":{"type":"ephemeral"}}]}`),
			[]Message{{Role: "user", Content: "read it"},
				{Role: "assistant", Content: "Let me look.", ToolCalls: []ToolCall{{ID: "toolu_1", Name: "Read", Arguments: `{"file_path":"/a"}`}}},
				{Role: "tool", ToolCallID: "toolu_1", Content: "1\tPAPAYA"}}},
		{"a turn's text goes before its results", msgsWithTurns(toolUseTurn,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r"}],"is_error":true},{"type":"text","text":"and?"}]}`),
			[]Message{{Role: "assistant", Content: "Let me look.", ToolCalls: []ToolCall{{ID: "toolu_1", Name: "Read", Arguments: `{"file_path":"/a"}`}}},
				{Role: "user", Content: "and?"}, {Role: "tool", ToolCallID: "toolu_1", Content: "r"}}},
		{"Claude Code's system turn stays where it stands", msgsWithTurns(`{"role":"user","content":"hi"}`, `{"role":"system","content":[{"type":"text","text":"env","cache_control":{"type":"ephemeral"}}]}`),
			[]Message{{Role: "user", Content: "hi"}, {Role: "system", Content: "env"}}},
		{"thinking sent back adds nothing", msgsWithTurns(`{"role":"user","content":"q"}`,
			`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"redacted_thinking","data":"x"},{"type":"text","text":"a"}]}`),
			[]Message{{Role: "user", Content: "q"}, {Role: "assistant", Content: "a"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, e := DecodeAnthropicRequest([]byte(tc.body), Limits{})
			if e != nil {
				t.Fatalf("refused: %v", e)
			}
			if !slices.EqualFunc(req.Messages, tc.want, func(a, b Message) bool {
				return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls)
			}) {
				t.Fatalf("messages = %+v\nwant %+v", req.Messages, tc.want)
			}
		})
	}
}

// TestDecodeMessagesFields: the fields that change the chat request.
func TestDecodeMessagesFields(t *testing.T) {
	req, e := DecodeAnthropicRequest([]byte(msgsWith(`"stream":true,"stop_sequences":["END",""],"temperature":0.5,"top_k":5,"top_p":0.9,
		"tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object"},"defer_loading":true,"cache_control":{"type":"ephemeral","ttl":"1h"}},
			{"type":"web_search_20250305","name":"web_search","max_uses":3}],
		"tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true},
		"metadata":{"user_id":"{\"device_id\":\"x\"}"},"service_tier":"auto",
		"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"high"},
		"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}`)), Limits{})
	if e != nil {
		t.Fatalf("refused: %v", e)
	}
	if !req.Stream || !req.IncludeUsage || !slices.Equal(req.Stop, []string{"END"}) || *req.Temperature != 0.5 {
		t.Fatalf("stream/stop/temperature: %+v", req)
	}
	if len(req.Tools) != 1 || req.Tools[0].Name != "get_weather" || string(req.Tools[0].Parameters) != `{"type":"object"}` {
		t.Fatalf("tools: %+v (server tools are not the chat request's)", req.Tools)
	}
	if req.ToolChoice != (ToolChoice{Mode: ToolChoiceFunction, Function: "get_weather"}) || req.ParallelToolCalls {
		t.Fatalf("tool_choice: %+v parallel %v", req.ToolChoice, req.ParallelToolCalls)
	}
	if !req.Fields.anthropic() || !req.Fields.Has("stop_sequences") || !req.Fields.Has("model") || req.Fields.Has("stop") {
		t.Fatalf("fields: %v", req.Fields)
	}
	var back FieldSet
	if err := back.UnmarshalJSON(must(req.Fields.MarshalJSON())); err != nil || back != req.Fields {
		t.Fatalf("fields round trip: %v %v", back, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestDecodeMessagesBudget: max_tokens is required, and a budget above the ceiling is kept as
// sent (Claude Code asks for 32,000 on every call): the model's limit decides it, and the answer
// stops at the ceiling.
func TestDecodeMessagesBudget(t *testing.T) {
	req, e := DecodeAnthropicRequest([]byte(`{"model":"m","max_tokens":32000,"messages":[{"role":"user","content":"x"}]}`), Limits{})
	if e != nil || req.MaxTokens != 32000 || req.MaxTokensParam != "max_tokens" {
		t.Fatalf("max_tokens 32000: %+v %v", req, e)
	}
	req, e = DecodeAnthropicRequest([]byte(`{"model":"m","max_tokens":7,"messages":[{"role":"user","content":"x"}]}`), Limits{})
	if e != nil || req.MaxTokens != 7 {
		t.Fatalf("max_tokens 7: %+v %v", req, e)
	}
}

// TestDecodeMessagesOutputFormat: output_config.format is structured output.
func TestDecodeMessagesOutputFormat(t *testing.T) {
	req, e := DecodeAnthropicRequest([]byte(msgsWith(`"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}`)), Limits{})
	if e != nil || req.ResponseFormat.Type != FormatJSONSchema || string(req.ResponseFormat.Schema) != `{"type":"object","properties":{"a":{"type":"string"}}}` {
		t.Fatalf("%+v %v", req.ResponseFormat, e)
	}
}

// TestDecodeMessagesErrors: Anthropic's rules, and the mock's, with the field each names.
func TestDecodeMessagesErrors(t *testing.T) {
	cases := []struct {
		name, body string
		code       apierr.Code
		param      string
	}{
		{"not JSON", `{`, apierr.InvalidJSON, ""},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, apierr.MissingRequiredParameter, "max_tokens"},
		{"no messages", `{"model":"m","max_tokens":5}`, apierr.MissingRequiredParameter, "messages"},
		{"empty messages", `{"model":"m","max_tokens":5,"messages":[]}`, apierr.InvalidValue, "messages"},
		{"unknown field", msgsWith(`"temprature":1`), apierr.UnknownParameter, "temprature"},
		{"chat's stop is not Anthropic's", msgsWith(`"stop":["x"]`), apierr.UnknownParameter, "stop"},
		{"temperature above 1", msgsWith(`"temperature":1.5`), apierr.InvalidValue, "temperature"},
		{"max_tokens 0", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, apierr.InvalidValue, "max_tokens"},
		{"a tool role", msgsWithTurns(`{"role":"tool","content":"x"}`), apierr.InvalidValue, "messages[0].role"},
		{"tool_use in a user turn", msgsWithTurns(`{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}`), apierr.InvalidValue, "messages[0].content[0].type"},
		{"a result answering no call", msgsWithTurns(toolUseTurn, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}`),
			apierr.InvalidValue, "messages[1].content[0].tool_use_id"},
		{"a tool_result in a tool_result", msgsWithTurns(toolUseTurn, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[`+
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"x"}]}]}]}`),
			apierr.InvalidValue, "messages[1].content[0].content[0].type"},
		{"a tool_use in a tool_result", msgsWithTurns(toolUseTurn, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[`+
			`{"type":"tool_use","id":"a","name":"f","input":{}}]}]}`),
			apierr.InvalidValue, "messages[1].content[0].content[0].type"},
		{"unknown block member", msgsWithTurns(`{"role":"user","content":[{"type":"text","text":"a","colour":"red"}]}`), apierr.UnknownParameter, "messages[0].content[0].colour"},
		{"tool without a schema", msgsWith(`"tools":[{"name":"f"}]`), apierr.MissingRequiredParameter, "tools[0].input_schema"},
		{"a bad tool type", msgsWith(`"tools":[{"type":"function","name":"f","input_schema":{}}]`), apierr.InvalidValue, "tools[0].type"},
		{"tool_choice naming no tool", msgsWith(`"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"g"}`), apierr.InvalidValue, "tool_choice.name"},
		{"tool_choice requiring a server tool", msgsWith(`"tools":[{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"tool","name":"web_search"}`),
			apierr.UnsupportedParameter, "tool_choice.name"},
		{"any with no tools", msgsWith(`"tool_choice":{"type":"any"}`), apierr.InvalidValue, "tool_choice"},
		{"container", msgsWith(`"container":"c"`), apierr.UnsupportedParameter, "container"},
		{"thinking budget too small", msgsWith(`"thinking":{"type":"enabled","budget_tokens":10}`), apierr.InvalidValue, "thinking.budget_tokens"},
		{"a bad cache_control", msgsWith(`"system":[{"type":"text","text":"s","cache_control":{"type":"forever"}}]`), apierr.InvalidValue, "system[0].cache_control.type"},
		{"metadata beyond user_id", msgsWith(`"metadata":{"user":"x"}`), apierr.UnknownParameter, "metadata.user"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, e := DecodeAnthropicRequest([]byte(tc.body), Limits{})
			if e == nil || e.Code != tc.code || e.Param != tc.param {
				t.Fatalf("got %+v, want %s at %q", e, tc.code, tc.param)
			}
		})
	}
}

// TestDecodeCountTokens: count_tokens takes the conversation and the tools, and nothing an
// answer needs.
func TestDecodeCountTokens(t *testing.T) {
	req, e := DecodeCountTokensRequest([]byte(`{"model":"m","system":"s","messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{}}]}`), Limits{})
	if e != nil || len(req.Messages) != 2 || len(req.Tools) != 1 {
		t.Fatalf("%+v %v", req, e)
	}
	if _, e := DecodeCountTokensRequest([]byte(msgsWith("")), Limits{}); e == nil || e.Param != "max_tokens" || e.Code != apierr.UnknownParameter {
		t.Fatalf("max_tokens in count_tokens: %+v", e)
	}
}

// TestDecodeClaudeCode: the two requests Claude Code 2.1.332 sent in a headless tool loop
// (testdata/anthropic, captured on loopback; long texts kept, paths and ids replaced).
func TestDecodeClaudeCode(t *testing.T) {
	for _, name := range []string{"claude-code-2.1.332-first.json", "claude-code-2.1.332-tool-result.json"} {
		body, err := os.ReadFile(filepath.Join("testdata", "anthropic", name))
		if err != nil {
			t.Fatal(err)
		}
		req, e := DecodeAnthropicRequest(body, Limits{})
		if e != nil {
			t.Fatalf("%s refused: %v", name, e)
		}
		if req.Messages[0].Role != "system" || req.MaxTokens != 32000 || !req.Stream {
			t.Fatalf("%s: %+v", name, req)
		}
		if last := req.Messages[len(req.Messages)-1]; strings.Contains(name, "tool-result") && (last.Role != "tool" || last.ToolCallID == "") {
			t.Fatalf("%s: last message %+v", name, last)
		}
	}
}

// TestAnthropicFieldNames: the table a Messages FieldSet indexes is sorted, names every top-level
// key the decoder accepts, and its implied members are messages and model.
func TestAnthropicFieldNames(t *testing.T) {
	if !slices.IsSorted(anthropicFieldNames[:]) {
		t.Fatal("anthropicFieldNames is not sorted")
	}
	if anthropicRequired != 1<<anthropicFieldIndex("messages")|1<<anthropicFieldIndex("model") {
		t.Fatal("anthropicRequired is not messages and model")
	}
	values := map[string]string{"max_tokens": "8", "stream": "false", "stop_sequences": `["x"]`, "temperature": "0.5", "top_p": "0.5", "top_k": "5",
		"metadata": `{"user_id":"u"}`, "service_tier": `"auto"`, "thinking": `{"type":"disabled"}`, "context_management": `{"edits":[]}`,
		"mcp_servers": "[]", "output_config": `{"effort":"low"}`, "system": `"s"`, "tools": "[]", "tool_choice": `{"type":"auto"}`,
		"cache_control": `{"type":"ephemeral"}`, "inference_geo": `"us"`, "speed": `"fast"`, "diagnostics": `{"previous_message_id":"msg_1"}`}
	for _, name := range anthropicFieldNames {
		if name == "model" || name == "messages" {
			continue
		}
		body := `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":8,"` + name + `":` + values[name] + `}`
		if name == "max_tokens" {
			body = `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":8}`
		}
		req, e := DecodeAnthropicRequest([]byte(body), Limits{})
		if e != nil || !req.Fields.Has(name) {
			t.Errorf("%s: %v, fields %v", name, e, req)
		}
	}
}

// FuzzDecodeMessagesRequest: whatever the body, the Messages decoder (and count_tokens') answers
// a request or one of the decoder's errors naming a place; the same body the same way; and its
// two runs (decode_path.go) agree.
func FuzzDecodeMessagesRequest(f *testing.F) {
	f.Add([]byte(msgsWith("")))
	f.Add([]byte(msgsWith(`"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"stream":true,"stop_sequences":["x"]`)))
	f.Add([]byte(msgsWithTurns(`{"role":"user","content":"read it"}`, toolUseTurn,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r"}]},{"type":"text","text":"t"}]}`)))
	f.Add([]byte(msgsWith(`"tools":[{"name":"f","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"w"}],"tool_choice":{"type":"any"}`)))
	f.Add(deepNestingSeed("messages")) // the worst nesting (TestDecodeCostIsLinearInDepth), and count_tokens'
	f.Add(deepNestingSeed("messages_input_schema"))
	for _, name := range []string{"claude-code-2.1.332-first.json", "claude-code-2.1.332-tool-result.json"} {
		if body, err := os.ReadFile(filepath.Join("testdata", "anthropic", name)); err == nil {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, count := range []bool{false, true} {
			if validObjectBody(body) {
				doc, lim := string(body), Limits{}.withDefaults()
				unnamedReq, unnamedErr := decodeAnthropicDoc(doc, lim, unnamedRoot, count)
				namedReq, namedErr := decodeAnthropicDoc(doc, lim, namedRoot, count)
				switch {
				case (unnamedErr == nil) != (namedErr == nil):
					t.Fatalf("unnamed run %v, named run %v", unnamedErr, namedErr)
				case namedErr != nil && (unnamedErr.Code != namedErr.Code || strings.Contains(namedErr.Param, unnamedRoot)):
					t.Fatalf("unnamed run %+v, named run %+v", unnamedErr, namedErr)
				case namedErr == nil && !reflect.DeepEqual(unnamedReq, namedReq):
					t.Fatalf("unnamed run %+v, named run %+v", unnamedReq, namedReq)
				}
			}
			r, err := decodeAnthropic(body, Limits{}, count)
			if err != nil {
				if r != nil || !slices.Contains(decoderCodes, err.Code) || err.Message == "" || strings.Contains(err.Param, unnamedRoot) {
					t.Fatalf("unexpected error %+v (request %v)", err, r)
				}
				if _, again := decodeAnthropic(body, Limits{}, count); again == nil || *again != *err {
					t.Fatalf("not deterministic: %+v then %+v", err, again)
				}
				continue
			}
			if r == nil || r.Model == "" || len(r.Messages) == 0 || !r.Fields.anthropic() || r.MaxTokens > MaxBudget {
				t.Fatalf("accepted as %+v", r)
			}
		}
	})
}
