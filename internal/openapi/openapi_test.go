package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/apierr"
	"mockgateway/internal/journal"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// docAt returns the value at a JSON pointer of the document.
func docAt(t *testing.T, ptr string) any {
	t.Helper()
	var v any = decode(t, Document())
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(x) {
				t.Fatalf("%s: no %s", ptr, tok)
			}
			v = x[i]
		default:
			t.Fatalf("%s: no %s", ptr, tok)
		}
	}
	if v == nil {
		t.Fatalf("%s: not in the document", ptr)
	}
	return v
}

// compileSchema compiles the document's schema at ptr (a JSON pointer).
func compileSchema(t *testing.T, ptr string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("openapi.json", decode(t, Document())); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("openapi.json#" + ptr)
	if err != nil {
		t.Fatalf("%s: %v", ptr, err)
	}
	return s
}

// TestOpenAPIDocumentIsOpenAPI31 validates the document against the official OpenAPI 3.1
// schemas (vendored in testdata, see its README): the structure, and with schema-base every
// Schema Object against the OAS dialect of JSON Schema 2020-12.
func TestOpenAPIDocumentIsOpenAPI31(t *testing.T) {
	c := jsonschema.NewCompiler()
	for file, id := range map[string]string{
		"oas-3.1-schema-2022-10-07.json":      "https://spec.openapis.org/oas/3.1/schema/2022-10-07",
		"oas-3.1-schema-base-2022-10-07.json": "https://spec.openapis.org/oas/3.1/schema-base/2022-10-07",
		"oas-3.1-dialect-base.json":           "https://spec.openapis.org/oas/3.1/dialect/base",
		"oas-3.1-meta-base.json":              "https://spec.openapis.org/oas/3.1/meta/base",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(id, decode(t, b)); err != nil {
			t.Fatal(err)
		}
	}
	structure, err := c.Compile("https://spec.openapis.org/oas/3.1/schema/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	withSchemas, err := c.Compile("https://spec.openapis.org/oas/3.1/schema-base/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*jsonschema.Schema{"schema": structure, "schema-base": withSchemas} {
		if err := s.Validate(decode(t, Document())); err != nil {
			t.Errorf("openapi.json is not a valid OpenAPI 3.1 document (%s): %v", name, err)
		}
	}
	// The schemas do hold the document to them: a stray top-level key fails the structure, and
	// a broken Schema Object fails schema-base.
	bad := bytes.Replace(Document(), []byte(`"openapi": "3.1.0",`), []byte(`"openapi": "3.1.0", "x_typo": 1,`), 1)
	if structure.Validate(decode(t, bad)) == nil {
		t.Error("a document with an unknown top-level key validated")
	}
	bad = bytes.Replace(Document(), []byte(`"type": "integer"`), []byte(`"type": "integr"`), 1)
	if bytes.Equal(bad, Document()) || withSchemas.Validate(decode(t, bad)) == nil {
		t.Error("a document with an invalid Schema Object validated against schema-base")
	}

	// Every component schema compiles (every $ref resolves) and is used.
	var parsed struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &parsed); err != nil {
		t.Fatal(err)
	}
	for name := range parsed.Components.Schemas {
		compileSchema(t, "/components/schemas/"+name)
		if !bytes.Contains(Document(), []byte(`"#/components/schemas/`+name+`"`)) {
			t.Errorf("components/schemas/%s is never referenced", name)
		}
	}
}

