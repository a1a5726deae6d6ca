package protocol

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"mockgateway/internal/apierr"
)

const respMinimal = `"model":"mock-echo","input":"hi"`

func respWith(extra string) string { return "{" + respMinimal + "," + extra + "}" }

func respWithItems(items ...string) string {
	return `{"model":"mock-echo","input":[` + strings.Join(items, ",") + `]}`
}

// TestDecodeResponsesTranslates: what each input form becomes, in order.
func TestDecodeResponsesTranslates(t *testing.T) {
	cases := []struct {
		name, body string
		want       []Message
	}{
		{"string input", `{"model":"m","input":"hi"}`, []Message{{Role: "user", Content: "hi"}}},
		{"instructions first", `{"model":"m","input":"hi","instructions":"be brief"}`,
			[]Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}},
		{"instructions as items", `{"model":"m","input":"hi","instructions":[{"role":"developer","content":"x"}]}`,
			[]Message{{Role: "developer", Content: "x"}, {Role: "user", Content: "hi"}}},
		{"parts joined", respWithItems(`{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}`),
			[]Message{{Role: "user", Content: "ab"}}},
		{"an answer's text and calls are one assistant message", respWithItems(
			`{"role":"user","content":"q"}`,
			`{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"t","annotations":[],"logprobs":[]}]}`,
			`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`,
			`{"type":"function_call","call_id":"c2","name":"g","arguments":"{}","id":"fc_2","status":"completed"}`,
			`{"type":"function_call_output","call_id":"c1","output":"one"}`,
			`{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"two"}]}`),
			[]Message{{Role: "user", Content: "q"}, {Role: "assistant", Content: "t", ToolCalls: []ToolCall{
				{ID: "c1", Name: "f", Arguments: "{}"}, {ID: "c2", Name: "g", Arguments: "{}"}}},
				{Role: "tool", ToolCallID: "c1", Content: "one"}, {Role: "tool", ToolCallID: "c2", Content: "two"}}},
		{"calls without text", respWithItems(`{"role":"user","content":"q"}`, `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`),
			[]Message{{Role: "user", Content: "q"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}}}},
		{"a reference may stand for the call", respWithItems(`{"type":"item_reference","id":"fc_1"}`,
			`{"type":"function_call_output","call_id":"c1","output":"x","name":"f","namespace":"n","caller":{"type":"direct"}}`),
			[]Message{{Role: "tool", ToolCallID: "c1", Content: "x"}}},
		{"SDK-typed members of a call", respWithItems(`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}","namespace":"n","caller":{"type":"direct"}}`,
			`{"type":"function_call_output","call_id":"c1","output":"x"}`),
			[]Message{{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}}, {Role: "tool", ToolCallID: "c1", Content: "x"}}},
		{"a reference without its type", respWithItems(`{"id":"msg_1"}`, `{"role":"user","content":"q"}`),
			[]Message{{Role: "user", Content: "q"}}},
		{"references and reasoning add nothing", respWithItems(`{"type":"item_reference","id":"msg_1"}`,
			`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"}`, `{"role":"user","content":"q"}`),
			[]Message{{Role: "user", Content: "q"}}},
		{"a refusal sent back", respWithItems(`{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}`, `{"role":"user","content":"q"}`),
			[]Message{{Role: "assistant", Content: "no"}, {Role: "user", Content: "q"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _, e := DecodeResponsesRequest([]byte(tc.body), Limits{})
			if e != nil {
				t.Fatal(e)
			}
			if !slices.EqualFunc(r.Messages, tc.want, func(a, b Message) bool {
				return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID && slices.Equal(a.ToolCalls, b.ToolCalls)
			}) {
				t.Errorf("messages\n got %+v\nwant %+v", r.Messages, tc.want)
			}
		})
	}
}

