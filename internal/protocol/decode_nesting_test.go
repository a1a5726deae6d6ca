package protocol

import (
	"strings"
	"testing"

	"mockgateway/internal/apierr"
	"mockgateway/internal/testutil"
)

// The worst nesting a client controls in each dialect, and the rule they are held to: decoding
// costs time and memory linear in the body's bytes, whatever its shape. The deepest constructs
// the decoders walk are a tool_result's content in the Messages dialect (blocks that might hold
// blocks) and a JSON Schema — a tool's parameters, a response format — in every dialect, whose
// patterns are checked at any depth (CheckSchemaPatterns). Other nested values (a tool's input,
// unknown members, metadata, annotations) are refused or kept whole without a descent.

// deepToolResults is a Messages request whose last turn holds a tool_result whose content holds a
// tool_result, depth times over.
func deepToolResults(depth int, count bool) string {
	nestedResult := strings.Repeat(`{"type":"tool_result","tool_use_id":"toolu_1","content":[`, depth) +
		`{"type":"text","text":"x"}` + strings.Repeat(`]}`, depth)
	body := `{"model":"mock-echo",`
	if !count {
		body += `"max_tokens":64,`
	}
	return body + `"messages":[{"role":"user","content":"read it"},` + toolUseTurn +
		`,{"role":"user","content":[` + nestedResult + `]}]}`
}

// deepSchema is a JSON Schema of depth nested object properties whose innermost string has a
// pattern over the mock's default bound: the pattern walk descends the whole depth, and the
// problem it reports is at the bottom.
func deepSchema(depth int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, depth) +
		`{"type":"string","pattern":"` + strings.Repeat(`[a-z]{1000}`, 8) + `"}` + strings.Repeat(`}}`, depth)
}

// deepNestingCases are each dialect's worst nesting, by name (BenchmarkDecodeDeepNesting's
// sub-benchmarks), with the decoder that reads it and the error code it answers.
var deepNestingCases = []struct {
	name   string
	body   func(depth int) string
	decode func(body []byte) *apierr.Error
	code   apierr.Code
}{
	{"messages", func(d int) string { return deepToolResults(d, false) },
		func(b []byte) *apierr.Error { _, e := DecodeAnthropicRequest(b, Limits{}); return e }, apierr.InvalidValue},
	{"count_tokens", func(d int) string { return deepToolResults(d, true) },
		func(b []byte) *apierr.Error { _, e := DecodeCountTokensRequest(b, Limits{}); return e }, apierr.InvalidValue},
	{"messages_input_schema", func(d int) string {
		return `{"model":"mock-tools","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + deepSchema(d) + `}]}`
	}, func(b []byte) *apierr.Error { _, e := DecodeAnthropicRequest(b, Limits{}); return e }, apierr.InvalidValue},
	{"chat", func(d int) string {
		return `{"model":"mock-tools","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + deepSchema(d) + `}}]}`
	}, func(b []byte) *apierr.Error { _, e := DecodeChatRequest(b, Limits{}); return e }, apierr.InvalidValue},
	{"responses", func(d int) string {
		return `{"model":"mock-tools","input":"hi","tools":[{"type":"function","name":"f","parameters":` + deepSchema(d) + `}]}`
	}, func(b []byte) *apierr.Error { _, _, e := DecodeResponsesRequest(b, Limits{}); return e }, apierr.InvalidValue},
	{"gemini", func(d int) string {
		return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parametersJsonSchema":` + deepSchema(d) + `}]}]}`
	}, decodeGemini, apierr.InvalidValue},
	{"gemini_openapi_parameters", func(d int) string {
		return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":` +
			strings.ReplaceAll(deepSchema(d), `"object"`, `"OBJECT"`) + `}]}]}`
	}, decodeGemini, apierr.InvalidValue},
}

// decodeGemini decodes a generateContent body, as the Gemini dialect's route does.
func decodeGemini(b []byte) *apierr.Error {
	_, e := DecodeGoogleRequest(GoogleCall{Model: "mock-tools"}, b, Limits{})
	return e
}

// TestDecodeCostIsLinearInDepth: doubling the depth of each dialect's worst nesting at most
// doubles what decoding it allocates (with room for rounding), where a cost that grew with the
// depth's square quadrupled it: a nested tool_result built its error path again at every
// level, and the schema pattern walk named every level's path on its way down.
func TestDecodeCostIsLinearInDepth(t *testing.T) {
	const depth = 400
	for _, c := range deepNestingCases {
		t.Run(c.name, func(t *testing.T) {
			cost := func(d int) uint64 {
				body := []byte(c.body(d))
				var e *apierr.Error
				n := testutil.BytesAllocated(func() { e = c.decode(body) })
				if e == nil || e.Code != c.code {
					t.Fatalf("depth %d: %v, want %s", d, e, c.code)
				}
				return n
			}
			cost(depth) // warm up whatever is allocated once
			single, double := cost(depth), cost(2*depth)
			if ratio := float64(double) / float64(single); ratio > 2.5 {
				t.Errorf("depth %d allocates %d B, depth %d %d B: %.1f times as much", depth, single, 2*depth, double, ratio)
			}
		})
	}
}

// BenchmarkDecodeDeepNesting decodes each dialect's worst nesting at the depth of the hostile
// load cases (cmd/loadtest's nestingDepth).
func BenchmarkDecodeDeepNesting(b *testing.B) {
	for _, c := range deepNestingCases {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body(4900))
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if e := c.decode(body); e == nil || e.Code != c.code {
					b.Fatalf("%v, want %s", e, c.code)
				}
			}
		})
	}
}

// deepNestingSeed is the named case's body at a depth a fuzz seed can carry: the fuzz targets
// start from each dialect's worst nesting.
func deepNestingSeed(name string) []byte {
	for _, c := range deepNestingCases {
		if c.name == name {
			return []byte(c.body(64))
		}
	}
	panic("no deep nesting case " + name)
}
