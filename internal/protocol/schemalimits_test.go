package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonscan"
	"mockgateway/internal/regexcost"
)

// nested returns a schema whose deepest subschema is at level depth (the root is level 0),
// descending through properties, items and anyOf in turn.
func nested(depth int) string {
	s := `{"type":"string"}`
	for i := depth; i > 0; i-- {
		switch i % 3 {
		case 0:
			s = `{"type":"object","properties":{"a":` + s + `},"required":["a"],"additionalProperties":false}`
		case 1:
			s = `{"type":"array","items":` + s + `}`
		default:
			s = `{"anyOf":[{"type":"null"},` + s + `]}`
		}
	}
	return s
}

func names(n int, pattern string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(pattern, i)
	}
	return strings.Join(parts, ",")
}

func TestCheckSchemaLimits(t *testing.T) {
	props := func(n int) string {
		return `{"type":"object","properties":{` + names(n, `"p%d":{"type":"null"}`) + `}}`
	}
	enum := func(n int) string { return `{"enum":[` + names(n, `%d`) + `]}` }
	// 251 string values of 60 characters: 15,060 characters in one large enum.
	largeEnum := func(values, width int) string {
		return `{"type":"string","enum":[` + names(values, `"%0`+fmt.Sprint(width)+`d"`) + `]}`
	}
	tests := []struct {
		name, schema, want string
	}{
		{"nesting at the limit", nested(10), ""},
		{"nesting past the limit", nested(11), "11 levels of nesting exceeds limit of 10."},
		{"thousands of levels", nested(3000), "11 levels of nesting exceeds limit of 10."},
		{"definitions nest too", `{"$defs":{"d":` + nested(10) + `}}`, "11 levels of nesting exceeds limit of 10."},
		{"properties at the limit", `{"anyOf":[` + props(2500) + `,` + props(2500) + `]}`, ""},
		{"properties past the limit", `{"anyOf":[` + props(2500) + `,` + props(2501) + `]}`,
			"Total number of object properties (5001) exceeds limit of 5000."},
		{"enum values at the limit", `{"anyOf":[` + enum(600) + `,` + enum(400) + `]}`, ""},
		{"enum values past the limit", `{"anyOf":[` + enum(600) + `,` + enum(401) + `]}`,
			"Total number of enum values (1001) exceeds limit of 1000."},
		{"large enum at the limit", largeEnum(250, 80), ""},
		{"large enum under its characters", largeEnum(251, 59), ""},
		{"large enum past the limit", largeEnum(251, 60),
			"Total string length (15060) of values of an enum with 251 values exceeds limit of 15000."},
		{"characters at the limit", `{"const":"` + strings.Repeat("é", 119990) + `","properties":{"` + strings.Repeat("n", 10) + `":{}}}`, ""},
		{"characters past the limit", `{"$defs":{"` + strings.Repeat("d", 60000) + `":{}},"properties":{"` + strings.Repeat("p", 60000) + `":{"const":7}}}`,
			"Total string length of property names, definition names, enum values and const values (120001) exceeds limit of 120000."},
		{"escaped keyword", `{"prop\u0065rties":{` + names(5001, `"p%d":{}`) + `}}`,
			"Total number of object properties (5001) exceeds limit of 5000."},
		{"escapes are one character", `{"const":"` + strings.Repeat(`\n`, 120000) + `"}`, ""},
		{"deep const values are skipped", `{"const":` + strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000) + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.schema)) {
				t.Fatal("test schema is not JSON")
			}
			e := CheckSchemaLimits("response_format", json.RawMessage(tt.schema))
			switch {
			case tt.want == "" && e != nil:
				t.Fatalf("unexpected %v", e)
			case tt.want == "":
			case e == nil:
				t.Fatalf("accepted, want %q", tt.want)
			case e.Message != "Invalid schema for response_format 'response_format': "+tt.want ||
				e.Param != "response_format" || e.Code != "invalid_value" || e.Status != 400:
				t.Fatalf("got %+v", e)
			}
		})
	}
}