// errorResponseCodes reads the code enum and type const of each ErrorNNN response.
func errorResponseCodes(t *testing.T) map[int]struct {
	Type  string
	Codes []string
} {
	t.Helper()
	var parsed struct {
		Components struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Properties struct {
							Error struct {
								Properties struct {
									Type struct {
										Const string `json:"const"`
									} `json:"type"`
									Code struct {
										Enum []string `json:"enum"`
									} `json:"code"`
								} `json:"properties"`
							} `json:"error"`
						} `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &parsed); err != nil {
		t.Fatal(err)
	}
	out := map[int]struct {
		Type  string
		Codes []string
	}{}
	for name, r := range parsed.Components.Responses {
		status, err := strconv.Atoi(strings.TrimPrefix(name, "Error"))
		if err != nil || !strings.HasPrefix(name, "Error") {
			t.Errorf("components/responses/%s: only ErrorNNN responses are expected", name)
			continue
		}
		p := r.Content["application/json"].Schema.Properties.Error.Properties
		codes := slices.Clone(p.Code.Enum)
		slices.Sort(codes)
		out[status] = struct {
			Type  string
			Codes []string
		}{p.Type.Const, codes}
	}
	return out
}

// TestOpenAPIErrorCodesAreApierrs: the envelope's closed code list is exactly apierr's, and each
// status's response lists exactly the codes apierr gives that status, with their type; so a
// code added there without the document fails here.
func TestOpenAPIErrorCodesAreApierrs(t *testing.T) {
	var got []string
	for _, c := range docAt(t, "/components/schemas/ErrorEnvelope/properties/error/properties/code/enum").([]any) {
		got = append(got, c.(string))
	}
	var want []string
	byStatus := map[int][]string{}
	typeOf := map[int]string{}
	types := map[string]bool{}
	for _, c := range apierr.Codes() {
		e := apierr.New(c, "", "")
		want = append(want, string(c))
		byStatus[e.Status] = append(byStatus[e.Status], string(c))
		if typeOf[e.Status] != "" && typeOf[e.Status] != e.Type {
			t.Fatalf("status %d has two error types in apierr: the document's per-status type cannot say so", e.Status)
		}
		typeOf[e.Status] = e.Type
		types[e.Type] = true
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the document's codes %v\nare not apierr's %v", got, want)
	}

	var gotTypes []string
	for _, ty := range docAt(t, "/components/schemas/ErrorEnvelope/properties/error/properties/type/enum").([]any) {
		gotTypes = append(gotTypes, ty.(string))
	}
	wantTypes := slices.Sorted(func(yield func(string) bool) {
		for ty := range types {
			if !yield(ty) {
				return
			}
		}
	})
	slices.Sort(gotTypes)
	if !slices.Equal(gotTypes, wantTypes) {
		t.Errorf("the document's error types %v are not apierr's %v", gotTypes, wantTypes)
	}

	responses := errorResponseCodes(t)
	for status, codes := range byStatus {
		slices.Sort(codes)
		r, ok := responses[status]
		switch {
		case !ok:
			t.Errorf("apierr has status %d (%v) but the document has no Error%d response", status, codes, status)
		case !slices.Equal(r.Codes, codes) || r.Type != typeOf[status]:
			t.Errorf("Error%d lists %s %v; apierr gives that status %s %v", status, r.Type, r.Codes, typeOf[status], codes)
		}
		if ok && http.StatusText(status) == "" {
			t.Errorf("status %d is not an HTTP status", status)
		}
	}
	for status := range responses {
		if _, ok := byStatus[status]; !ok {
			t.Errorf("Error%d: apierr has no code with that status", status)
		}
	}
}

// TestOpenAPIConstantsAreTheServices: the answer's fixed fields, the choice limit and the
// document's version are the ones the code uses.
func TestOpenAPIConstantsAreTheServices(t *testing.T) {
	for _, c := range []struct {
		ptr  string
		want any
	}{
		{"/components/schemas/ChatCompletion/properties/system_fingerprint/const", protocol.SystemFingerprint},
		{"/components/schemas/ChatCompletion/properties/service_tier/const", protocol.ServiceTier},
		{"/components/schemas/ChatCompletionChunk/properties/system_fingerprint/const", protocol.SystemFingerprint},
		{"/components/schemas/ChatCompletionChunk/properties/service_tier/const", protocol.ServiceTier},
		{"/components/schemas/ChatCompletionRequest/properties/n/maximum", json.Number(strconv.Itoa(protocol.DefaultMaxChoices))},
		{"/components/schemas/ChatCompletionRequest/properties/stop/anyOf/1/maxItems", json.Number("4")},
		{"/components/schemas/ChatCompletionRequest/properties/max_tokens/maximum", json.Number(strconv.Itoa(protocol.DefaultMaxTokensCeiling))},
		{"/components/schemas/ChatCompletionRequest/properties/max_completion_tokens/maximum", json.Number(strconv.Itoa(protocol.DefaultMaxTokensCeiling))},
		{"/components/schemas/ResponsesRequest/properties/max_output_tokens/maximum", json.Number(strconv.Itoa(protocol.DefaultMaxTokensCeiling))},
		{"/components/schemas/Response/properties/service_tier/const", protocol.ServiceTier},
	} {
		if got := docAt(t, c.ptr); got != c.want {
			t.Errorf("%s = %v, want %v", c.ptr, got, c.want)
		}
	}
	// The binary's version, from cmd/mockgateway (a main package, so read, not imported).
	src, err := os.ReadFile("../../cmd/mockgateway/run.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^var version = "([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("cmd/mockgateway/run.go: no var version")
	}
	if got := docAt(t, "/info/version"); got != string(m[1]) {
		t.Errorf("info.version = %v, the binary is %s", got, m[1])
	}
}

// decoderKeys are, for each function of internal/protocol's decoder that classifies an object's
// keys, the schema(s) of the document that object is, as JSON pointers.
var decoderKeys = map[string][]string{
	"topField":                    {"/components/schemas/ChatCompletionRequest"},
	"streamOptions":               {"/components/schemas/ChatCompletionRequest/properties/stream_options"},
	"checkPromptCacheOptions":     {"/components/schemas/ChatCompletionRequest/properties/prompt_cache_options"},
	"decodeMessage":               {"/components/schemas/SystemMessage", "/components/schemas/UserMessage", "/components/schemas/AssistantMessage", "/components/schemas/ToolMessage"},
	"decodeContentPart":           {"/components/schemas/TextPart", "/components/schemas/RefusalPart"},
	"decodePromptCacheBreakpoint": {"/components/schemas/TextPart/properties/prompt_cache_breakpoint"},
	"decodeAssistantAudio":        {"/components/schemas/AssistantMessage/properties/audio"},
	"decodeToolCall":              {"/components/schemas/ToolCallParam"},
	"decodeToolCallFunction":      {"/components/schemas/ToolCallParam/properties/function"},
	"decodeTool":                  {"/components/schemas/FunctionTool"},
	"decodeFunctionDefinition":    {"/components/schemas/FunctionTool/properties/function"},
	"decodeToolChoice":            {"/components/schemas/ToolChoice/anyOf/1"},
	"decodeNamedFunction":         {"/components/schemas/ToolChoice/anyOf/1/properties/function"},
	"decodeResponseFormat":        {"/components/schemas/ResponseFormat/oneOf/0", "/components/schemas/ResponseFormat/oneOf/1", "/components/schemas/ResponseFormat/oneOf/2"},
	"decodeJSONSchema":            {"/components/schemas/ResponseFormat/oneOf/2/properties/json_schema"},

	// The Responses API's (decode_responses.go, decode_items.go, decode_responses_tools.go).
	"responsesTopField":            {"/components/schemas/ResponsesRequest"},
	"decodeResponsesStreamOptions": {"/components/schemas/ResponsesRequest/properties/stream_options"},
	"decodeReasoning":              {"/components/schemas/ResponsesRequest/properties/reasoning"},
	"decodeInputMessage":           {"/components/schemas/ResponsesInputMessage", "/components/schemas/ResponsesAssistantMessage"},
	"decodeItemPart":               {"/components/schemas/ResponsesInputTextPart", "/components/schemas/ResponsesOutputTextPart", "/components/schemas/ResponsesRefusalPart"},
	"decodeFunctionCallItem":       {"/components/schemas/ResponsesFunctionCallItem"},
	"decodeFunctionCallOutput":     {"/components/schemas/ResponsesFunctionCallOutputItem"},
	"decodeItemReference":          {"/components/schemas/ResponsesItemReference"},
	"decodeReasoningItem":          {"/components/schemas/ResponsesReasoningItem"},
	"decodeResponsesTool":          {"/components/schemas/ResponsesFunctionTool"},
	"decodeResponsesToolChoice":    {"/components/schemas/ResponsesToolChoice/anyOf/1"},
	"decodeText":                   {"/components/schemas/ResponsesRequest/properties/text"},
	"decodeTextFormat":             {"/components/schemas/ResponsesTextFormat/oneOf/0", "/components/schemas/ResponsesTextFormat/oneOf/1", "/components/schemas/ResponsesTextFormat/oneOf/2"},
}

// decoderFiles are the files of internal/protocol whose tables decoderKeys maps.
var decoderFiles = []string{"decode.go", "decode_responses.go", "decode_items.go", "decode_responses_tools.go"}

// keyCase is one case of a decoder's switch over a key: the keys it matches and its body.
type keyCase struct {
	keys []string
	body []ast.Stmt
}

// keyCases finds the cases of fn's switches over the key variable k: `switch k { case "a": }`
// and `switch { case k == "a" && …: }`.
func keyCases(fn *ast.FuncDecl) []keyCase {
	var out []keyCase
	ast.Inspect(fn, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok {
			return true
		}
		tag, _ := sw.Tag.(*ast.Ident)
		for _, s := range sw.Body.List {
			cc := s.(*ast.CaseClause)
			var keys []string
			for _, e := range cc.List {
				if tag != nil && tag.Name == "k" {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						keys = append(keys, v)
					}
					continue
				}
				if tag != nil {
					continue
				}
				ast.Inspect(e, func(n ast.Node) bool {
					if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.EQL {
						if id, ok := b.X.(*ast.Ident); ok && id.Name == "k" {
							if lit, ok := b.Y.(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								keys = append(keys, v)
							}
						}
					}
					return true
				})
			}
			if len(keys) > 0 {
				out = append(out, keyCase{keys, cc.Body})
			}
		}
		return true
	})
	return out
}

// literalArgs returns the string and number literal arguments of the calls to fn in body.
func literalArgs(body []ast.Stmt, fn string) (strs []string, nums []float64, found bool) {
	for _, s := range body {
		ast.Inspect(s, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != fn {
				return true
			}
			found = true
			for _, a := range call.Args {
				neg := false
				if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.SUB {
					neg, a = true, u.X
				}
				if n, ok := constInt(a); ok {
					if _, isLit := a.(*ast.BasicLit); !isLit {
						if neg {
							n = -n
						}
						nums = append(nums, float64(n))
						continue
					}
				}
				lit, ok := a.(*ast.BasicLit)
				if !ok {
					continue
				}
				switch lit.Kind {
				case token.STRING:
					v, _ := strconv.Unquote(lit.Value)
					strs = append(strs, v)
				case token.INT, token.FLOAT:
					f, _ := strconv.ParseFloat(lit.Value, 64)
					if neg {
						f = -f
					}
					nums = append(nums, f)
				}
			}
			return true
		})
	}
	return strs, nums, found
}

// TestOpenAPIRequestFieldsAreTheDecoders reads internal/protocol's decoder and holds the request
// schema to it: every object's property names are exactly the keys the decoder's switch
// classifies (supported, or known and unsupported); every asEnum's values are the property's
// enum; every asRangedNumber's bounds are its minimum and maximum. A field, value or bound added
// to the decoder without the document (or the other way round) fails here.
func TestOpenAPIRequestFieldsAreTheDecoders(t *testing.T) {
	seen := map[string]bool{}
	checked := 0
	for _, d := range decoderDecls(t) {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		cases := keyCases(fn)
		if len(cases) == 0 {
			continue
		}
		name := fn.Name.Name
		ptrs, ok := decoderKeys[name]
		if !ok {
			t.Errorf("%v: %s classifies keys but decoderKeys does not map it to the document", decoderFiles, name)
			continue
		}
		seen[name] = true
		var keys []string
		props := map[string]map[string]any{}
		for _, c := range cases {
			keys = append(keys, c.keys...)
		}
		var docKeys []string
		for _, p := range ptrs {
			for k, v := range docAt(t, p+"/properties").(map[string]any) {
				docKeys = append(docKeys, k)
				props[k] = v.(map[string]any)
			}
		}
		keys = slices.Compact(slices.Sorted(slices.Values(keys)))
		docKeys = slices.Compact(slices.Sorted(slices.Values(docKeys)))
		if !slices.Equal(keys, docKeys) {
			t.Errorf("%s classifies %v;\nthe document (%v) has %v", name, keys, ptrs, docKeys)
		}
		for _, c := range cases {
			for _, k := range c.keys {
				prop := props[k]
				if prop == nil {
					continue
				}
				if vals, _, ok := literalArgs(c.body, "asEnum"); ok {
					var enum []string
					for _, v := range prop["enum"].([]any) {
						if v != nil {
							enum = append(enum, v.(string))
						}
					}
					if !slices.Equal(slices.Sorted(slices.Values(vals)), slices.Sorted(slices.Values(enum))) {
						t.Errorf("%s: %s is one of %v in the decoder, %v in the document", name, k, vals, enum)
					}
					checked++
				}
				for _, ranged := range []string{"asRangedNumber", "asBoundedInt"} {
					if _, nums, ok := literalArgs(c.body, ranged); ok && len(nums) == 2 {
						lo, _ := prop["minimum"].(json.Number).Float64()
						hi, _ := prop["maximum"].(json.Number).Float64()
						if lo != nums[0] || hi != nums[1] {
							t.Errorf("%s: %s is in [%v, %v] in the decoder, [%v, %v] in the document", name, k, nums[0], nums[1], lo, hi)
						}
						checked++
					}
				}
			}
		}
	}
	for name := range decoderKeys {
		if !seen[name] {
			t.Errorf("decoderKeys maps %s, which no longer classifies keys in %v", name, decoderFiles)
		}
	}
	if checked < 16 {
		t.Errorf("only %d enums and ranges checked: has the decoder's form changed?", checked)
	}
}

// knownGap is a request the schema cannot judge as the decoder does, and why.
type knownGap struct {
	body, why      string
	decoderAccepts bool
}

// knownGaps are the rules a JSON Schema cannot state (or that the schema deliberately states
// more strictly than the decoder); TestOpenAPIRequestSchemaAgreesWithDecoder checks that each
// still disagrees in the stated direction, so that the document can follow when the decoder
// changes.
var knownGaps = []knownGap{
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"temprature":null}`,
		"the decoder drops null members before classifying keys, so an unknown key with a null value is accepted; the schema keeps additionalProperties false", true},
	{`{"model":"m","messages":[{"role":"user","content":"hi","tool_calls":null}]}`,
		"a key of another role, null, is dropped the same way", true},
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`,
		"tool_choice must name a function defined in tools: a cross-reference JSON Schema cannot state", false},
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":` +
		strings.Repeat(`{"type":"array","items":`, 11) + `{"type":"string"}` + strings.Repeat(`}`, 11) + `}}}`,
		"a strict schema is held to Structured Outputs' size limits (here: 11 levels of nesting), which the document only describes", false},
	{`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","k":"11","l":"12","m":"13","n":"14","o":"15","p":"16","q":null}}`,
		"null metadata values are dropped before the 16-pair limit is counted; maxProperties counts them", true},
}

