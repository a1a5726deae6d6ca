package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestResponsesPinned holds what the Responses decoder makes of a wide range of bodies — the
// decoded request and the answer that carries its echo, or the error with its status, code,
// param and message — to testdata/responses_pinned.golden, which the decoder and encoder wrote
// before they were made faster: a faster one must make the same bytes and the same errors. The
// bodies are a table of varied requests and every recorded client body
// (../server/testdata/responses-clients), rendered in full, and mutations of a few rich requests
// (each member and element dropped or replaced by values of every type, each object given an
// unknown and a duplicated key), which reach most of the decoder's errors: these are pinned by a
// digest per mutated place, to keep the file short. go test -run ResponsesPinned
// -update-responses-pins rewrites the file.
func TestResponsesPinned(t *testing.T) {
	var out bytes.Buffer
	for _, c := range pinnedResponsesTable {
		fmt.Fprintf(&out, "== table/%s\n%s\n", c.name, renderResponsesDecode([]byte(c.body)))
	}
	for _, c := range recordedClientBodies(t) {
		fmt.Fprintf(&out, "== client/%s\n%s\n", c.name, renderResponsesDecode([]byte(c.body)))
	}
	fmt.Fprintf(&out, "== function calls answer\n%s\n", pinnedCallsAnswer.AppendJSON(nil))
	for _, b := range pinnedMutationBases {
		root, err := parseOrdered(b.body)
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		var place string
		h := sha256.New()
		n := 0
		flush := func() {
			if n > 0 {
				fmt.Fprintf(&out, "== mutation/%s/%s (%d bodies) %x\n", b.name, place, n, h.Sum(nil)[:12])
			}
			h.Reset()
			n = 0
		}
		for _, m := range mutations(root, "") {
			if m.place != place {
				flush()
				place = m.place
			}
			fmt.Fprintf(h, "%s\n%s\n", m.op, renderResponsesDecode([]byte(m.body.String())))
			n++
		}
		flush()
	}
	path := filepath.Join("testdata", "responses_pinned.golden")
	if *updateResponsesPins {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run ResponsesPinned -update-responses-pins writes it)", err)
	}
	if got := out.Bytes(); !bytes.Equal(got, want) {
		g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		shown := 0
		for i := 0; i < max(len(g), len(w)) && shown < 10; i++ {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Errorf("line %d\n got %s\nwant %s", i+1, gl, wl)
				shown++
			}
		}
		t.Fatalf("the decoder's or encoder's output differs from testdata/responses_pinned.golden (%d lines, want %d)", len(g), len(w))
	}
}

var updateResponsesPins = flag.Bool("update-responses-pins", false, "rewrite testdata/responses_pinned.golden")

// renderResponsesDecode is everything DecodeResponsesRequest gives for body, as text: the error,
// or the request and the answer that carries its echo.
func renderResponsesDecode(body []byte) string {
	r, echo, e := DecodeResponsesRequest(body, Limits{})
	if e != nil {
		return fmt.Sprintf("error %d %s %s param=%q %q", e.Status, e.Type, e.Code, e.Param, e.Message)
	}
	req, err := json.Marshal(r)
	if err != nil {
		return "request not marshalled: " + err.Error()
	}
	answer := Response{ID: "resp_1", CreatedAt: 1800000000, Status: "completed", CompletedAt: 1800000001, Model: "mock-chat",
		Output: []OutputItem{{ID: "msg_1", Status: "completed", Text: "a \"quoted\" <answer>\n\u2028é"}},
		Usage:  &ResponseUsage{Input: 12, Output: 7}, Echo: echo}
	return fmt.Sprintf("request %s\nanswer %s", req, answer.AppendJSON(nil))
}

// pinnedCallsAnswer is an answer of every other kind of output item, and no echo.
var pinnedCallsAnswer = Response{ID: "resp_2", CreatedAt: 1800000000, Status: "incomplete", Incomplete: "max_output_tokens", Model: "mock-tools",
	Output: []OutputItem{{Function: true, ID: "fc_1", Status: "completed", CallID: "call_1", Name: "f", Arguments: `{"a":1}`},
		{ID: "msg_2", Status: "incomplete", Text: "no", Refusal: true}, {ID: "msg_3", Status: "in_progress", NoPart: true}}}

