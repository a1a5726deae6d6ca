package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"mockgateway/internal/jsonscan"
)

// checkSplitMatches holds the splitters to encoding/json on one valid JSON value and, through
// its members and elements, on everything nested in it: splitObject must give what unmarshalling
// into map[string]json.RawMessage gives (nulls dropped, keys sorted), splitArray what
// unmarshalling into []json.RawMessage gives, jsonscan.Unquote what unmarshalling into a string
// gives.
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
		u, ok := jsonscan.Unquote(trimmed)
		us, oks := jsonscan.Unquote(string(trimmed))
		if (sErr == nil) != ok || u != s || ok != oks || us != s {
			t.Fatalf("jsonscan.Unquote(%q) = %q ok=%v (as a string %q ok=%v), encoding/json %q err=%v", v, u, ok, us, oks, s, sErr)
		}
	}
	checkStringSplitMatches(t, v)
}

// checkStringSplitMatches holds the splitters' string instantiation, the decoder's, to their
// bytes one on v: the same members and elements, the same verdict.
func checkStringSplitMatches(t *testing.T, v []byte) {
	t.Helper()
	ob, okb := splitObject(v)
	var room stackMembers
	os, oks := appendMembers(room[:0], string(v), string(v))
	if okb != oks || len(ob) != len(os) {
		t.Fatalf("splitObject(%q): %d members ok=%v, as a string %d ok=%v", v, len(ob), okb, len(os), oks)
	}
	for i := range ob {
		if ob[i].key != os[i].key || string(ob[i].val) != os[i].val {
			t.Fatalf("splitObject(%q) member %d: %q:%q, as a string %q:%q", v, i, ob[i].key, ob[i].val, os[i].key, os[i].val)
		}
	}
	ab, okb := splitArray(v)
	var elems stackElements
	as, oks := appendElements(elems[:0], string(v))
	if okb != oks || len(ab) != len(as) {
		t.Fatalf("splitArray(%q): %d elements ok=%v, as a string %d ok=%v", v, len(ab), okb, len(as), oks)
	}
	for i := range ab {
		if string(ab[i]) != as[i] {
			t.Fatalf("splitArray(%q)[%d] = %q, as a string %q", v, i, ab[i], as[i])
		}
	}
}

var splitSeeds = []string{
	`{}`, `[]`, `""`, `null`, `{"a":null}`, ` { "b" : 1 , "a" : [ 1 , 2 ] } `,
	`{"a":1,"a":2}`, `{"a":1,"a":null}`, `{"a":null,"a":1}`, `{"\u0061":1,"a":2}`, `{"a\"b":"c\\d"}`,
	`{"k":"caf\u00e9 \ud83d\ude00","é":"x"}`, "{\"bad\xff\":\"\xfe\"}", `[{"x":[{"y":"}"}]},"]",-1.5e3,true,false,null]`,
	`{"model":"mock-echo","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true}`,
	`"\u0000\n\t\/"`, `"\ud800"`, `123`, `{"":""}`, `[[[[]]]]`,
	`"\ud83d\ude00\ud83d \udc00\u00e9\""`, "\"caf\xc3\xa9 \xff\xfe \\n\"", `"a\\\"b\\"`,
	manyMembers(40),
}

// manyMembers is an object of n members in reverse order, every third key sent twice.
func manyMembers(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := n; i > 0; i-- {
		fmt.Fprintf(&b, `"k%03d":%d,`, i, i)
		if i%3 == 0 {
			fmt.Fprintf(&b, `"k%03d":null,"k%03d":-%d,`, i, i, i)
		}
	}
	b.WriteString(`"k000":0}`)
	return b.String()
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

// benchBodies are the requests clients send most: a short chat, and one with a system prompt, a
// tool and a tool round trip, as the SDKs serialise them.
var benchBodies = map[string]string{
	"chat": `{"model":"mock-echo","messages":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`,
	"tools": `{"messages":[{"content":"You are terse.","role":"system"},{"content":"Weather in Paris?","role":"user"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_1","function":{"arguments":"{\"city\":\"Paris\"}","name":"weather"},"type":"function"}]},` +
		`{"content":"{\"temp\":21}","role":"tool","tool_call_id":"call_1"}],"model":"mock-tools","stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"function":{"name":"weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},"type":"function"}],"temperature":0.2}`,
}

// benchResponsesBodies are the same two requests in the Responses dialect, as openai-go sends them.
var benchResponsesBodies = map[string]string{
	"chat": `{"input":"the quick brown fox jumps over the lazy dog","model":"mock-echo"}`,
	"tools": `{"input":[{"content":"Weather in Paris?","role":"user"},{"arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"weather","type":"function_call"},` +
		`{"call_id":"call_1","output":"{\"temp\":21}","type":"function_call_output"}],"instructions":"You are terse.","model":"mock-tools","stream":true,` +
		`"temperature":0.2,"tools":[{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":false,"type":"function","description":"Current weather"}]}`,
}

// BenchmarkDecodeChatRequest decodes benchBodies.
func BenchmarkDecodeChatRequest(b *testing.B) {
	for _, name := range []string{"chat", "tools"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			raw := []byte(benchBodies[name])
			for b.Loop() {
				if _, e := DecodeChatRequest(raw, Limits{}); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}

// TestDecodeAllocations holds the decoder to what a clean request must cost: the copy of its
// body, the request, and its slices (messages, tool calls, tools), the copy of a kept JSON
// Schema, a temperature's pointer and an escaped string's unescaping. Paths, keys, values,
// members and elements cost nothing: a split object or array that escaped to the heap, or a path
// built eagerly, fails here before it shows in a profile.
func TestDecodeAllocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		want float64
	}{{"chat", 3}, {"tools", 9}} {
		body := []byte(benchBodies[tc.name])
		if n := testing.AllocsPerRun(50, func() { _, _ = DecodeChatRequest(body, Limits{}) }); n > tc.want {
			t.Errorf("%s: %v allocations, want %v", tc.name, n, tc.want)
		}
	}
}

// splitObject splits a valid JSON object into its members (ok false when v is not one): the
// tests' way to split raw bytes with the decoder's own splitter.
func splitObject[T text](v T) (_ members[T], ok bool) {
	return appendMembers(make(members[T], 0, 8), v, string(v))
}

// splitArray splits a valid JSON array into its elements (ok false when v is not one).
func splitArray[T text](v T) (_ []T, ok bool) {
	return appendElements(make([]T, 0, 4), v)
}

// BenchmarkValidJSON is the decoder's check of a whole body (BenchmarkDecodeChatRequest's tool
// round trip), by encoding/json and by jsonscan.Valid.
func BenchmarkValidJSON(b *testing.B) {
	body := []byte(benchBodies["tools"])
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"encoding-json", json.Valid}, {"validJSON", jsonscan.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !v.valid(body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
