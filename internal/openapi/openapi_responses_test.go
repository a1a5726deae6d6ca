package openapi

import (
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
)

// decoderDecls parses decoderFiles and returns their declarations.
func decoderDecls(t *testing.T) []ast.Decl {
	t.Helper()
	fset := token.NewFileSet()
	var decls []ast.Decl
	for _, name := range decoderFiles {
		f, err := parser.ParseFile(fset, filepath.Join("../protocol", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, f.Decls...)
	}
	return decls
}

// constInt evaluates an integer constant expression of literals (1<<31 - 1).
func constInt(e ast.Expr) (int64, bool) {
	v := constValue(e)
	if v == nil || v.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(v)
}

func constValue(e ast.Expr) constant.Value {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.INT {
			return nil
		}
		return constant.MakeFromLiteral(x.Value, x.Kind, 0)
	case *ast.ParenExpr:
		return constValue(x.X)
	case *ast.BinaryExpr:
		a, b := constValue(x.X), constValue(x.Y)
		if a == nil || b == nil {
			return nil
		}
		if x.Op == token.SHL || x.Op == token.SHR {
			n, ok := constant.Uint64Val(b)
			if !ok {
				return nil
			}
			return constant.Shift(a, x.Op, uint(n))
		}
		return constant.BinaryOp(a, x.Op, b)
	}
	return nil
}

// funcDecl finds a function of the decoder by name.
func funcDecl(t *testing.T, name string) *ast.FuncDecl {
	t.Helper()
	for _, d := range decoderDecls(t) {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			return fn
		}
	}
	t.Fatalf("the decoder has no func %s", name)
	return nil
}

// TestOpenAPIResponsesChecksAreTheDecoders holds the Responses request's values that the
// decoder checks in functions of their own (not inline in a table) to the document: include's
// values, top_logprobs' and max_output_tokens' bounds, and the item, part, tool and
// tool_choice types the decoder refuses as unsupported (which the document must not accept).
func TestOpenAPIResponsesChecksAreTheDecoders(t *testing.T) {
	include, _, _ := literalArgs(funcDecl(t, "checkInclude").Body.List, "asEnum")
	if got := docStrings(t, "/components/schemas/ResponsesRequest/properties/include/items/enum"); !slices.Equal(got, slices.Sorted(slices.Values(include))) {
		t.Errorf("include is one of %v in the decoder, %v in the document", include, got)
	}
	_, nums, _ := literalArgs(funcDecl(t, "checkTopLogprobs").Body.List, "asBoundedInt")
	if len(nums) != 2 || nums[0] != 0 {
		t.Fatalf("checkTopLogprobs' bounds %v: has its form changed?", nums)
	}
	if lo, hi := docAt(t, "/components/schemas/ResponsesRequest/properties/top_logprobs/minimum"), docAt(t, "/components/schemas/ResponsesRequest/properties/top_logprobs/maximum"); lo != json.Number("0") || hi != json.Number("0") {
		t.Errorf("top_logprobs is in [%v, %v] in the document; the decoder accepts 0 only (1 to %v: unsupported_parameter)", lo, hi, nums[1])
	}
	_, nums, _ = literalArgs(funcDecl(t, "maxOutputTokens").Body.List, "asBoundedInt")
	if got := docAt(t, "/components/schemas/ResponsesRequest/properties/max_output_tokens/minimum"); len(nums) != 1 || got != json.Number(strconv.Itoa(int(nums[0]))) {
		t.Errorf("max_output_tokens' floor is %v in the decoder, %v in the document", nums, got)
	}

	// Every type the decoder names, whether it takes it or refuses it as unsupported, is held to
	// the document through the differential test's bodies (responsesTypeCases); here, that each
	// of the decoder's lists is reached by one of those bodies.
	var listed []string
	for _, fn := range []string{"readInputItem", "readItemPart", "readResponsesTool", "readResponsesToolChoice"} {
		ast.Inspect(funcDecl(t, fn), func(n ast.Node) bool {
			if cc, ok := n.(*ast.CaseClause); ok {
				for _, e := range cc.List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						listed = append(listed, v)
					}
				}
			}
			return true
		})
	}
	var hosted []string
	for _, d := range decoderDecls(t) {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if len(vs.Names) == 1 && vs.Names[0].Name == "hostedTools" {
					for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
						v, _ := strconv.Unquote(e.(*ast.BasicLit).Value)
						hosted = append(hosted, v)
					}
				}
			}
		}
	}
	if len(listed) < 30 || len(hosted) < 10 {
		t.Fatalf("%d types listed, %d hosted tools: has the decoder's form changed?", len(listed), len(hosted))
	}
	cases := strings.Join(responsesTypeCases(), "\n")
	for _, typ := range append(listed, hosted...) {
		if !strings.Contains(cases, `"type":"`+typ+`"`) {
			t.Errorf("the decoder names the type %s, which no body of the differential test sends", typ)
		}
	}
}