// TestDecodeResponsesFields: what the chat request keeps of the dialect's own fields.
func TestDecodeResponsesFields(t *testing.T) {
	body := respWith(`"stream":true,"max_output_tokens":64,"tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object","properties":{},"additionalProperties":false}}],` +
		`"tool_choice":{"type":"function","name":"f"},"parallel_tool_calls":false,"text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object"}},"verbosity":"low"},"temperature":0.5`)
	r, echo, e := DecodeResponsesRequest([]byte(body), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if !r.Stream || !r.IncludeUsage || r.MaxTokens != 64 || r.MaxTokensParam != "max_output_tokens" || r.ParallelToolCalls ||
		len(r.Tools) != 1 || !r.Tools[0].Strict || r.ToolChoice != (ToolChoice{Mode: ToolChoiceFunction, Function: "f"}) ||
		r.ResponseFormat.Type != FormatJSONSchema || r.ResponseFormat.Name != "s" || string(r.ResponseFormat.Schema) != `{"type":"object"}` ||
		r.Temperature == nil || *r.Temperature != 0.5 {
		t.Errorf("decoded %+v", r)
	}
	want := []string{"input", "max_output_tokens", "model", "parallel_tool_calls", "stream", "temperature", "text", "tool_choice", "tools"}
	if got := r.Fields.Names(); !slices.Equal(got, want) || !r.Fields.responses() || !r.Fields.Has("input") || r.Fields.Has("messages") {
		t.Errorf("fields %v, want %v", got, want)
	}
	// The FieldSet survives the journal's JSON, dialect and all.
	b, _ := json.Marshal(r.Fields)
	var back FieldSet
	if err := json.Unmarshal(b, &back); err != nil || back != r.Fields {
		t.Errorf("round trip %s: %v %v", b, back, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte("{"+string(echo.members)+"}"), &members); err != nil {
		t.Fatalf("echo %s: %v", echo.members, err)
	}
	for k, v := range map[string]string{"max_output_tokens": "64", "parallel_tool_calls": "false", "temperature": "0.5",
		"tool_choice": `{"name":"f","type":"function"}`, "instructions": "null", "metadata": "{}", "truncation": `"disabled"`} {
		if string(members[k]) != v {
			t.Errorf("echo %s = %s, want %s", k, members[k], v)
		}
	}
	if _, ok := members["user"]; ok {
		t.Error("an absent user is echoed")
	}
	// Null members are absent to the decoder, and to the echo.
	_, echo, e = DecodeResponsesRequest([]byte(respWith(`"metadata":{"a":null,"b":"c"},"text":{"format":null,"verbosity":"low"}`)), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if !strings.Contains(string(echo.members), `"metadata":{"b":"c"}`) || !strings.Contains(string(echo.members), `"text":{"verbosity":"low"}`) {
		t.Errorf("echo with nulls: %s", echo.members)
	}
	// A schema's own nulls are its meaning: echoed as they came, however deep the schema.
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 500) + `{"type":"string","default":null}` + strings.Repeat(`}}`, 500)
	_, echo, e = DecodeResponsesRequest([]byte(respWith(`"text":{"format":{"type":"json_schema","name":"s","schema":`+deep+`}}`)), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if !strings.Contains(string(echo.members), `"schema":`+deep) {
		t.Errorf("the schema was not echoed as it came")
	}
}

// TestDecodeResponsesErrors: one rule a row, each refused with the code and param OpenAI gives.
func TestDecodeResponsesErrors(t *testing.T) {
	cases := []struct{ name, body, code, param string }{
		{"not an object", `[]`, "invalid_json", ""},
		{"no input", `{"model":"m"}`, "missing_required_parameter", "input"},
		{"no model", `{"input":"hi"}`, "missing_required_parameter", "model"},
		{"unknown member", respWith(`"messages":[]`), "unknown_parameter", "messages"},
		{"previous_response_id", respWith(`"previous_response_id":"resp_1"`), "unsupported_parameter", "previous_response_id"},
		{"conversation", respWith(`"conversation":{"id":"c"}`), "unsupported_parameter", "conversation"},
		{"background", respWith(`"background":true`), "unsupported_parameter", "background"},
		{"prompt", respWith(`"prompt":{"id":"p"}`), "unsupported_parameter", "prompt"},
		{"hosted tool", respWith(`"tools":[{"type":"file_search","vector_store_ids":["v"]}]`), "unsupported_parameter", "tools[0].type"},
		{"web search's unknown member", respWith(`"tools":[{"type":"web_search","name":"f"}]`), "unknown_parameter", "tools[0].name"},
		{"web search preview's filters", respWith(`"tools":[{"type":"web_search_preview","filters":{}}]`), "unknown_parameter", "tools[0].filters"},
		{"an empty namespace", respWith(`"tools":[{"type":"namespace","name":"n","description":"d","tools":[]}]`), "invalid_value", "tools[0].tools"},
		{"a namespace's hosted tool", respWith(`"tools":[{"type":"namespace","name":"n","description":"d","tools":[{"type":"web_search"}]}]`), "invalid_value", "tools[0].tools[0].type"},
		{"required with web search only", respWith(`"tools":[{"type":"web_search"}],"tool_choice":"required"`), "unsupported_parameter", "tool_choice"},
		{"client_metadata of numbers", respWith(`"client_metadata":{"a":1}`), "invalid_value", "client_metadata"},
		{"unknown tool type", respWith(`"tools":[{"type":"nope","name":"f"}]`), "invalid_value", "tools[0].type"},
		{"nested function", respWith(`"tools":[{"type":"function","function":{"name":"f"}}]`), "unknown_parameter", "tools[0].function"},
		{"tool without name", respWith(`"tools":[{"type":"function"}]`), "missing_required_parameter", "tools[0].name"},
		{"budget below 16", respWith(`"max_output_tokens":15`), "invalid_value", "max_output_tokens"},
		{"budget past any model's", respWith(`"max_output_tokens":2147483648`), "invalid_value", "max_output_tokens"},
		{"stream_options without stream", respWith(`"stream_options":{"include_obfuscation":false}`), "invalid_value", "stream_options"},
		{"include_usage is chat's", respWith(`"stream":true,"stream_options":{"include_usage":true}`), "unknown_parameter", "stream_options.include_usage"},
		{"tool_choice names no tool", respWith(`"tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}`), "invalid_value", "tool_choice.name"},
		{"required without tools", respWith(`"tool_choice":"required"`), "invalid_value", "tool_choice"},
		{"hosted tool_choice", respWith(`"tool_choice":{"type":"file_search"}`), "unsupported_parameter", "tool_choice.type"},
		{"text format", respWith(`"text":{"format":{"type":"xml"}}`), "invalid_value", "text.format.type"},
		{"json_schema without schema", respWith(`"text":{"format":{"type":"json_schema","name":"s"}}`), "missing_required_parameter", "text.format.schema"},
		{"chat's response_format", respWith(`"response_format":{"type":"text"}`), "unknown_parameter", "response_format"},
		{"include", respWith(`"include":["everything"]`), "invalid_value", "include[0]"},
		{"reasoning effort", respWith(`"reasoning":{"effort":"maximal"}`), "invalid_value", "reasoning.effort"},
		{"truncation", respWith(`"truncation":"middle"`), "invalid_value", "truncation"},
		{"top_logprobs", respWith(`"top_logprobs":2`), "unsupported_parameter", "top_logprobs"},
		{"empty input", `{"model":"m","input":[]}`, "invalid_value", "input"},
		{"input of a number", `{"model":"m","input":3}`, "invalid_value", "input"},
		{"item type", respWithItems(`{"type":"thought"}`), "invalid_value", "input[0].type"},
		{"hosted tool's item", respWithItems(`{"type":"web_search_call","id":"w"}`), "unsupported_parameter", "input[0].type"},
		{"tool role", respWithItems(`{"role":"tool","content":"x"}`), "invalid_value", "input[0].role"},
		{"message without content", respWithItems(`{"role":"user"}`), "missing_required_parameter", "input[0].content"},
		{"image part", respWithItems(`{"role":"user","content":[{"type":"input_image","image_url":"x"}]}`), "unsupported_parameter", "input[0].content[0].type"},
		{"output_text from a user", respWithItems(`{"role":"user","content":[{"type":"output_text","text":"x"}]}`), "invalid_value", "input[0].content[0].type"},
		{"chat's text part", respWithItems(`{"role":"user","content":[{"type":"text","text":"x"}]}`), "invalid_value", "input[0].content[0].type"},
		{"call without call_id", respWithItems(`{"type":"function_call","name":"f","arguments":"{}"}`), "missing_required_parameter", "input[0].call_id"},
		{"output without output", respWithItems(`{"type":"function_call_output","call_id":"c"}`), "missing_required_parameter", "input[0].output"},
		{"output with an empty call_id", respWithItems(`{"type":"function_call_output","call_id":"","output":"x"}`), "invalid_value", "input[0].call_id"},
		{"item status", respWithItems(`{"role":"user","content":"x","status":"done"}`), "invalid_value", "input[0].status"},
		{"phase on a user message", respWithItems(`{"role":"user","content":"x","phase":"final_answer"}`), "unknown_parameter", "input[0].phase"},
		{"reference without id", respWithItems(`{"type":"item_reference"}`), "missing_required_parameter", "input[0].id"},
		{"a reference with content", respWithItems(`{"id":"msg_1","content":"x"}`), "unknown_parameter", "input[0].content"},
		{"a program item", respWithItems(`{"type":"program","id":"p"}`), "unsupported_parameter", "input[0].type"},
		{"computer tool_choice", respWith(`"tool_choice":{"type":"computer"}`), "unsupported_parameter", "tool_choice.type"},
		{"safety_identifier over 64", respWith(`"safety_identifier":"` + strings.Repeat("s", 65) + `"`), "invalid_value", "safety_identifier"},
		{"an output that answers no call", respWithItems(`{"role":"user","content":"q"}`, `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`,
			`{"type":"function_call_output","call_id":"c2","output":"x"}`), "invalid_value", "input[2].call_id"},
		{"an output without any call", respWithItems(`{"type":"function_call_output","call_id":"c1","output":"x"}`), "invalid_value", "input[0].call_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, e := DecodeResponsesRequest([]byte(tc.body), Limits{})
			if e == nil {
				t.Fatalf("accepted %s", tc.body)
			}
			if string(e.Code) != tc.code || e.Param != tc.param {
				t.Errorf("%s (%s): %s", e.Code, e.Param, e.Message)
			}
			checkRunsAgree(t, []byte(tc.body))
		})
	}
}

// TestDecodeResponsesFromOpenAIGo: what the official Go SDK sends for the Responses API, with
// every member the mock accepts set, decodes as sent.
func TestDecodeResponsesFromOpenAIGo(t *testing.T) {
	output := responses.ResponseInputItemParamOfFunctionCallOutput("Sunny")
	output.OfFunctionCallOutput.CallID = openai.String("call_1")
	params := responses.ResponseNewParams{
		Model:        "mock-tools",
		Instructions: openai.String("Be brief."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather"),
			output,
		}},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name: "get_weather", Strict: openai.Bool(true), Description: openai.String("Weather."),
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
				"required": []string{"city"}, "additionalProperties": false},
		}}},
		ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsAuto)},
		ParallelToolCalls: openai.Bool(true),
		MaxOutputTokens:   openai.Int(256),
		Temperature:       openai.Float(0.2),
		TopP:              openai.Float(0.9),
		Store:             openai.Bool(false),
		Metadata:          shared.Metadata{"k": "v"},
		SafetyIdentifier:  openai.String("user-1"),
		PromptCacheKey:    openai.String("key"),
		Truncation:        responses.ResponseNewParamsTruncationAuto,
		Include:           []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Reasoning:         shared.ReasoningParam{Effort: shared.ReasoningEffortLow},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "answer", Strict: openai.Bool(true),
				Schema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}},
					"required": []string{"a"}, "additionalProperties": false}},
		}},
	}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	r, _, e := DecodeResponsesRequest(body, Limits{})
	if e != nil {
		t.Fatalf("%s: %s", e.Message, body)
	}
	if len(r.Messages) != 4 || r.Messages[2].ToolCalls[0].ID != "call_1" || r.Messages[3].ToolCallID != "call_1" ||
		r.MaxTokens != 256 || r.ResponseFormat.Name != "answer" || len(r.Tools) != 1 {
		t.Errorf("decoded %+v from %s", r, body)
	}
}

