package protocol

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// topFieldKeys reads the keys of topField's switch in decode.go.
func topFieldKeys(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "decode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "topField" {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			if cc, ok := n.(*ast.CaseClause); ok {
				for _, e := range cc.List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						k, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						keys = append(keys, k)
					}
				}
			}
			return true
		})
	}
	if len(keys) < 30 {
		t.Fatalf("only %d keys found in topField: has its form changed?", len(keys))
	}
	return keys
}

// TestFieldNamesAreTheDecoders holds requestFieldNames to topField: a name is in the table if and
// only if the decoder accepts it (supported or noEffect). A field added to the decoder without
// the table would be decoded but never show in a FieldSet.
func TestFieldNamesAreTheDecoders(t *testing.T) {
	if !slices.IsSorted(requestFieldNames[:]) {
		t.Fatal("requestFieldNames is not sorted: binary searches would miss")
	}
	if len(requestFieldNames) > 64 {
		t.Fatalf("%d names do not fit a FieldSet", len(requestFieldNames))
	}
	if requestFieldNames[fieldMessages] != "messages" || requestFieldNames[fieldModel] != "model" {
		t.Fatal("fieldMessages or fieldModel does not index its name")
	}
	for i, n := range requestFieldNames {
		if fieldIndex(n) != i {
			t.Errorf("fieldIndex(%q) = %d, want %d", n, fieldIndex(n), i)
		}
	}
	for _, n := range []string{"", "top_logprobs", "functions", "Model", "model ", "x"} {
		if fieldIndex(n) != -1 {
			t.Errorf("fieldIndex(%q) = %d, want -1", n, fieldIndex(n))
		}
	}
	var accepted []string
	for _, k := range topFieldKeys(t) {
		// The class does not depend on the value: 0 is wrong for most fields, which is fine.
		c := chatState{req: &Request{N: 1}, lim: Limits{}.withDefaults()}
		class, _ := topField(c, k, k, `0`)
		switch class {
		case supported, noEffect:
			accepted = append(accepted, k)
		case unknown:
			t.Errorf("topField has a case for %q but classifies it unknown", k)
		}
	}
	slices.Sort(accepted)
	if !slices.Equal(accepted, requestFieldNames[:]) {
		t.Errorf("decoder accepts %v\ntable names     %v", accepted, requestFieldNames)
	}
}

func TestDecodeRecordsFields(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"minimal", reqWithMessages(`{"role":"user","content":"hi"}`), []string{"messages", "model"}},
		{"nulls are absent", reqWith(`"stream":null,"tools":null,"n":null,"temperature":0`),
			[]string{"messages", "model", "temperature"}},
		{"stream with options", reqWith(`"stream":true,"stream_options":{"include_usage":true}`),
			[]string{"messages", "model", "stream", "stream_options"}},
		{"both budgets", reqWith(`"max_tokens":5,"max_completion_tokens":7`),
			[]string{"max_completion_tokens", "max_tokens", "messages", "model"}},
		{"duplicate keys, last null", reqWith(`"seed":1,"seed":null`), []string{"messages", "model"}},
		{"false and empty values count", reqWith(`"parallel_tool_calls":false,"stop":[],"tools":[],"logprobs":false,"metadata":{}`),
			[]string{"logprobs", "messages", "metadata", "model", "parallel_tool_calls", "stop", "tools"}},
		{"tools", reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":"required","response_format":{"type":"json_object"}`),
			[]string{"messages", "model", "response_format", "tool_choice", "tools"}},
		{"no-effect fields", reqWith(`"user":"u","store":true,"service_tier":"auto","top_p":1,"verbosity":"low","reasoning_effort":"low",` +
			`"presence_penalty":0,"frequency_penalty":0,"logit_bias":{},"safety_identifier":"s","prompt_cache_key":"k",` +
			`"prompt_cache_retention":"24h","prompt_cache_options":{"mode":"implicit"},"modalities":["text"]`),
			[]string{"frequency_penalty", "logit_bias", "messages", "modalities", "model", "presence_penalty", "prompt_cache_key",
				"prompt_cache_options", "prompt_cache_retention", "reasoning_effort", "safety_identifier", "service_tier", "store",
				"top_p", "user", "verbosity"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, e := DecodeChatRequest([]byte(tc.body), Limits{})
			if e != nil {
				t.Fatal(e)
			}
			if got := r.Fields.Names(); !slices.Equal(got, tc.want) {
				t.Errorf("Fields = %v, want %v", got, tc.want)
			}
			if r.Fields.Len() != len(tc.want) {
				t.Errorf("Len = %d, want %d", r.Fields.Len(), len(tc.want))
			}
			for _, n := range requestFieldNames {
				if r.Fields.Has(n) != slices.Contains(tc.want, n) {
					t.Errorf("Has(%q) = %v", n, r.Fields.Has(n))
				}
			}
		})
	}
}