// responsesTypeCases are bodies with every type the decoder names in an item, a part, a tool and
// a tool_choice (its own lists, read by TestOpenAPIResponsesChecksAreTheDecoders), each judged by
// the schema and the decoder.
func responsesTypeCases() []string {
	var out []string
	itemTypes := []string{"message", "function_call", "function_call_output", "item_reference", "reasoning",
		"file_search_call", "computer_call", "computer_call_output", "web_search_call", "image_generation_call",
		"code_interpreter_call", "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
		"apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
		"mcp_call", "custom_tool_call", "custom_tool_call_output", "compaction", "tool_search_call", "tool_search_output",
		"compaction_trigger", "program", "program_output", "additional_tools", "nope"}
	for _, typ := range itemTypes {
		out = append(out, `{"model":"m","input":[{"type":"`+typ+`","id":"x"}]}`,
			`{"model":"m","input":[{"role":"user","content":"hi"},{"type":"`+typ+`","role":"user","content":"hi","call_id":"c","name":"f","arguments":"{}","output":"o","id":"x"}]}`)
	}
	for _, typ := range []string{"input_text", "output_text", "refusal", "input_image", "input_file", "input_audio", "text", "nope"} {
		for _, role := range []string{"user", "assistant", "system", "developer"} {
			out = append(out, `{"model":"m","input":[{"role":"`+role+`","content":[{"type":"`+typ+`","text":"x"}]}]}`,
				`{"model":"m","input":[{"role":"`+role+`","content":[{"type":"`+typ+`","refusal":"x"}]}]}`)
		}
		out = append(out, `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"`+typ+`","text":"x"}]}]}`)
	}
	tools := []string{"function", "file_search", "computer", "computer_use_preview", "computer_use", "web_search", "web_search_preview",
		"web_search_2025_08_26", "web_search_preview_2025_03_11", "mcp", "code_interpreter", "image_generation",
		"local_shell", "shell", "custom", "namespace", "tool_search", "apply_patch", "programmatic_tool_calling", "nope"}
	for _, typ := range tools {
		out = append(out, `{"model":"m","input":"hi","tools":[{"type":"`+typ+`","name":"f"}]}`)
	}
	for _, typ := range append(tools, "allowed_tools", "none", "auto") {
		out = append(out, `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"`+typ+`","name":"f"}}`,
			`{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"`+typ+`"}}`)
	}
	for _, typ := range []string{"text", "json_object", "json_schema", "nope"} {
		out = append(out, `{"model":"m","input":"hi","text":{"format":{"type":"`+typ+`"}}}`,
			`{"model":"m","input":"hi","text":{"format":{"type":"`+typ+`","name":"x","schema":{"type":"object"}}}}`)
	}
	return out
}