// TestResponsesFieldNamesAreTheDecoders holds responsesFieldNames to responsesTopField, as
// TestFieldNamesAreTheDecoders holds the chat table to topField.
func TestResponsesFieldNamesAreTheDecoders(t *testing.T) {
	if !slices.IsSorted(responsesFieldNames[:]) || len(responsesFieldNames) > 63 {
		t.Fatal("responsesFieldNames must be sorted and leave the dialect bit free")
	}
	if responsesFieldNames[3] != "input" || responsesFieldNames[8] != "model" {
		t.Fatal("responsesRequired does not index input and model")
	}
	f, err := parser.ParseFile(token.NewFileSet(), "decode_responses.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var accepted []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "responsesTopField" {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				lit, ok := e.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				k, _ := strconv.Unquote(lit.Value)
				c := &responsesState{req: &Request{N: 1}, lim: Limits{}.withDefaults()}
				if class, _ := responsesTopField(c, k, k, `0`); class == supported || class == noEffect {
					accepted = append(accepted, k)
				}
			}
			return true
		})
	}
	slices.Sort(accepted)
	if !slices.Equal(accepted, responsesFieldNames[:]) {
		t.Errorf("decoder accepts %v\ntable names     %v", accepted, responsesFieldNames)
	}
}

// FuzzDecodeResponsesRequest: whatever the body, the Responses decoder answers a request and its
// echo, or one of the decoder's errors naming a place; the same body the same way; and its two
// runs (decode_path.go) agree.
func FuzzDecodeResponsesRequest(f *testing.F) {
	f.Add([]byte("{" + respMinimal + "}"))
	f.Add([]byte(respWith(`"instructions":"be brief","stream":true,"max_output_tokens":64,"metadata":{"k":"v"}`)))
	f.Add([]byte(respWithItems(`{"role":"user","content":[{"type":"input_text","text":"q"}]}`,
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"}`,
		`{"type":"function_call_output","call_id":"c1","output":"one"}`)))
	f.Add([]byte(respWith(`"tools":[{"type":"function","name":"f","parameters":{"type":"object"},"strict":true}],` +
		`"tool_choice":{"type":"function","name":"f"},"text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object"}}}`)))
	f.Add(deepNestingSeed("responses")) // the worst nesting (TestDecodeCostIsLinearInDepth)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkRunsAgree(t, body)
		r, echo, err := DecodeResponsesRequest(body, Limits{})
		if err != nil {
			if r != nil || echo != nil {
				t.Fatalf("request and error both returned")
			}
			if !slices.Contains(decoderCodes, err.Code) || err.Message == "" ||
				(err.Code == apierr.InvalidJSON) != (err.Param == "") || strings.Contains(err.Param, unnamedRoot) {
				t.Fatalf("unexpected error %+v", err)
			}
			if _, _, again := DecodeResponsesRequest(body, Limits{}); again == nil || *again != *err {
				t.Fatalf("not deterministic: %+v then %+v", err, again)
			}
			return
		}
		if r == nil || echo == nil || r.Model == "" || len(r.Messages) == 0 {
			t.Fatalf("accepted as %+v", r)
		}
		if !json.Valid([]byte("{" + string(echo.members) + "}")) {
			t.Fatalf("echo %s is not JSON members", echo.members)
		}
	})
}

// TestResponsesToolPatternsBesideHostedTools: a function tool's schema pattern over the bound is
// named at the tool's index as sent, though the web_search tool before it is not kept.
func TestResponsesToolPatternsBesideHostedTools(t *testing.T) {
	big := strings.Repeat(`[^b]{1000}`, 6)
	body := `{"model":"m","input":"hi","tools":[{"type":"web_search"},{"type":"function","name":"g","parameters":` +
		`{"type":"object","properties":{"code":{"type":"string","pattern":"` + big + `"}}}}]}`
	_, _, e := DecodeResponsesRequest([]byte(body), Limits{})
	if e == nil || e.Code != "invalid_value" || e.Param != "tools[1].parameters.properties.code.pattern" {
		t.Fatalf("%+v", e)
	}
}
