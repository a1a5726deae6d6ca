package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateInstance checks instance against schema with an independent validator (draft 2020-12,
// formats asserted).
func validateInstance(t *testing.T, schema, instance string) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("test schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://mockgateway.test/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("test schema does not compile: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		t.Fatalf("instance %s is not JSON: %v", instance, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("instance %s is not valid: %v", instance, err)
	}
}

// instance generates the instance of schema for a given stream number.
func instance(schema string, stream uint64) []string {
	var r rng
	r.seed(subSeed([32]byte{}, "test", stream, 0))
	v, err := parseJSON([]byte(schema))
	if err != nil {
		v = nil
	}
	var b pieceBuilder
	appendSchemaInstance(&b, &r, v, nil)
	return b.pieces().Strings()
}

// schemaCases are schemas every instance of which must validate.
var schemaCases = []struct {
	name, schema string
}{
	{"empty schema", `{}`},
	{"true schema", `true`},
	{"nested objects", `{"type":"object","properties":{"name":{"type":"string"},"address":{"type":"object",
		"properties":{"street":{"type":"string","minLength":3},"zip":{"type":"string","pattern":"^[0-9]{5}$"},
		"geo":{"type":"object","properties":{"lat":{"type":"number","minimum":-90,"maximum":90},
		"lon":{"type":"number","minimum":-180,"maximum":180}},"required":["lat","lon"]}},"required":["street"]}},
		"required":["name","address"],"additionalProperties":false}`},
	{"array of objects", `{"type":"object","properties":{"items":{"type":"array","minItems":2,"maxItems":4,
		"items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1}},
		"required":["sku","qty"],"additionalProperties":false}}},"required":["items"]}`},
	{"enums", `{"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]},
		"level":{"enum":[1,2,3]},"mixed":{"type":"string","enum":[null,7,"only-string"]},
		"objects":{"enum":[{"a":1},[1,2],"x"]}}}`},
	{"const", `{"type":"object","properties":{"kind":{"const":"event"},"version":{"const":2},
		"meta":{"const":{"nested":[true,null,"s\"q"]}}},"required":["kind"]}`},
	{"required without properties", `{"type":"object","required":["a","b"],"properties":{"c":{"type":"boolean"}},
		"additionalProperties":{"type":"integer","minimum":5,"maximum":6}}`},
	{"min and max properties", `{"type":"object","minProperties":3,"additionalProperties":{"type":"string"},
		"properties":{"only":{"type":"null"}}}`},
	{"max properties", `{"type":"object","maxProperties":2,"required":["b"],
		"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"}}}`},
	{"formats", `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},
		"day":{"type":"string","format":"date"},"at":{"type":"string","format":"time"},
		"mail":{"type":"string","format":"email"},"site":{"type":"string","format":"uri"},
		"ref":{"type":"string","format":"uri-reference"},"id":{"type":"string","format":"uuid"},
		"v4":{"type":"string","format":"ipv4"},"v6":{"type":"string","format":"ipv6"},
		"host":{"type":"string","format":"hostname"},"for":{"type":"string","format":"duration"},
		"ptr":{"type":"string","format":"json-pointer"},"tpl":{"type":"string","format":"uri-template"},
		"re":{"type":"string","format":"regex"},"unknown":{"type":"string","format":"x-custom"}}}`},
	{"string lengths and patterns", `{"type":"object","properties":{"short":{"type":"string","maxLength":3},
		"exact":{"type":"string","minLength":7,"maxLength":7},"long":{"type":"string","minLength":60},
		"empty":{"type":"string","maxLength":0},"code":{"type":"string","pattern":"^[A-Z]{3}-\\d{2,4}$"},
		"alt":{"type":"string","pattern":"^(red|green|blue)(-[a-f0-9]{6})?$"},
		"unanchored":{"type":"string","pattern":"ab+c"},"slug":{"type":"string","pattern":"^[a-z0-9_]+$","minLength":12},
		"quoted":{"type":"string","pattern":"^\"[^\"a-zA-Z0-9]+\"$"},
		"datepat":{"type":"string","format":"date","pattern":"^20[0-9]{2}-"}}}`},
	{"numeric bounds", `{"type":"object","properties":{
		"i":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10,"multipleOf":3},
		"n":{"type":"number","minimum":0.1,"maximum":0.35,"multipleOf":0.05},
		"narrow":{"type":"number","exclusiveMinimum":0.001,"exclusiveMaximum":0.002},
		"half":{"type":"integer","multipleOf":2.5,"minimum":1},
		"neg":{"type":"integer","maximum":-5},
		"exmin":{"type":"number","exclusiveMinimum":0.3,"multipleOf":0.1,"maximum":0.4},
		"big":{"type":"integer","minimum":1e15,"maximum":1e18},
		"tight":{"type":"number","minimum":1.5,"maximum":1.5},
		"plain":{"type":"number"},"int":{"type":"integer"}}}`},
	{"anyOf with null", `{"type":"object","properties":{"nickname":{"anyOf":[{"type":"null"},{"type":"string","maxLength":8}]},
		"count":{"anyOf":[{"type":"integer","minimum":3},{"type":"null"}],"default":null}},"required":["nickname","count"]}`},
	{"oneOf discriminated", `{"type":"object","properties":{"shape":{"oneOf":[
		{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number","exclusiveMinimum":0}},"required":["kind","r"],"additionalProperties":false},
		{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind","side"],"additionalProperties":false}]}},
		"required":["shape"]}`},
	{"allOf merge", `{"allOf":[{"type":"object","properties":{"id":{"type":"integer","minimum":1}},"required":["id"]},
		{"properties":{"name":{"type":"string"},"id":{"maximum":5}},"required":["name"]},
		{"$ref":"#/$defs/stamped"}],"$defs":{"stamped":{"type":"object","properties":{"at":{"type":"string","format":"date-time"}},"required":["at"]}}}`},
	{"refs to $defs and definitions", `{"type":"object","properties":{"home":{"$ref":"#/$defs/address"},
		"work":{"$ref":"#/definitions/address"},"pet":{"$ref":"#/$defs/pet","description":"sibling keywords apply"}},
		"$defs":{"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},
		"pet":{"type":"object","properties":{"name":{"type":"string"}}}},
		"definitions":{"address":{"type":"object","properties":{"country":{"enum":["FR","DE"]}},"required":["country"]}}}`},
	{"recursive tree", `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
		"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value"]}}}`},
	{"recursive list with null", `{"type":"object","properties":{"head":{"$ref":"#/$defs/cell"}},"required":["head"],
		"$defs":{"cell":{"type":"object","properties":{"v":{"type":"string"},"next":{"anyOf":[{"$ref":"#/$defs/cell"},{"type":"null"}]}},
		"required":["v","next"],"additionalProperties":false}}}`},
	{"root recursion", `{"type":"object","properties":{"name":{"type":"string"},"parent":{"$ref":"#"}}}`},
	{"type arrays with null", `{"type":["object","null"],"properties":{"a":{"type":["null","string"]},
		"b":{"type":["integer","null"],"minimum":10,"maximum":12},"c":{"type":["null"]},"d":{"type":["boolean","string"]}}}`},
	{"boolean schemas", `{"type":"object","properties":{"anything":true,"never":false,"list":{"type":"array","items":true}},
		"additionalProperties":false}`},
	{"no type", `{"properties":{"a":{"minimum":5},"b":{"maxLength":2},"c":{"items":{"type":"integer"},"minItems":2}}}`},
	{"unique items", `{"type":"object","properties":{"colors":{"type":"array","items":{"enum":["red","green","blue"]},
		"minItems":3,"uniqueItems":true},"flags":{"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":5,"uniqueItems":true},
		"ids":{"type":"array","items":{"type":"integer","minimum":0,"maximum":3},"minItems":4,"uniqueItems":true}}}`},
	{"tuples", `{"type":"object","properties":{"point":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"},{"const":"m"}],"items":false},
		"pair":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":3},
		"none":{"type":"array","maxItems":0}}}`},
	{"openai strict", `{"type":"object","properties":{"location":{"type":"string","description":"City"},
		"unit":{"type":["string","null"],"enum":["celsius","fahrenheit",null]},
		"days":{"type":"array","items":{"type":"object","properties":{"date":{"type":"string","format":"date"},
		"high":{"type":"number"}},"required":["date","high"],"additionalProperties":false}}},
		"required":["location","unit","days"],"additionalProperties":false}`},
	{"root string", `{"type":"string","format":"email"}`},
	{"root array", `{"type":"array","items":{"type":"integer","multipleOf":7},"minItems":3,"maxItems":3}`},
	{"escaped names and pointer", `{"type":"object","properties":{"we\"ird/key~":{"$ref":"#/$defs/a~1b~0c"},"ünï":{"type":"string"}},
		"$defs":{"a/b~c":{"type":"integer","minimum":42,"maximum":42}},"required":["we\"ird/key~"]}`},
}

func TestSchemaInstancesValidate(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			for stream := range uint64(25) {
				pieces := instance(tc.schema, stream)
				text := strings.Join(pieces, "")
				if !json.Valid([]byte(text)) {
					t.Fatalf("stream %d: invalid JSON %q", stream, text)
				}
				checkJSONPieces(t, pieces, true)
				validateInstance(t, tc.schema, text)
				if t.Failed() {
					t.Logf("stream %d: %s", stream, text)
					return
				}
			}
		})
	}
}