// agreementCases are bodies aimed at the decoder's rules, each judged by both.
var agreementCases = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[]}`,
	`{"model":"m"}`,
	`{"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[{"role":"function","content":"hi","name":"f"}]}`,
	`{"model":"m","messages":[{"role":"user","content":[]}]}`,
	`{"model":"m","messages":[{"role":"user","content":null}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`,
	`{"model":"m","messages":[{"role":"system","content":[{"type":"refusal","refusal":"no"}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":[{"type":"refusal","refusal":"no"},{"type":"text","text":"x"}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}}]}]}`,
	`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x","prompt_cache_breakpoint":{"ttl":"1h"}}]}]}`,
	`{"model":"m","messages":[{"role":"assistant"}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[]}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":null,"refusal":"no"}]}`,
	`{"model":"m","messages":[{"role":"assistant","audio":{"id":"a"}}]}`,
	`{"model":"m","messages":[{"role":"assistant","audio":{}}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":"x","function_call":{"name":"f","arguments":"{}"}}]}`,
	`{"model":"m","messages":[{"role":"assistant","content":"x","parsed":{"a":1},"annotations":[{"type":"url_citation"}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}","parsed_arguments":{}},"index":0}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"f","input":""}}]}]}`,
	`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}]}`,
	`{"model":"m","messages":[{"role":"tool","content":"x","tool_call_id":""}]}`,
	`{"model":"m","messages":[{"role":"tool","content":"x","tool_call_id":"c","name":"f"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x","tool_call_id":"c"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"x","refusal":"no"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"continuous_usage_stats":true}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":0}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4096,"max_completion_tokens":1}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2.5}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2.0}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"n":128}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"n":129}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":["a","b","c","d"]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":["a","b","c","d","e"]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":[null]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":-9223372036854775808}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":9223372036854775808}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":1e3}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[],"tool_choice":"required"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[],"tool_choice":"auto"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":"none"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"allowed_tools","allowed_tools":{}}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"has space"}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"custom","custom":{"name":"f"}}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"text","json_schema":{"name":"x"}}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","description":null,"schema":{"type":"object"}}}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a.b"}}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"xml"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":2,"top_p":0,"presence_penalty":-2,"frequency_penalty":2}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":2.01}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":"1"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"50256":-100,"1":100}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"1":101}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"safety_identifier":"` + strings.Repeat("s", 128) + `"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"safety_identifier":"` + strings.Repeat("s", 129) + `"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"` + strings.Repeat("k", 64) + `":"` + strings.Repeat("v", 512) + `"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"k":1}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"service_tier":"fast","reasoning_effort":"xhigh","verbosity":"low","prompt_cache_retention":"in-memory","store":false,"user":"u","prompt_cache_key":"k"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"service_tier":"turbo"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"prompt_cache_options":{"mode":"implicit","ttl":"30m"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"prompt_cache_options":{"ttl":"12h"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"logprobs":false}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"logprobs":true}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"modalities":["text"]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"modalities":["text","audio"]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"audio":{"voice":"alloy","format":"mp3"}}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"functions":[{"name":"f"}],"function_call":"auto"}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"prediction":null,"web_search_options":null,"moderation":null,"audio":null}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"}],"web_search_options":{}}`,
}