// pinnedResponsesTable are requests that between them carry every member the decoder accepts,
// every input form, and the values the echo treats apart (nulls in its first two levels, a
// schema's own nulls, whitespace, escapes, duplicated keys).
var pinnedResponsesTable = []struct{ name, body string }{
	{"string input", `{"model":"mock-echo","input":"the quick brown fox jumps over the lazy dog"}`},
	{"load bench item", `{"model":"mock-echo","input":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`},
	{"bench tools", benchResponsesBodies["tools"]},
	{"instructions string", `{"model":"m","instructions":"Be brief.","input":"hi"}`},
	{"instructions items", `{"model":"m","instructions":[{"role":"developer","content":"x"},{"role":"system","content":[{"type":"input_text","text":"y"}]}],"input":[{"role":"user","content":"q"}]}`},
	{"instructions empty array", `{"model":"m","instructions":[],"input":"hi"}`},
	{"instructions only", `{"model":"m","instructions":"sys","input":[{"type":"item_reference","id":"msg_1"}]}`},
	{"instructions with a call", `{"model":"m","instructions":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c9","output":"x"}],"input":"hi"}`},
	{"parts", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}}]}]}`},
	{"one part", `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"only"}]}]}`},
	{"empty parts", `{"model":"m","input":[{"role":"user","content":[]},{"role":"user","content":"q"}]}`},
	{"escaped texts", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"\u00e9\n\"a\""},{"type":"input_text","text":"\ud83d\ude00"}]}]}`},
	{"an answer sent back", `{"model":"m","input":[{"role":"user","content":"q"},` +
		`{"type":"message","role":"assistant","id":"msg_1","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"t","annotations":[],"logprobs":[]},{"type":"refusal","refusal":"r"}]},` +
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},` +
		`{"type":"function_call","call_id":"c2","name":"g","arguments":"{\"x\":1}","id":"fc_2","status":"completed","namespace":"n","caller":{"type":"direct"}},` +
		`{"type":"reasoning","id":"rs_1","summary":[],"content":[],"encrypted_content":"e","status":"completed"},` +
		`{"type":"function_call_output","call_id":"c1","output":"one","id":"o1","name":"f","namespace":"n","caller":{},"status":"completed"},` +
		`{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"two"},{"type":"input_text","text":"!"}]},` +
		`{"role":"user","content":"and?"}]}`},
	{"calls without text", `{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"x"},{"type":"function_call_output","call_id":"c1","output":"y"}]}`},
	{"an output before its call", `{"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":"y"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`},
	{"outputs answering nothing", `{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"y"},{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c2","output":"y"},{"type":"function_call_output","call_id":"c3","output":"z"}]}`},
	{"an escaped output type", `{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function\u005fcall_output","call_id":"c1","output":"y"},{"type":"function_call_output","call_id":"c4","output":"z"}]}`},
	{"an unanswered output and a later error", `{"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":"y"}],"top_p":2}`},
	{"an unanswered output and stream_options", `{"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":"y"}],"stream_options":{}}`},
	{"a reference stands for calls", `{"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":"y"},{"id":"fc_1"}]}`},
	{"many calls", `{"model":"m","input":[` + strings.Repeat(`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},`, 20) +
		`{"type":"function_call_output","call_id":"c","output":"y"}]}`},
	{"many items", `{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"q"},{"role":"assistant","content":"a"},`, 12), ",") + `]}`},
	{"every echoed member", `{"model":"mock-tools","input":"Hi","tools":[{"type":"function","name":"get_weather","description":"Weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true}],"tool_choice":{"type":"function","name":"get_weather"},` +
		`"parallel_tool_calls":false,"temperature":0.2,"top_p":0.9,"metadata":{"k":"v"},"reasoning":{"effort":"low","summary":"auto"},` +
		`"include":["message.output_text.logprobs"],"store":false,"truncation":"auto","service_tier":"auto","user":"u","safety_identifier":"s",` +
		`"prompt_cache_key":"p","max_tool_calls":3,"top_logprobs":0,"text":{"verbosity":"low"},"background":false,"instructions":"i","max_output_tokens":64,` +
		`"stream":true,"stream_options":{"include_obfuscation":false},"prompt_cache_retention":"24h","prompt_cache_options":{"mode":"implicit","ttl":"30m"}}`},
	{"echoed nulls", `{"model":"m","input":"hi","instructions":null,"metadata":{"a":null,"b":"c"},"text":{"format":null,"verbosity":"low"},"reasoning":{"effort":null,"summary":"auto"},"tool_choice":null,"user":null,"top_p":null}`},
	{"echoed nulls deeper", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"s","description":null,"schema":{"type":"object","default":null,"properties":{"a":{"type":"string","default":null}}}}}}`},
	{"echoed whitespace", "{ \"model\" : \"m\" ,\n\t\"input\" : \"hi\" , \"metadata\" : { \"z\" : \"1\" , \"a\" : \"2 3\" } ,\r\n \"text\" : { \"format\" : { \"type\" : \"json_schema\" , \"name\" : \"s\" , \"schema\" : { \"type\" : \"object\" , \"properties\" : { \"a b\" : { \"enum\" : [ 1 , 2.50 , \"x y\" , null , true ] } } } } } ,\n\"reasoning\":{\"effort\":\"low\"} , \"temperature\" : 0.70 , \"max_output_tokens\" : 1.6e1 }"},
	{"echoed escapes", `{"model":"m","input":"hi","instructions":"\u00e9\/\"<>&\u2028","metadata":{"\u006b":"\u00e9<>","k2":"\ud83d\ude00"},"user":"\u0041\t","prompt_cache_key":"a\/b","safety_identifier":"\u0073"}`},
	{"echoed duplicates", `{"model":"m","input":"hi","metadata":{"k":"1","k":"2","a":"3"},"temperature":1,"temperature":0.5,"text":{"verbosity":"low","verbosity":"high"}}`},
	{"echoed key order", `{"user":"u","top_p":1,"tool_choice":"none","text":{"verbosity":"high","format":{"type":"json_object"}},"temperature":0,"safety_identifier":"s","reasoning":{"summary":"concise","effort":"high"},"prompt_cache_key":"k","parallel_tool_calls":true,"metadata":{},"max_tool_calls":0,"max_output_tokens":4096,"instructions":"","input":"hi","model":"m","truncation":"disabled","top_logprobs":0}`},
	{"tool_choice modes", `{"model":"m","input":"hi","tool_choice":"required","tools":[{"type":"function","name":"f"}]}`},
	{"tools strict mixed", `{"model":"m","input":"hi","tools":[{"type":"function","name":"a","strict":false},{"type":"function","name":"b","strict":true,"parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false}},{"type":"function","name":"c"},{"type":"function","name":"d","strict":null,"description":"D","parameters":{ "type" : "object" }},{"type":"function","name":"e","strict":false,"strict":true,"parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false}},{"type":"function","name":"f","defer_loading":true,"allowed_callers":[],"output_schema":{}}]}`},
	{"many tools", `{"model":"m","input":"hi","tools":[` + strings.TrimSuffix(strings.Repeat(`{"type":"function","name":"f","parameters":{"type":"object"}},{"type":"function","name":"g","strict":false},`, 6), ",") + `]}`},
	{"text formats", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"s","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}}}`},
	{"text json_object", `{"model":"m","input":"hi","text":{"format":{"type":"json_object"}}}`},
	{"every other member", `{"model":"m","input":"hi","store":true,"background":false,"include":[],"service_tier":"priority","top_logprobs":0,"max_tool_calls":1,"truncation":"disabled","prompt_cache_retention":"in-memory","reasoning":{"mode":"x","context":"y","generate_summary":"detailed"}}`},
	{"stream", `{"model":"m","input":"hi","stream":true}`},
	{"stream false with options", `{"model":"m","input":"hi","stream":false,"stream_options":{"include_obfuscation":true}}`},
	{"budget bounds", `{"model":"m","input":"hi","max_output_tokens":16}`},
	{"empty input", `{"model":"m","input":[]}`},
	{"empty input with instructions", `{"model":"m","input":[],"instructions":"x"}`},
	{"not JSON", `{"model":"m","input":"hi"`},
	{"not an object", `["model"]`},
	{"trailing data", `{"model":"m","input":"hi"} {}`},
	{"unknown key with a control character", "{\"model\":\"m\",\"input\":\"hi\",\"a\\u0001b\":1}"},
}

