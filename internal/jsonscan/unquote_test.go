package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// unquoteSeeds are string literals plain and escaped, of valid UTF-8 and not.
var unquoteSeeds = []string{
	`""`, `"a"`, `"a\"b"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\u00E9"`, `"\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`, "\"caf\xc3\xa9\"", "\"\xff\"", "\"a\xc3\"",
	`"\x"`, `"\u00g9"`, `"abc`, `abc"`, `"`, "\"a\tb\"", `"'\u2028'"`,
}

// checkUnquote holds Unquote, on bytes and on a string, to what json.Unmarshal makes of a
// literal. Unquote's callers give it literals Valid has accepted, so only those are compared.
func checkUnquote(t *testing.T, q []byte) {
	t.Helper()
	if len(q) == 0 || q[0] != '"' || SkipString(q, 0) != len(q) || !Valid(q) { // one whole literal
		return
	}
	var want string
	if err := json.Unmarshal(q, &want); err != nil {
		t.Fatalf("encoding/json refused %q, which Valid accepts: %v", q, err)
	}
	got, ok := Unquote(q)
	gotS, okS := Unquote(string(q))
	if !ok || !okS || got != want || gotS != want {
		t.Fatalf("Unquote(%q) = %q ok=%v (as a string %q ok=%v), encoding/json %q", q, got, ok, gotS, okS, want)
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, s := range unquoteSeeds {
		checkUnquote(t, []byte(s))
	}
}

// FuzzUnquoteMatchesEncodingJSON: Unquote unescapes every valid literal as encoding/json does
// (invalid UTF-8 and lone surrogates become U+FFFD).
func FuzzUnquoteMatchesEncodingJSON(f *testing.F) {
	for _, s := range unquoteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		checkUnquote(t, q)
	})
}

// TestSkipValueEndsValues: SkipValue ends each value of a valid array where encoding/json's
// elements end.
func TestSkipValueEndsValues(t *testing.T) {
	doc := `[ "a\"]" , {"b":[1,{"c":"}"}]} ,-1.5e3, true ,null,[] ]`
	var want []json.RawMessage
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	i := SkipSpace(doc, 1)
	for k, w := range want {
		end := SkipValue(doc, i)
		if doc[i:end] != string(w) {
			t.Fatalf("value %d: %q, encoding/json %q", k, doc[i:end], w)
		}
		i = SkipSpace(doc, end)
		if doc[i] == ',' {
			i = SkipSpace(doc, i+1)
		}
	}
	if doc[i] != ']' {
		t.Fatalf("did not end at the array's end: %q", doc[i:])
	}
}

// FuzzAppendCompactMatchesEncodingJSON: AppendCompact makes of a valid JSON value what
// json.Compact makes of it.
func FuzzAppendCompactMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`{ "a" : [ 1 , 2.5e3 , "x y\t" , null , true ] }`, " \"\\\" \\\\ \" ", "[\n]", `{"a":{"b":" "}}`, "\t0\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !json.Valid([]byte(v)) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(v)); err != nil {
			t.Fatal(err)
		}
		trimmed := v[SkipSpace(v, 0):]
		for len(trimmed) > 0 && SkipSpace(trimmed, len(trimmed)-1) == len(trimmed) {
			trimmed = trimmed[:len(trimmed)-1]
		}
		if got := AppendCompact([]byte("prefix"), trimmed); string(got) != "prefix"+want.String() {
			t.Fatalf("AppendCompact(%q) = %q, json.Compact %q", v, got[len("prefix"):], want.Bytes())
		}
	})
}