// fuzzSeeds reads the decoder's fuzz corpus: files of `go test fuzz v1` with one []byte value.
func fuzzSeeds(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../protocol/testdata/fuzz/FuzzDecodeChatRequest/*")
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) < 2 {
			continue
		}
		arg, ok := strings.CutPrefix(lines[1], "[]byte(")
		if !ok {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(arg, ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

// corpusBodies reads the client corpus's bodies (internal/server/testdata/clients).
func corpusBodies(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../server/testdata/clients/*/*.json")
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Body json.RawMessage }
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, string(e.Body))
	}
	return out
}

// mutations yields variants of a JSON body: at every object, an added unknown key; at every
// member and array element, the value removed, made null, and replaced by values of other types
// and edge values; every array emptied. Each is one step from the body, so a disagreement points
// at one rule.
func mutations(body string) []string {
	var root any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		return nil
	}
	var out []string
	emit := func() {
		b, _ := json.Marshal(root)
		out = append(out, string(b))
	}
	replacements := []any{nil, "", "not a value!", "zzz_unknown", json.Number("0"), json.Number("-1"), json.Number("1.5"), json.Number("1e9"), true, false, map[string]any{}, []any{}}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			x["zz_unknown_key"] = json.Number("1")
			emit()
			delete(x, "zz_unknown_key")
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range x {
					if !yield(k) {
						return
					}
				}
			}) {
				old := x[k]
				delete(x, k)
				emit()
				for _, r := range replacements {
					x[k] = r
					emit()
				}
				x[k] = old
				walk(old)
			}
		case []any:
			for i, old := range x {
				for _, r := range replacements {
					x[i] = r
					emit()
				}
				x[i] = old
				walk(old)
			}
		}
	}
	walk(root)
	// Emptying each array needs the parent; done by a second walk on members.
	var empty func(v any)
	empty = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, old := range x {
				if a, ok := old.([]any); ok && len(a) > 0 {
					x[k] = []any{}
					emit()
					x[k] = old
				}
				empty(old)
			}
		case []any:
			for _, it := range x {
				empty(it)
			}
		}
	}
	empty(root)
	return out
}

