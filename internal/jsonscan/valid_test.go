package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// validSeeds are JSON texts valid and not, at every turn of the grammar.
var validSeeds = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e`, `1e+`, `1E-7`, `-1.5e+300`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `nullnull`, `{"a":1}`, `{"a" : 1 , "b" : [ ] }`,
	`{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `[1,]`, `[,1]`, `[1 2]`, `[1,2]`,
	`{"a":[1,{"b":null}]}`, `{"a":[1,{"b":null]}}`, `[}`, `{]`, `"a\"b"`, `"a\'b"`, `"\u00e9"`, `"\u00g9"`,
	`"\u00e"`, `"\x"`, "\"a\tb\"", "\"a\x7fb\"", "\"caf\xc3\xa9 \xff\"", `"abc`, `"\`, `{"a":1}}`, `{} {}`,
	" \t\r\n{ } \t\r\n", "\f{}", "{}\v", `[[[[[]]]]]`, `{"a":{"b":{"c":{}}}}`, `-a`, `+1`, `0x10`, `1_000`,
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json %v", s, got, want)
		}
	}
}

// TestValidNestingLimit: the deepest JSON encoding/json accepts is accepted, one level deeper is
// not, whichever containers nest.
func TestValidNestingLimit(t *testing.T) {
	for _, depth := range []int{maxNestingDepth, maxNestingDepth + 1} {
		for _, nest := range []struct {
			open, close string
			levels      int // containers each step opens
		}{{"[", "]", 1}, {`{"a":`, "}", 1}, {`[{"a":`, "}]", 2}, {`{"a":[`, "]}", 2}} {
			n := depth / nest.levels
			prefix := strings.Repeat(nest.open, n)
			if depth%nest.levels != 0 { // the odd level: one more array
				prefix = "[" + prefix
			}
			suffix := strings.Repeat(nest.close, n)
			if depth%nest.levels != 0 {
				suffix += "]"
			}
			body := []byte(prefix + "1" + suffix)
			if got, want := Valid(body), json.Valid(body); got != want || want != (depth <= maxNestingDepth) {
				t.Errorf("%d levels of %s: Valid %v, encoding/json %v", depth, nest.open, got, want)
			}
		}
	}
}

// FuzzValidMatchesEncodingJSON: Valid and encoding/json.Valid agree on every input, so the
// decoder refuses as invalid JSON exactly the bodies it refused with json.Valid, and the schema
// parser parses exactly what encoding/json would.
func FuzzValidMatchesEncodingJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if got, want := Valid(v), json.Valid(v); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json %v", v, got, want)
		}
	})
}