// responsesKnownGaps are the Responses rules a JSON Schema cannot state as the decoder does.
var responsesKnownGaps = []knownGap{
	{`{"model":"m","input":"hi","temprature":null}`,
		"null members are dropped before the keys are classified, as in chat", true},
	{`{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`,
		"tool_choice must name a function defined in tools", false},
	{`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x","strict":true,"schema":` +
		strings.Repeat(`{"type":"array","items":`, 11) + `{"type":"string"}` + strings.Repeat(`}`, 11) + `}}}`,
		"a strict schema is held to Structured Outputs' size limits", false},
	{`{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c1","output":"x"}]}`,
		"a function_call_output must answer a function_call of the same input (unless an item_reference may stand for it)", false},
	{`{"model":"m","input":"hi","metadata":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","k":"11","l":"12","m":"13","n":"14","o":"15","p":"16","q":null}}`,
		"null metadata values are dropped before the 16-pair limit is counted", true},
}

// responsesAgreementCases are bodies aimed at the Responses decoder's rules.
var responsesAgreementCases = []string{
	`{"model":"m","input":"hi"}`,
	`{"model":"m","input":""}`,
	`{"model":"","input":"hi"}`,
	`{"model":"m"}`,
	`{"input":"hi"}`,
	`{"model":"m","input":[]}`,
	`{"model":"m","input":[],"instructions":"Be brief."}`,
	`{"model":"m","input":[],"instructions":[]}`,
	`{"model":"m","input":[],"instructions":[{"role":"system","content":"x"}]}`,
	`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`,
	`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}],"instructions":"x"}`,
	`{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]}]}`,
	`{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e","status":"completed"},{"role":"user","content":"hi"}]}`,
	`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
	`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}]}`,
	`{"model":"m","input":[{"type":"function_call_output","call_id":"","output":"x"}]}`,
	`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[]}]}`,
	`{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`,
	`{"model":"m","input":[{"id":"msg_1"}]}`,
	`{"model":"m","input":[{"role":"user"}]}`,
	`{"model":"m","input":[{"role":"tool","content":"x"}]}`,
	`{"model":"m","input":[{"role":"user","content":"x","phase":"commentary"}]}`,
	`{"model":"m","input":[{"role":"assistant","content":"x","phase":"final_answer"}]}`,
	`{"model":"m","input":[{"role":"assistant","content":"x","phase":"draft"}]}`,
	`{"model":"m","input":[{"type":"message","role":"user","content":[]}]}`,
	`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}}]}]}`,
	`{"model":"m","input":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x","prompt_cache_breakpoint":{"mode":"explicit"}}]}]}`,
	`{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x","annotations":[]}]}]}`,
	`{"model":"m","input":[{"type":"message","role":"user","content":"x","status":"done"}]}`,
	`{"model":"m","input":"hi","stream_options":{"include_obfuscation":false}}`,
	`{"model":"m","input":"hi","stream":true,"stream_options":{"include_obfuscation":false}}`,
	`{"model":"m","input":"hi","stream":true,"stream_options":{"include_usage":true}}`,
	`{"model":"m","input":"hi","max_output_tokens":15}`,
	`{"model":"m","input":"hi","max_output_tokens":16}`,
	`{"model":"m","input":"hi","max_output_tokens":4096}`,
	`{"model":"m","input":"hi","max_output_tokens":4097}`,
	`{"model":"m","input":"hi","max_output_tokens":16.0}`,
	`{"model":"m","input":"hi","max_tool_calls":0}`,
	`{"model":"m","input":"hi","max_tool_calls":2147483647}`,
	`{"model":"m","input":"hi","max_tool_calls":2147483648}`,
	`{"model":"m","input":"hi","top_logprobs":0}`,
	`{"model":"m","input":"hi","top_logprobs":1}`,
	`{"model":"m","input":"hi","top_logprobs":20}`,
	`{"model":"m","input":"hi","top_logprobs":21}`,
	`{"model":"m","input":"hi","top_logprobs":-1}`,
	`{"model":"m","input":"hi","background":false}`,
	`{"model":"m","input":"hi","background":true}`,
	`{"model":"m","input":"hi","previous_response_id":"resp_1"}`,
	`{"model":"m","input":"hi","conversation":{"id":"conv_1"}}`,
	`{"model":"m","input":"hi","prompt":{"id":"pmpt_1"}}`,
	`{"model":"m","input":"hi","context_management":[{"type":"compaction"}]}`,
	`{"model":"m","input":"hi","moderation":{}}`,
	`{"model":"m","input":"hi","reasoning":{"effort":"max","summary":"detailed","generate_summary":"auto"}}`,
	`{"model":"m","input":"hi","reasoning":{"effort":"extreme"}}`,
	`{"model":"m","input":"hi","reasoning":{"mode":"pro"}}`,
	`{"model":"m","input":"hi","truncation":"auto"}`,
	`{"model":"m","input":"hi","truncation":"sometimes"}`,
	`{"model":"m","input":"hi","include":["reasoning.encrypted_content","message.output_text.logprobs"]}`,
	`{"model":"m","input":"hi","include":["usage"]}`,
	`{"model":"m","input":"hi","include":"reasoning.encrypted_content"}`,
	`{"model":"m","input":"hi","service_tier":"flex","prompt_cache_retention":"24h","prompt_cache_options":{"mode":"implicit","ttl":"30m"}}`,
	`{"model":"m","input":"hi","service_tier":"ultrafast"}`,
	`{"model":"m","input":"hi","safety_identifier":"` + strings.Repeat("s", 128) + `"}`,
	`{"model":"m","input":"hi","safety_identifier":"` + strings.Repeat("s", 129) + `"}`,
	`{"model":"m","input":"hi","metadata":{"k":"v"},"user":"u","prompt_cache_key":"k","store":true}`,
	`{"model":"m","input":"hi","temperature":2,"top_p":1}`,
	`{"model":"m","input":"hi","temperature":2.5}`,
	`{"model":"m","input":"hi","tools":[]}`,
	`{"model":"m","input":"hi","tools":[],"tool_choice":"required"}`,
	`{"model":"m","input":"hi","tools":[],"tool_choice":"none"}`,
	`{"model":"m","input":"hi","tool_choice":"auto"}`,
	`{"model":"m","input":"hi","tool_choice":"sometimes"}`,
	`{"model":"m","input":"hi","tool_choice":{"type":"function"}}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"f"}}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","name":"has space"}]}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","description":null,"parameters":null,"strict":null}]}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":[],"strict":true}]}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","defer_loading":true,"output_schema":{}}]}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","allowed_callers":["direct"]}]}`,
	`{"model":"m","input":"hi","tools":[{"type":"function","function":{"name":"f"}}]}`,
	`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object"},"strict":true,"description":"d"},"verbosity":"high"}}`,
	`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x"}}}`,
	`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","schema":{}}}}`,
	`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"a.b","schema":{}}}}`,
	`{"model":"m","input":"hi","text":{"format":{"type":"text","name":"x"}}}`,
	`{"model":"m","input":"hi","text":{"verbosity":"loud"}}`,
	`{"model":"m","input":"hi","text":{}}`,
	`{"model":"m","input":"hi","response_format":{"type":"text"}}`,
	`{"model":"m","input":"hi","messages":[]}`,
	`{"model":"m","input":"hi","n":1}`,
}