// TestOpenAPIRequestSchemaAgreesWithDecoder is a differential test of the request schema against
// internal/protocol's decoder: on the client corpus, the decoder's fuzz seeds, bodies aimed at
// each rule, and every one-step mutation of those, the schema accepts exactly what the decoder
// accepts — except for knownGaps, which must still disagree as documented.
func TestOpenAPIRequestSchemaAgreesWithDecoder(t *testing.T) {
	request := compileSchema(t, "/components/schemas/ChatCompletionRequest")
	// judge gives both verdicts; why (formatting the errors costs more than judging) is asked
	// for only when they differ.
	judge := func(body string) (decoder bool, schema bool, why func() string) {
		_, aerr := protocol.DecodeChatRequest([]byte(body), protocol.Limits{})
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			return aerr == nil, false, func() string { return "not JSON" }
		}
		verr := request.Validate(v)
		return aerr == nil, verr == nil, func() string {
			var why string
			if aerr != nil {
				why = fmt.Sprintf("decoder: %s %s", aerr.Code, aerr.Param)
			}
			if verr != nil {
				why += fmt.Sprintf("; schema: %v", verr)
			}
			return why
		}
	}
	for _, g := range knownGaps {
		d, s, why := judge(g.body)
		if d != g.decoderAccepts || s == d {
			t.Errorf("known gap no longer disagrees as documented (decoder %v, schema %v; %s): %s\n%s", d, s, why(), g.why, g.body)
		}
	}

	seeds := append(append(corpusBodies(t), fuzzSeeds(t)...), agreementCases...)
	bodies, accepted, rejected, gaps := judgeSeeds(t, seeds, judge, func(body string, decoderAccepts bool) bool {
		// The rules in knownGaps: a null member of a key the position does not take, or an
		// error of the decoder's that the schema cannot state.
		if decoderAccepts {
			return nullMembersDropped(body, request)
		}
		_, aerr := protocol.DecodeChatRequest([]byte(body), protocol.Limits{})
		return aerr != nil && aerr.Code == apierr.InvalidValue &&
			(aerr.Param == "tool_choice.function.name" || aerr.Param == "response_format" || strings.HasSuffix(aerr.Param, ".function.parameters"))
	})
	t.Logf("%d bodies (%d seeds and their mutations): %d accepted by both, %d rejected by both, %d known gaps", bodies, len(seeds), accepted, rejected, gaps)
	if accepted < 1000 || rejected < 1000 {
		t.Errorf("too few bodies judged: %d accepted, %d rejected", accepted, rejected)
	}
}

