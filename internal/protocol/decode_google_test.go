package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeGoogleTranslation: a Gemini conversation becomes the chat request it stands for —
// the system instruction first, thoughts dropped, a call and its response paired by name, the
// snake_case names read as camelCase ones, the model and the stream the route's.
func TestDecodeGoogleTranslation(t *testing.T) {
	body := `{"system_instruction":{"role":"user","parts":[{"text":"Be "},{"text":"brief."}]},"contents":[
		{"role":"user","parts":[{"text":"a"},{"text":"b"}]},
		{"role":"model","parts":[{"text":"thinking","thought":true},{"text":"ok"},{"functionCall":{"name":"f","args":{"x":1}}},{"function_call":{"name":"f","args":{}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"r":1}}},{"functionResponse":{"name":"f","response":{"r":2}}}]}],
		"tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object"}}]}],
		"tool_config":{"function_calling_config":{"mode":"ANY","allowed_function_names":["f"]}},
		"generation_config":{"max_output_tokens":64,"candidate_count":2,"stop_sequences":["z"],"thinking_config":{"thinking_budget":0}}}`
	req, e := DecodeGoogleRequest(GoogleCall{Model: "mock-tools", Stream: true}, []byte(body), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	want := []Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "ab"},
		{Role: "assistant", Content: "ok", ToolCalls: []ToolCall{{ID: "call_1_0", Name: "f", Arguments: `{"x":1}`}, {ID: "call_1_1", Name: "f", Arguments: `{}`}}},
		{Role: "tool", Name: "f", ToolCallID: "call_1_0", Content: `{"r":1}`},
		{Role: "tool", Name: "f", ToolCallID: "call_1_1", Content: `{"r":2}`},
	}
	if !reflect.DeepEqual(req.Messages, want) {
		t.Errorf("messages %+v", req.Messages)
	}
	if req.Model != "mock-tools" || !req.Stream || !req.IncludeUsage || req.MaxTokens != 64 || req.N != 2 || req.Stop[0] != "z" ||
		req.ToolChoice != (ToolChoice{Mode: ToolChoiceFunction, Function: "f"}) || req.Reasoning.Thinking != "disabled" {
		t.Errorf("%+v", req)
	}
	if got := req.Fields.Names(); !reflect.DeepEqual(got, []string{"max_tokens", "messages", "model", "n", "stop", "tool_choice", "tools"}) {
		t.Errorf("fields %v", got)
	}
}

// TestDecodeGoogleRefusals: what the real API refuses, named by its path as sent.
func TestDecodeGoogleRefusals(t *testing.T) {
	for _, c := range []struct{ body, param string }{
		{`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"temprature":1}}`, "generationConfig.temprature"},
		{`{"contents":[{"parts":[{"text":"x"}]}],"generation_config":{"topk":1}}`, "generation_config.topk"},
		{`{"contents":[]}`, "contents"},
		{`{"contents":[{"parts":[]}]}`, "contents[0].parts"},
		{`{"contents":[{"role":"system","parts":[{"text":"x"}]}]}`, "contents[0].role"},
		{`{"contents":[{"parts":[{"functionCall":{"name":"f"}}]}]}`, "contents[0].parts[0].functionCall"},
		{`{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"codeExecution":{}}]}`, "tools[0].codeExecution"},
		{`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/plain","responseJsonSchema":{"type":"object"}}}`, "generationConfig.responseMimeType"},
		{`{"contents":[{"parts":[{"text":"x"}]}],"model":"models/other"}`, "model"},
	} {
		_, e := DecodeGoogleRequest(GoogleCall{Model: "mock-chat"}, []byte(c.body), Limits{})
		if e == nil || e.Param != c.param {
			t.Errorf("%s: %+v, want param %s", c.body, e, c.param)
		}
	}
}

// TestOpenAPISchema holds the rewrite of Google's OpenAPI subset to what encoding/json makes of
// the same rules: types in lower case, nullable a null type, the ordering and titles dropped —
// a property named title kept.
func TestOpenAPISchema(t *testing.T) {
	in := `{"type":"OBJECT","title":"T","propertyOrdering":["title","n"],"properties":{"title":{"type":"STRING"},"n":{"type":"INTEGER","nullable":true},
		"list":{"type":"ARRAY","items":{"type":"NUMBER","format":"float"}},"u":{"anyOf":[{"type":"STRING"},{"type":"BOOLEAN"}]}},"required":["title"]}`
	out, e := openAPISchema("p", json.RawMessage(in))
	if e != nil {
		t.Fatal(e)
	}
	var got, want any
	_ = json.Unmarshal(out, &got)
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"title":{"type":"string"},"n":{"type":["integer","null"]},
		"list":{"type":"array","items":{"type":"number","format":"float"}},"u":{"anyOf":[{"type":"string"},{"type":"boolean"}]}},"required":["title"]}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s", out)
	}
}

// TestDecodeGoogleDeepSchema: a schema nested past Structured Outputs' limit is refused before
// it is rewritten, so the rewrite's depth, and its cost, stay bounded.
func TestDecodeGoogleDeepSchema(t *testing.T) {
	deep := `{"type":"STRING"}`
	for range 4000 {
		deep = `{"type":"ARRAY","items":` + deep + `}`
	}
	body := `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":` + deep + `}]}]}`
	_, e := DecodeGoogleRequest(GoogleCall{Model: "mock-tools"}, []byte(body), Limits{})
	if e == nil || e.Param != "tools[0].functionDeclarations[0].parameters" {
		t.Fatalf("%+v", e)
	}
}