// responsesCaseBodies reads the request bodies of internal/server's Responses tests
// (responses_test.go: responsesCases, and every other body literal of a /v1/responses call
// there), evaluating the string constant expressions they are built of.
func responsesCaseBodies(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../server/responses_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]ast.Expr{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					consts[n.Name] = vs.Values[i]
				}
			}
		}
	}
	var eval func(ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		case *ast.Ident:
			if c, ok := consts[x.Name]; ok {
				return eval(c)
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				a, ok1 := eval(x.X)
				b, ok2 := eval(x.Y)
				return a + b, ok1 && ok2
			}
		case *ast.ParenExpr:
			return eval(x.X)
		}
		return "", false
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		e, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		if s, ok := eval(e); ok && strings.HasPrefix(s, "{") && strings.Contains(s, `"input"`) && json.Valid([]byte(s)) {
			out = append(out, s)
			return false
		}
		return true
	})
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// responsesCorpus reads the Responses client corpus (internal/server/testdata/responses-clients):
// each body, and the error its entry expects (nil: accepted).
func responsesCorpus(t *testing.T) map[string]struct {
	Body   json.RawMessage
	Expect *struct{ Code, Param string }
} {
	t.Helper()
	files, _ := filepath.Glob("../server/testdata/responses-clients/*/*.json")
	out := map[string]struct {
		Body   json.RawMessage
		Expect *struct{ Code, Param string }
	}{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Body   json.RawMessage
			Expect *struct{ Code, Param string }
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = e
	}
	return out
}