// pinnedMutationBases are the requests mutated member by member.
var pinnedMutationBases = []struct{ name, body string }{
	{"echo", pinnedTableBody("every echoed member")},
	{"items", pinnedTableBody("an answer sent back")},
	{"tools", `{"model":"mock-tools","instructions":[{"role":"system","content":[{"type":"input_text","text":"s"}]}],"input":[{"role":"user","content":"q"},{"id":"msg_1"}],` +
		`"tools":[{"type":"function","name":"f","description":"d","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}],` +
		`"tool_choice":{"type":"function","name":"f"},"text":{"format":{"type":"json_schema","name":"s","strict":true,"description":"x","schema":{"type":"object","properties":{},"required":[],"additionalProperties":false}},"verbosity":"medium"}}`},
}

func pinnedTableBody(name string) string {
	for _, c := range pinnedResponsesTable {
		if c.name == name {
			return c.body
		}
	}
	panic("no pinned request " + name)
}

// recordedClientBodies are the request bodies of ../server/testdata/responses-clients, as the
// clients sent them (whitespace and all), by client/case.
func recordedClientBodies(t testing.TB) []struct{ name, body string } {
	t.Helper()
	dir := filepath.Join("..", "server", "testdata", "responses-clients")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil || len(files) < 40 {
		t.Fatalf("the recorded client bodies: %d files, %v", len(files), err)
	}
	slices.Sort(files)
	var out []struct{ name, body string }
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var entry struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(raw, &entry); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name, _ := filepath.Rel(dir, f)
		out = append(out, struct{ name, body string }{filepath.ToSlash(name), string(entry.Body)})
	}
	return out
}