func TestFieldSetValues(t *testing.T) {
	var zero FieldSet
	if got := zero.Names(); !slices.Equal(got, []string{"messages", "model"}) {
		t.Errorf("zero value names %v: model and messages are implied", got)
	}
	if zero.Has("top_logprobs") || zero.Has("nonsense") || zero.Has("") {
		t.Error("Has is true for a name outside the table")
	}
	r, e := DecodeChatRequest([]byte(reqWith(`"stream":true,"n":2,"seed":3`)), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if s := r.Fields.String(); s != "messages,model,n,seed,stream" {
		t.Errorf("String = %q", s)
	}
	b, err := json.Marshal(r.Fields)
	if err != nil || string(b) != `["messages","model","n","seed","stream"]` {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	var back FieldSet
	if err := json.Unmarshal(b, &back); err != nil || back != r.Fields {
		t.Errorf("round trip: %v (%v), want %v", back, err, r.Fields)
	}
	if err := json.Unmarshal([]byte(`["model","a-secret"]`), &back); err == nil {
		t.Error("a name outside the table was read")
	}
	// A minimal decoded request and one built by hand compare equal: the required members are
	// implied, not stored.
	m, e := DecodeChatRequest([]byte(reqWithMessages(`{"role":"user","content":"hi"}`)), Limits{})
	if e != nil || m.Fields != 0 {
		t.Errorf("minimal request Fields = %d, %v", m.Fields, e)
	}
}

// TestFieldSetOfAllocatesNothing: recording the fields must not cost the decoder an allocation.
func TestFieldSetOfAllocatesNothing(t *testing.T) {
	top, ok := splitObject(reqWith(`"stream":true,"stream_options":{"include_usage":true},"tools":[],"temperature":1`))
	if !ok {
		t.Fatal("split")
	}
	top = top.settle()
	if n := testing.AllocsPerRun(100, func() { _ = fieldSetOf(top) }); n != 0 {
		t.Errorf("fieldSetOf: %v allocations", n)
	}
}

// FuzzFieldsAreTheTopLevelKeys holds Fields to encoding/json's view of any body the decoder
// accepts: exactly its non-null top-level keys.
func FuzzFieldsAreTheTopLevelKeys(f *testing.F) {
	f.Add([]byte(reqWith(`"stream":true,"stream_options":{"include_usage":true},"n":2,"stop":["a"],"max_tokens":5`)))
	f.Add([]byte(reqWith(`"tools":[` + weatherToolJSON + `],"tool_choice":{"type":"function","function":{"name":"get_weather"}}`)))
	f.Add([]byte(reqWith(`"seed":null,"seed":4,"user":"x","metadata":{"a":"b"},"\u0073tore":true`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, e := DecodeChatRequest(body, Limits{})
		if e != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("decoded a body encoding/json refuses: %v", err)
		}
		var want []string
		for k, v := range m {
			if string(v) != "null" {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		if got := r.Fields.Names(); !slices.Equal(got, want) {
			t.Fatalf("Fields %v, top-level keys %v", got, want)
		}
	})
}

// BenchmarkFieldSetOf is what recording the fields adds to a decode (BenchmarkDecodeChatRequest
// is the whole): the top level of a typical streamed tool request.
func BenchmarkFieldSetOf(b *testing.B) {
	top, ok := splitObject(reqWith(`"stream":true,"stream_options":{"include_usage":true},"tools":[],"temperature":1`))
	if !ok {
		b.Fatal("split")
	}
	top = top.settle()
	b.ReportAllocs()
	for b.Loop() {
		_ = fieldSetOf(top)
	}
}