// judgeSeeds judges the seeds and one-step mutations of each (mutations) by the decoder and the
// schema (judge), on every core: the decoder is pure and a compiled schema is safe for
// concurrent use. A body they disagree on fails the test unless knownGap says the disagreement
// is one of the documented rules the schema cannot state. It returns how many bodies were
// judged, and how many both accepted, both rejected, or fell in a known gap.
func judgeSeeds(t *testing.T, seeds []string, judge func(string) (bool, bool, func() string),
	knownGap func(body string, decoderAccepts bool) bool) (bodies, accepted, rejected, gaps int) {
	t.Helper()
	set := map[string]bool{}
	for _, s := range seeds {
		if !json.Valid([]byte(s)) || !strings.HasPrefix(strings.TrimSpace(s), "{") {
			continue // invalid_json: no document to validate
		}
		set[s] = true
		for _, m := range mutations(s) {
			set[m] = true
		}
	}
	var (
		mu            sync.Mutex
		disagreements []string
		wg            sync.WaitGroup
		work          = make(chan string)
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for body := range work {
				d, s, why := judge(body)
				gap := d != s && knownGap(body, d)
				mu.Lock()
				switch {
				case gap:
					gaps++
				case d != s:
					disagreements = append(disagreements, fmt.Sprintf("decoder accepts %v, schema %v (%s):\n  %s", d, s, why(), body))
				case d:
					accepted++
				default:
					rejected++
				}
				mu.Unlock()
			}
		})
	}
	for body := range set {
		work <- body
	}
	close(work)
	wg.Wait()
	sort.Strings(disagreements)
	for i, d := range disagreements {
		if i == 25 {
			t.Errorf("… and %d more", len(disagreements)-25)
			break
		}
		t.Error(d)
	}
	return len(set), accepted, rejected, gaps
}