// TestOpenAPIResponsesRequestSchemaAgreesWithDecoder is TestOpenAPIRequestSchemaAgreesWithDecoder
// for POST /v1/responses: on internal/server's Responses test bodies, the Responses client corpus,
// bodies aimed at each rule and type, and every one-step mutation of those, ResponsesRequest
// accepts exactly what DecodeResponsesRequest accepts — but for responsesKnownGaps, which must
// still disagree as documented. A corpus entry's expected error is the decoder's too.
func TestOpenAPIResponsesRequestSchemaAgreesWithDecoder(t *testing.T) {
	request := compileSchema(t, "/components/schemas/ResponsesRequest")
	decodeErr := func(body string) *apierr.Error {
		_, _, aerr := protocol.DecodeResponsesRequest([]byte(body), protocol.Limits{})
		return aerr
	}
	judge := judgeWith(request, decodeErr)
	for _, g := range responsesKnownGaps {
		d, s, why := judge(g.body)
		if d != g.decoderAccepts || s == d {
			t.Errorf("known gap no longer disagrees as documented (decoder %v, schema %v; %s): %s\n%s", d, s, why(), g.why, g.body)
		}
	}

	cases := responsesCaseBodies(t)
	if len(cases) < 10 {
		t.Fatalf("only %d bodies read from internal/server/responses_test.go", len(cases))
	}
	corpus := responsesCorpus(t)
	var corpusBodies []string
	for name, e := range corpus {
		corpusBodies = append(corpusBodies, string(e.Body))
		aerr := decodeErr(string(e.Body))
		switch {
		case e.Expect == nil && aerr != nil && aerr.Code != apierr.ContextLengthExceeded:
			t.Errorf("%s: an accepted body is refused by the decoder: %s %s", name, aerr.Code, aerr.Param)
		case e.Expect != nil && slices.Contains([]string{"unknown_parameter", "unsupported_parameter", "invalid_value", "missing_required_parameter"}, e.Expect.Code) &&
			(aerr == nil || string(aerr.Code) != e.Expect.Code || aerr.Param != e.Expect.Param):
			t.Errorf("%s: expects %s %s; the decoder answers %v", name, e.Expect.Code, e.Expect.Param, aerr)
		}
	}
	seeds := slices.Concat(cases, corpusBodies, responsesAgreementCases, responsesTypeCases())
	bodies, accepted, rejected, gaps := judgeSeeds(t, seeds, judge, func(body string, decoderAccepts bool) bool {
		if decoderAccepts {
			return nullMembersDropped(body, request)
		}
		aerr := decodeErr(body)
		return aerr != nil && aerr.Code == apierr.InvalidValue &&
			(aerr.Param == "tool_choice.name" || aerr.Param == "text.format" || strings.HasSuffix(aerr.Param, ".parameters") ||
				strings.HasSuffix(aerr.Param, ".call_id") && strings.Contains(aerr.Message, "no function_call"))
	})
	t.Logf("%d bodies (%d seeds: %d from responses_test.go, %d corpus, %d aimed, %d typed; and their mutations): %d accepted by both, %d rejected by both, %d known gaps",
		bodies, len(seeds), len(cases), len(corpusBodies), len(responsesAgreementCases), len(responsesTypeCases()), accepted, rejected, gaps)
	if accepted < 1000 || rejected < 1000 {
		t.Errorf("too few bodies judged: %d accepted, %d rejected", accepted, rejected)
	}
}