func TestCheckSchemaLimitsNamesNoClientText(t *testing.T) {
	schema := `{"type":"object","properties":{` + names(5001, `"SECRET%d":{"description":"SECRET"}`) + `}}`
	e := CheckSchemaLimits("tools[3].function.parameters", json.RawMessage(schema))
	if e == nil || e.Param != "tools[3].function.parameters" ||
		!strings.HasPrefix(e.Message, "Invalid schema for function 'tools[3].function.parameters': ") ||
		strings.Contains(e.Message, "SECRET") {
		t.Fatalf("got %+v", e)
	}
}

func BenchmarkCheckSchemaLimits(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{` +
		names(5000, `"p%d":{"type":"string","description":"some text","pattern":"^[a-z]+$"}`) + `}}`)
	b.SetBytes(int64(len(schema)))
	b.ReportAllocs()
	for b.Loop() {
		if CheckSchemaLimits("response_format", schema) != nil {
			b.Fatal("rejected")
		}
	}
}

// A schema pattern (a pattern keyword, a patternProperties name) whose program is over the
// bound is a 400 invalid_value whose param is the pattern's path, in every place a request
// carries a schema, strict or not: the mock compiles them to generate and to check fixtures'
// replies (issue 30: a 30 KB pattern pinned hundreds of megabytes).
func TestSchemaPatternsOverTheBound(t *testing.T) {
	big := strings.Repeat(`[^b]{1000}`, 6)
	ok := `^[a-z]{1,100}$`
	chatWith := func(schema string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":` + schema + `}}}`
	}
	toolWith := func(schema string) string {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g","parameters":` + schema + `}}]}`
	}
	responsesWith := func(schema string) string {
		return `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"a","schema":` + schema + `}},"tools":[{"type":"function","name":"g","parameters":` + schema + `}]}`
	}
	prop := func(p string) string {
		return `{"type":"object","properties":{"code":{"type":"string","pattern":"` + p + `"},"list":{"type":"array","items":[{"type":"string"}]}}}`
	}
	patternProps := `{"type":"object","patternProperties":{"` + big + `":{"type":"string"}}}`
	for _, c := range []struct{ body, param string }{
		{chatWith(prop(big)), "response_format.json_schema.schema.properties.code.pattern"},
		{chatWith(patternProps), "response_format.json_schema.schema.patternProperties." + big},
		{toolWith(prop(big)), "tools[1].function.parameters.properties.code.pattern"},
	} {
		_, e := DecodeChatRequest([]byte(c.body), Limits{})
		if e == nil || e.Code != "invalid_value" || e.Param != c.param || !strings.Contains(e.Message, "--max-regex-program") {
			t.Errorf("%.80s…: %+v", c.body, e)
		}
	}
	if _, _, e := DecodeResponsesRequest([]byte(responsesWith(prop(big))), Limits{}); e == nil || e.Param != "text.format.schema.properties.code.pattern" {
		t.Errorf("responses: %+v", e)
	}
	// Anthropic's Messages: a custom tool's input_schema at its index as sent (a server tool
	// before it is not kept), and output_config.format's schema.
	messagesWith := func(schema string) string {
		return `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search_20250305","name":"web_search"},{"name":"g","input_schema":` + schema + `}]}`
	}
	if _, e := DecodeAnthropicRequest([]byte(messagesWith(prop(big))), Limits{}); e == nil || e.Param != "tools[1].input_schema.properties.code.pattern" {
		t.Errorf("messages tool: %+v", e)
	}
	format := `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"output_config":{"format":{"type":"json_schema","schema":` + prop(big) + `}}}`
	if _, e := DecodeAnthropicRequest([]byte(format), Limits{}); e == nil || e.Param != "output_config.format.schema.properties.code.pattern" {
		t.Errorf("messages output_config: %+v", e)
	}
	if _, e := DecodeAnthropicRequest([]byte(messagesWith(prop(ok))), Limits{}); e != nil {
		t.Errorf("messages under the bound: %+v", e)
	}
	for _, body := range []string{chatWith(prop(ok)), toolWith(prop(ok)), chatWith(`{"type":"string","pattern":"(?<=x)y"}`)} {
		if _, e := DecodeChatRequest([]byte(body), Limits{}); e != nil {
			t.Errorf("%.80s…: %+v", body, e)
		}
	}
	// The bound is the caller's.
	if _, e := DecodeChatRequest([]byte(chatWith(prop(ok))), Limits{MaxRegexProgram: 100}); e == nil {
		t.Error("a pattern over a bound of 100 passed")
	}
	if _, _, e := DecodeResponsesRequest([]byte(responsesWith(prop(ok))), Limits{}); e != nil {
		t.Errorf("responses: %+v", e)
	}
}