func TestSchemaInstanceDetails(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"no schema", ``, `{}`},
		{"undecodable schema", `{"type":`, `{}`},
		{"empty object", `{"type":"object"}`, `{}`},
		{"no properties", `{"type":"object","properties":{}}`, `{}`},
		{"false schema", `false`, `null`},
		{"properties in schema order", `{"properties":{"z":{"const":1},"a":{"const":2},"m":{"const":3}}}`, `{"z":1,"a":2,"m":3}`},
		{"draft-4 exclusive minimum", `{"type":"integer","minimum":4,"exclusiveMinimum":true,"maximum":5}`, `5`},
		{"exact multiple", `{"type":"number","minimum":0.3,"maximum":0.3,"multipleOf":0.1}`, `0.3`},
		{"recursion depth", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
			`{"next":{"next":{"next":{"next":{}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(instance(tt.schema, 0), "")
			if tt.schema == "" {
				var b pieceBuilder
				appendSchemaInstance(&b, nil, nil, nil)
				got = string(b.buf)
			}
			if got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// FuzzSchemaInstance feeds arbitrary bytes as a schema: the generator must never panic, must
// terminate, and must always write valid JSON split into non-empty pieces. Under plain go test
// only the seed corpus runs.
func FuzzSchemaInstance(f *testing.F) {
	for _, tc := range schemaCases {
		f.Add([]byte(tc.schema), uint64(0))
	}
	for i, s := range []string{
		``, `{`, `null`, `[]`, `"x"`, `7`, `true`, `false`, `{"type":7}`, `{"type":[]}`, `{"type":["null"]}`,
		`{"$ref":"#"}`, `{"$ref":7}`, `{"$ref":"#/nope"}`, `{"$ref":"other.json#/x"}`, `{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"allOf":[{"$ref":"#"}]}`, `{"anyOf":[{"$ref":"#"}]}`, `{"oneOf":[]}`, `{"anyOf":[false,false]}`, `{"allOf":[false]}`,
		`{"allOf":7}`, `{"items":{"$ref":"#"},"minItems":5}`, `{"properties":{"a":{"$ref":"#"}},"required":["a"]}`,
		`{"minItems":1e400}`, `{"type":"array","minItems":-3}`, `{"multipleOf":1e-400}`, `{"type":"number","multipleOf":-1}`,
		`{"type":"integer","minimum":10,"maximum":1}`, `{"type":"integer","multipleOf":1e308,"minimum":1}`,
		`{"type":"number","maximum":1e308,"minimum":-1e308}`, `{"type":"string","pattern":"(a|b)*c{3,5}"}`,
		`{"type":"string","pattern":"[^\\x00-\\x{10FFFF}]"}`, `{"type":"string","pattern":"(?=x)"}`, `{"type":"string","pattern":"a{1000}"}`,
		`{"type":"string","minLength":1e9}`, `{"type":"string","maxLength":"x"}`, `{"enum":[]}`, `{"enum":7}`, `{"const":null}`,
		`{"properties":7,"required":"x"}`, `{"type":"object","minProperties":1000,"additionalProperties":false}`,
		`{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","minItems":64},"minItems":64},"minItems":64},"minItems":64}`,
		`{"type":"array","uniqueItems":true,"items":{"const":1},"minItems":3}`, `{"prefixItems":[1,2,3]}`, `{"items":[{"type":"string"},true]}`,
		strings.Repeat(`{"items":`, 200) + `{}` + strings.Repeat(`}`, 200),
	} {
		f.Add([]byte(s), uint64(i))
	}
	f.Fuzz(func(t *testing.T, schema []byte, stream uint64) {
		checkParseRoundTrip(t, schema)
		pieces := instance(string(schema), stream)
		text := strings.Join(pieces, "")
		if !json.Valid([]byte(text)) {
			t.Fatalf("invalid JSON %q for schema %s", text, schema)
		}
		for _, p := range pieces {
			if p == "" {
				t.Fatalf("empty piece for schema %s", schema)
			}
		}
		// Under a ceiling the instance is cut, but it never runs past it by more than one
		// piece, and that piece is clipped when it could be long.
		v, err := parseJSON(schema)
		if err != nil {
			return
		}
		var r rng
		r.seed(subSeed([32]byte{}, "test", stream, 0))
		var b pieceBuilder
		b.limit(40, 300)
		appendSchemaInstance(&b, &r, v, nil)
		if len(b.buf) > 300+maxPatternBytes {
			t.Fatalf("%d bytes under a ceiling of 300 for schema %s", len(b.buf), schema)
		}
		for _, p := range b.pieces().Strings() {
			if p == "" {
				t.Fatalf("empty piece under a ceiling for schema %s", schema)
			}
		}
	})
}

// checkParseRoundTrip checks the order-keeping parser against encoding/json: valid JSON parses
// and re-encodes to the same value, invalid JSON is refused.
func checkParseRoundTrip(t *testing.T, data []byte) {
	t.Helper()
	v, err := parseJSON(data)
	if !json.Valid(data) {
		if err == nil {
			t.Fatalf("parseJSON accepted invalid JSON %q", data)
		}
		return
	}
	if err != nil {
		t.Fatalf("parseJSON(%q): %v", data, err)
	}
	var b pieceBuilder
	appendJSONValue(&b, v)
	// Decode numbers as their literal text, which the parser keeps.
	decode := func(data []byte, v *any) error {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		return dec.Decode(v)
	}
	var want, got any
	if err := decode(data, &want); err != nil {
		t.Fatal(err)
	}
	if err := decode(b.buf, &got); err != nil {
		t.Fatalf("re-encoded %q is not JSON: %v", b.buf, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip of %q gave %q", data, b.buf)
	}
}

func TestParseJSON(t *testing.T) {
	for _, s := range []string{
		` { "b" : [ 1 , -2.5e+3, true, false, null, "x" ] , "a" : { } , "c":[] } `,
		`"esc\"aped\\ \u00e9 \ud83d\ude00 \n \/"`, `"héllo  "`, `0`, `-0.0`, `[[[]]]`,
		`{"a":1,"a":2}`, `{"a":1} x`, `{"a":}`, `[1,]`, `"\x"`, ``, ` `,
	} {
		checkParseRoundTrip(t, []byte(s))
	}
	v, err := parseJSON([]byte(`{"z":1,"a":{"y":2,"b":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v.keys, ",") + "|" + strings.Join(v.get("a").keys, ","); got != "z,a|y,b" {
		t.Fatalf("member order %s, want z,a|y,b", got)
	}
}

func BenchmarkSchemaInstance(b *testing.B) {
	schema := schemaCases[2].schema
	b.ReportAllocs()
	for b.Loop() {
		_ = instance(schema, 1)
	}
}

func ExampleSplitPieces() {
	fmt.Printf("%q\n", SplitPieces("echo: hello world"))
	// Output: ["echo:" " hello" " world"]
}

func BenchmarkGenerateChat(b *testing.B) {
	in := Input{Model: "mock-chat", Behavior: BehaviorChat, DefaultTokens: 64, Request: userRequest("Tell me something")}
	b.ReportAllocs()
	for b.Loop() {
		_ = Generate(in)
	}
}