// nullMembersDropped reports that body validates once its null members are dropped: the
// decoder's null-means-absent rule, which it applies to keys the position does not take too.
// (TestOpenAPIOptionalFieldsTakeNull makes sure the schema itself takes null wherever a key is
// optional, so this hides nothing else.)
func nullMembersDropped(body string, request *jsonschema.Schema) bool {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return false
	}
	dropped := false
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, m := range x {
				if m == nil {
					delete(x, k)
					dropped = true
					continue
				}
				strip(m)
			}
		case []any:
			for _, it := range x {
				strip(it)
			}
		}
	}
	strip(v)
	return dropped && request.Validate(v) == nil
}

// TestOpenAPIOptionalFieldsTakeNull: the decoder reads a null member as an absent one, so every
// optional property of every request object takes null, and no required one does.
func TestOpenAPIOptionalFieldsTakeNull(t *testing.T) {
	n := 0
	for _, ptrs := range decoderKeys {
		for _, p := range ptrs {
			required := map[string]bool{}
			if r, ok := docAt(t, p).(map[string]any)["required"]; ok {
				for _, k := range r.([]any) {
					required[k.(string)] = true
				}
			}
			for k := range docAt(t, p+"/properties").(map[string]any) {
				err := compileSchema(t, p+"/properties/"+k).Validate(nil)
				if required[k] != (err != nil) {
					t.Errorf("%s/properties/%s: required %v, but null validates: %v", p, k, required[k], err == nil)
				}
				n++
			}
		}
	}
	t.Logf("%d properties", n)
}

// jsonMembers reads a struct's JSON members from its tags: every name, and those always written
// (no omitempty or omitzero), which the schema must require.
func jsonMembers(t reflect.Type) (names, always []string) {
	for f := range t.Fields() {
		tag, ok := f.Tag.Lookup("json")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		names = append(names, name)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			always = append(always, name)
		}
	}
	slices.Sort(names)
	slices.Sort(always)
	return names, always
}

