package openapi

import (
	"encoding/json"
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// decoderKeys are, for each function of internal/protocol's decoder that classifies an object's
// keys, the schema(s) of the document that object is, as JSON pointers.
var decoderKeys = map[string][]string{
	"topField":                    {"/components/schemas/ChatCompletionRequest"},
	"streamOptions":               {"/components/schemas/ChatCompletionRequest/properties/stream_options"},
	"checkPromptCacheOptions":     {"/components/schemas/ChatCompletionRequest/properties/prompt_cache_options"},
	"decodeMessage":               {"/components/schemas/SystemMessage", "/components/schemas/UserMessage", "/components/schemas/AssistantMessage", "/components/schemas/ToolMessage"},
	"decodeContentPart":           {"/components/schemas/TextPart"},
	"decodeAssistantContentPart":  {"/components/schemas/AssistantTextPart", "/components/schemas/RefusalPart"},
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
	"decodeWebSearchTool":          {"/components/schemas/ResponsesWebSearchTool"},
	"decodeWebSearchFilters":       {"/components/schemas/ResponsesWebSearchTool/properties/filters"},
	"decodeApproximateLocation":    {"/components/schemas/ResponsesWebSearchTool/properties/user_location"},
	"decodeNamespaceTool":          {"/components/schemas/ResponsesNamespaceTool"},
	"decodeResponsesToolChoice":    {"/components/schemas/ResponsesToolChoice/anyOf/1"},
	"decodeText":                   {"/components/schemas/ResponsesRequest/properties/text"},
	"decodeTextFormat":             {"/components/schemas/ResponsesTextFormat/oneOf/0", "/components/schemas/ResponsesTextFormat/oneOf/1", "/components/schemas/ResponsesTextFormat/oneOf/2"},
}

// decoderFiles are the files of internal/protocol whose tables decoderKeys maps.
var decoderFiles = []string{"decode.go", "decode_messages.go", "decode_responses.go", "decode_items.go", "decode_responses_tools.go"}

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
