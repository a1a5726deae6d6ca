package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
)

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
	judge := judgeWith(request, func(body string) *apierr.Error {
		_, aerr := protocol.DecodeChatRequest([]byte(body), protocol.Limits{})
		return aerr
	})
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

// judgeWith judges bodies by a decoder and a schema: judge gives both verdicts, and why
// (formatting the errors costs more than judging) is asked for only when they differ.
func judgeWith(schema *jsonschema.Schema, decode func(body string) *apierr.Error) (judge func(body string) (decoder, valid bool, why func() string)) {
	return func(body string) (bool, bool, func() string) {
		aerr := decode(body)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err != nil {
			return aerr == nil, false, func() string { return "not JSON" }
		}
		verr := schema.Validate(v)
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
}