// recursivePatternWalk is the pattern walk as it was written first, descending a level per call
// and naming each level's path on the way down: the reference the one-pass walk is held to.
type recursivePatternWalk struct {
	max int
	err *apierr.Error
}

func (w *recursivePatternWalk) value(v []byte, path string) {
	switch firstByte(v) {
	case '{':
		eachMember(v, func(name, val []byte) {
			if w.err != nil {
				return
			}
			p := joinPath(path, string(keyword(name)))
			switch string(keyword(name)) {
			case "pattern":
				if firstByte(val) == '"' {
					w.check(val, p)
					return
				}
			case "patternProperties":
				eachMember(val, func(re, sub []byte) {
					if w.err == nil {
						s, _ := jsonscan.Unquote(re)
						rp := joinPath(p, s)
						w.check(re, rp)
						w.value(sub, rp)
					}
				})
				return
			}
			w.value(val, p)
		})
	case '[':
		i := 0
		eachElement(v, func(e []byte) {
			if w.err == nil {
				w.value(e, indexPath(path, i))
			}
			i++
		})
	}
}

func (w *recursivePatternWalk) check(quoted []byte, path string) {
	src, _ := jsonscan.Unquote(quoted)
	if cost, err := regexcost.Parse(src); err == nil && cost.Size() > w.max {
		w.err = apierr.New(apierr.InvalidValue, path, "")
	}
}

// TestSchemaPatternWalkMatchesRecursive: the one-pass walk finds the first pattern over the
// bound where the recursive walk finds it, at the same path, in every place a schema may hide
// one — arrays, patternProperties that are not objects, a pattern that is not a string, keys
// with escapes or beyond the path's 64 characters, repeated members, whitespace.
func TestSchemaPatternWalkMatchesRecursive(t *testing.T) {
	big := `"` + strings.Repeat(`[^b]{1000}`, 6) + `"`
	long := strings.Repeat("k", 70)
	for _, schema := range []string{
		`{"pattern":` + big + `}`,
		`{"type":"object","properties":{"a":{"type":"string"},"b":{"pattern":"x"},"c":{"pattern":` + big + `}}}`,
		`{"anyOf":[{"type":"string"},{"items":[{"a":1},{"pattern":` + big + `}]}]}`,
		`{"patternProperties":{"x":{"type":"string"},` + big + `:{"type":"string"}}}`,
		`{"patternProperties":{"x":{"pattern":` + big + `}}}`,
		`{"patternProperties":[{"pattern":` + big + `}],"b":{"pattern":` + big + `}}`,
		`{"pattern":{"pattern":` + big + `}}`,
		`{"pattern":[1,{"pattern":` + big + `}]}`,
		`{"properties":{"a\u0000b":{"pattern":` + big + `}}}`,
		`{"properties":{"":{"pattern":` + big + `}}}`,
		`{"properties":{"` + long + `":{"pattern":` + big + `}}}`,
		`{"properties":{"a":{"pattern":"x"},"a":{"pattern":` + big + `}}}`,
		`{ "properties" : { "a" : [ 1 , [ ] , { } , { "pattern" : ` + big + ` } ] } }`,
		`{"enum":["` + strings.Repeat("[a]{1000}", 8) + `"],"const":{"pattern":"x"}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"^[a-z]+$"}}}`,
		`[]`, `{}`, `"x"`,
	} {
		var want recursivePatternWalk
		want.max = 2000
		want.value([]byte(schema), "s")
		got := CheckSchemaPatterns("s", json.RawMessage(schema), 2000)
		switch {
		case (got == nil) != (want.err == nil):
			t.Errorf("%.60s…: %v, the recursive walk %v", schema, got, want.err)
		case got != nil && got.Param != want.err.Param:
			t.Errorf("%.60s…: at %q, the recursive walk at %q", schema, got.Param, want.err.Param)
		}
		if unnamed := CheckSchemaPatterns(unnamedRoot, json.RawMessage(schema), 2000); (unnamed == nil) != (got == nil) || unnamed != nil && unnamed.Param != unnamedRoot {
			t.Errorf("%.60s…: unnamed %v, named %v", schema, unnamed, got)
		}
	}
}
