package protocol

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// checkSplitMatches holds the splitters to encoding/json on one valid JSON value and, through
// its members and elements, on everything nested in it: splitObject must give what unmarshalling
// into map[string]json.RawMessage gives (nulls dropped, keys sorted), splitArray what
// unmarshalling into []json.RawMessage gives, unquote what unmarshalling into a string gives.
func checkSplitMatches(t *testing.T, v []byte, depth int) {
	t.Helper()
	if depth > 64 {
		return
	}
	var m map[string]json.RawMessage
	mErr := json.Unmarshal(v, &m)
	o, ok := splitObject(v)
	if (mErr == nil && m != nil) != ok {
		t.Fatalf("splitObject(%q) ok=%v, encoding/json err=%v", v, ok, mErr)
	}
	if ok {
		maps.DeleteFunc(m, func(_ string, raw json.RawMessage) bool { return isJSONNull(raw) })
		keys := slices.Sorted(maps.Keys(m))
		if len(keys) != len(o) {
			t.Fatalf("splitObject(%q): %d members, encoding/json %d", v, len(o), len(keys))
		}
		for i, k := range keys {
			if o[i].key != k || !bytes.Equal(o[i].val, m[k]) {
				t.Fatalf("splitObject(%q) member %d = %q:%q, encoding/json %q:%q", v, i, o[i].key, o[i].val, k, m[k])
			}
			checkSplitMatches(t, o[i].val, depth+1)
		}
	}

	var a []json.RawMessage
	aErr := json.Unmarshal(v, &a)
	elems, ok := splitArray(v)
	if (aErr == nil && a != nil) != ok {
		t.Fatalf("splitArray(%q) ok=%v, encoding/json err=%v", v, ok, aErr)
	}
	if ok {
		if len(a) != len(elems) {
			t.Fatalf("splitArray(%q): %d elements, encoding/json %d", v, len(elems), len(a))
		}
		for i := range a {
			if !bytes.Equal(a[i], elems[i]) {
				t.Fatalf("splitArray(%q)[%d] = %q, encoding/json %q", v, i, elems[i], a[i])
			}
			checkSplitMatches(t, elems[i], depth+1)
		}
	}

	trimmed := bytes.TrimSpace(v)
	if len(trimmed) > 0 && trimmed[0] == '"' {
		var s string
		sErr := json.Unmarshal(v, &s)
		u, ok := unquote(trimmed)
		if (sErr == nil) != ok || u != s {
			t.Fatalf("unquote(%q) = %q ok=%v, encoding/json %q err=%v", v, u, ok, s, sErr)
		}
	}
}

var splitSeeds = []string{
	`{}`, `[]`, `""`, `null`, `{"a":null}`, ` { "b" : 1 , "a" : [ 1 , 2 ] } `,
	`{"a":1,"a":2}`, `{"a":1,"a":null}`, `{"a":null,"a":1}`, `{"\u0061":1,"a":2}`, `{"a\"b":"c\\d"}`,
	`{"k":"caf\u00e9 \ud83d\ude00","é":"x"}`, "{\"bad\xff\":\"\xfe\"}", `[{"x":[{"y":"}"}]},"]",-1.5e3,true,false,null]`,
	`{"model":"mock-echo","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true}`,
	`"\u0000\n\t\/"`, `"\ud800"`, `123`, `{"":""}`, `[[[[]]]]`,
}

func TestSplitMatchesEncodingJSON(t *testing.T) {
	for _, s := range splitSeeds {
		if !json.Valid([]byte(s)) {
			t.Fatalf("seed %q is not valid JSON", s)
		}
		checkSplitMatches(t, []byte(s), 0)
	}
}

// FuzzSplitMatchesEncodingJSON: on any valid JSON the splitters agree with encoding/json, so
// the strict decoder accepts and rejects exactly what it did when it unmarshalled every level.
func FuzzSplitMatchesEncodingJSON(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return
		}
		checkSplitMatches(t, v, 0)
	})
}

// BenchmarkDecodeChatRequest decodes the requests clients send most: a short chat, and one with
// a system prompt, a tool and a tool round trip, as the SDKs serialise them.
func BenchmarkDecodeChatRequest(b *testing.B) {
	bodies := map[string]string{
		"chat": `{"model":"mock-echo","messages":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`,
		"tools": `{"messages":[{"content":"You are terse.","role":"system"},{"content":"Weather in Paris?","role":"user"},` +
			`{"role":"assistant","tool_calls":[{"id":"call_1","function":{"arguments":"{\"city\":\"Paris\"}","name":"weather"},"type":"function"}]},` +
			`{"content":"{\"temp\":21}","role":"tool","tool_call_id":"call_1"}],"model":"mock-tools","stream":true,"stream_options":{"include_usage":true},` +
			`"tools":[{"function":{"name":"weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},"type":"function"}],"temperature":0.2}`,
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			raw := []byte(body)
			for b.Loop() {
				if _, e := DecodeChatRequest(raw, Limits{}); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}