// ordered is a JSON value that keeps its members' order, so that a mutated body differs from its
// base only where it was mutated.
type ordered struct {
	raw     string // a scalar, as JSON
	members []orderedMember
	items   []*ordered
	kind    byte // '{', '[' or 0 for a scalar
}

type orderedMember struct {
	key string
	val *ordered
}

func parseOrdered(s string) (*ordered, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	return readOrdered(dec)
}

func readOrdered(dec *json.Decoder) (*ordered, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		v := &ordered{kind: byte(tok)}
		for dec.More() {
			if v.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := readOrdered(dec)
				if err != nil {
					return nil, err
				}
				v.members = append(v.members, orderedMember{k.(string), val})
				continue
			}
			val, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, val)
		}
		_, err := dec.Token()
		return v, err
	case json.Number:
		return &ordered{raw: tok.String()}, nil
	case nil:
		return &ordered{raw: "null"}, nil
	default:
		b, err := json.Marshal(tok)
		return &ordered{raw: string(b)}, err
	}
}

func (v *ordered) String() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v *ordered) write(b *strings.Builder) {
	switch v.kind {
	case '{':
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(m.key))
			b.WriteByte(':')
			m.val.write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(v.raw)
	}
}

// pinnedReplacements are the values each member and element is replaced with in turn.
var pinnedReplacements = []string{`null`, `true`, `0`, `16`, `-1`, `2.5`, `""`, `"x"`, `"function"`, `[]`, `{}`, `[{}]`}

// mutation is a variant of a body: the place changed (a path) and how (op).
type mutation struct {
	place, op string
	body      *ordered
}

// mutations are root's variants: every member and element dropped or replaced by each of
// pinnedReplacements, and every object given an unknown member and a duplicate of its first,
// down to a tool's parameters and a format's schema, not into them. Each variant is a copy of
// root with one change.
func mutations(root *ordered, path string) []mutation {
	var out []mutation
	var walk func(v *ordered, path string, rebuild func(*ordered) *ordered)
	walk = func(v *ordered, path string, rebuild func(*ordered) *ordered) {
		switch v.kind {
		case '{':
			with := func(members []orderedMember) *ordered { return rebuild(&ordered{kind: '{', members: members}) }
			out = append(out, mutation{path, "+unknown", with(append(slices.Clone(v.members), orderedMember{"zz", &ordered{raw: "1"}}))})
			if len(v.members) > 0 {
				out = append(out, mutation{path, "+duplicate", with(append(slices.Clone(v.members), orderedMember{v.members[0].key, &ordered{raw: "null"}}))})
			}
			for i, m := range v.members {
				p := path + "." + m.key
				out = append(out, mutation{p, "-drop", with(slices.Delete(slices.Clone(v.members), i, i+1))})
				set := func(val *ordered) *ordered {
					ms := slices.Clone(v.members)
					ms[i].val = val
					return with(ms)
				}
				for _, r := range pinnedReplacements {
					out = append(out, mutation{p, "=" + r, set(&ordered{raw: r})})
				}
				if m.key != "parameters" && m.key != "schema" { // a JSON Schema is the client's, echoed as it came
					walk(m.val, p, set)
				}
			}
		case '[':
			with := func(items []*ordered) *ordered { return rebuild(&ordered{kind: '[', items: items}) }
			for i, it := range v.items {
				p := path + "[" + strconv.Itoa(i) + "]"
				out = append(out, mutation{p, "-drop", with(slices.Delete(slices.Clone(v.items), i, i+1))})
				set := func(val *ordered) *ordered {
					items := slices.Clone(v.items)
					items[i] = val
					return with(items)
				}
				for _, r := range pinnedReplacements {
					out = append(out, mutation{p, "=" + r, set(&ordered{raw: r})})
				}
				walk(it, p, set)
			}
		}
	}
	walk(root, path, func(v *ordered) *ordered { return v })
	return out
}