// docStrings reads a string array of the document at ptr, sorted.
func docStrings(t *testing.T, ptr string) []string {
	t.Helper()
	var out []string
	for _, v := range docAt(t, ptr).([]any) {
		out = append(out, v.(string))
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIJournalIsTheJournals holds the journal's schemas to internal/journal's types (every
// JSON member a property, the ones always written required, nothing else), and the closed sets
// the journal and the fixtures write to the code's: fault kinds, stream outcomes, the shape's
// field names (protocol.FieldSet), the finish reasons a fixture may set.
func TestOpenAPIJournalIsTheJournals(t *testing.T) {
	for schema, typ := range map[string]reflect.Type{
		"JournalEntry":      reflect.TypeFor[journal.Entry](),
		"JournalSDK":        reflect.TypeFor[journal.SDK](),
		"JournalShape":      reflect.TypeFor[journal.Shape](),
		"JournalRoleCounts": reflect.TypeFor[journal.RoleCounts](),
	} {
		ptr := "/components/schemas/" + schema
		names, always := jsonMembers(typ)
		var props []string
		for k := range docAt(t, ptr+"/properties").(map[string]any) {
			props = append(props, k)
		}
		slices.Sort(props)
		if !slices.Equal(props, names) {
			t.Errorf("%s has properties %v; %s has members %v", schema, props, typ, names)
		}
		var required []string
		if _, ok := docAt(t, ptr).(map[string]any)["required"]; ok {
			required = docStrings(t, ptr+"/required")
		}
		if !slices.Equal(required, always) {
			t.Errorf("%s requires %v; %s always writes %v", schema, required, typ, always)
		}
		if docAt(t, ptr+"/additionalProperties") != false {
			t.Errorf("%s: additionalProperties is not false", schema)
		}
	}

	if got, want := docStrings(t, "/components/schemas/JournalEntry/properties/fault/enum"), slices.Sorted(slices.Values(simulation.Kinds())); !slices.Equal(got, want) {
		t.Errorf("the journal's fault kinds %v are not simulation's %v", got, want)
	}
	outcomes := []string{observability.OutcomeCompleted, observability.OutcomeClientDisconnected, observability.OutcomeAborted, observability.OutcomeTimedOut}
	if got, want := docStrings(t, "/components/schemas/JournalEntry/properties/stream_outcome/enum"), slices.Sorted(slices.Values(outcomes)); !slices.Equal(got, want) {
		t.Errorf("the journal's stream outcomes %v are not observability's %v", got, want)
	}

	// The shape's field names, per dialect, are exactly the request members a FieldSet can hold:
	// each of them reads into one, and every other property of the dialect's request schema does
	// not. (A FieldSet reads a list naming input as a Responses request's.)
	for _, dl := range []struct{ fields, request, with string }{
		{"/components/schemas/JournalShape/properties/fields/anyOf/0/items/enum", "/components/schemas/ChatCompletionRequest", ""},
		{"/components/schemas/JournalShape/properties/fields/anyOf/1/items/enum", "/components/schemas/ResponsesRequest", `"input",`},
	} {
		fields := docStrings(t, dl.fields)
		for k := range docAt(t, dl.request+"/properties").(map[string]any) {
			var s protocol.FieldSet
			err := s.UnmarshalJSON([]byte(`[` + dl.with + `"` + k + `"]`))
			if (err == nil) != slices.Contains(fields, k) {
				t.Errorf("%s member %s: a FieldSet holds it: %v; the shape's fields list it: %v", dl.request, k, err == nil, slices.Contains(fields, k))
			}
		}
		var all protocol.FieldSet
		if err := all.UnmarshalJSON([]byte(`["` + strings.Join(fields, `","`) + `"]`)); err != nil || !slices.Equal(all.Names(), fields) {
			t.Errorf("the shape's fields %v do not read into a FieldSet (%v): %v", fields, err, all.Names())
		}
	}

	// A fixture may set content_filter; every finish_reason the document gives is the same set.
	want := docStrings(t, "/components/schemas/FixtureReply/properties/finish_reason/enum")
	for _, ptr := range []string{
		"/components/schemas/ChatCompletion/properties/choices/items/properties/finish_reason/enum",
		"/components/schemas/ChatCompletionChunk/properties/choices/items/properties/finish_reason/anyOf/0/enum",
		"/components/schemas/JournalEntry/properties/finish_reason/enum",
	} {
		if got := docStrings(t, ptr); !slices.Equal(got, want) {
			t.Errorf("%s is %v; a fixture's finish_reason is one of %v", ptr, got, want)
		}
	}
}

// TestOpenAPIScopeSyntax: the document's scope patterns accept exactly the scopes the server
// does (journal.ValidScope: "" or a request id), the header's and the path's without "".
func TestOpenAPIScopeSyntax(t *testing.T) {
	scope := compileSchema(t, "/components/schemas/Scope")
	header := compileSchema(t, "/components/parameters/x-mock-scope/schema")
	path := compileSchema(t, "/paths/~1_mock~1scopes~1{scope}/delete/parameters/0/schema")
	for _, s := range []string{"", "a", "test-1", "ci:run.42_a", strings.Repeat("s", 128), strings.Repeat("s", 129), "a b", "a/b", "../x", "é", "a\n", "a;b"} {
		valid := journal.ValidScope(s)
		if got := scope.Validate(s) == nil; got != valid {
			t.Errorf("Scope %q: the document says %v, the journal %v", s, got, valid)
		}
		for name, sch := range map[string]*jsonschema.Schema{"x-mock-scope": header, "the path's scope": path} {
			if got := sch.Validate(s) == nil; got != (valid && s != "") {
				t.Errorf("%s %q: the document says %v, the server %v", name, s, got, valid && s != "")
			}
		}
	}
}
