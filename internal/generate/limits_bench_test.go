package generate

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkGenerateHugeSchema reports the worst cases of issue 18. Time per answer should grow
// with the schema's size (parsing) and stay flat in what the schema asks for beyond the ceiling:
// compare properties/1k, 10k and 100k.
//
//	go test -run '^$' -bench GenerateHugeSchema -benchmem ./internal/generate
func BenchmarkGenerateHugeSchema(b *testing.B) {
	type bench struct {
		name string
		in   Input
	}
	var cases []bench
	for _, n := range []int{1000, 10000, 100000} {
		props := `{"type":"object","properties":{` + repeatJSON(n, `"p%d":{"type":"null"}`) +
			`},"required":[` + repeatJSON(n, `"p%d"`) + `]}`
		cases = append(cases, bench{fmt.Sprintf("properties/%dk", n/1000),
			Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(props, 1)}})
	}
	for _, n := range []int{1000, 10000, 100000} {
		required := `{"type":"object","required":[` + repeatJSON(n, `"r%d"`) + `]}`
		cases = append(cases, bench{fmt.Sprintf("required/%dk", n/1000),
			Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(required, 1)}})
	}
	patterns := `{"type":"array","minItems":64,"items":{"type":"string","pattern":"` + longPattern + `"}}`
	strs := grid(`{"type":"string","minLength":4096}`)
	ints := `{"type":"array","minItems":64,"items":{"type":"array","minItems":64,"items":{"type":"array","minItems":64,"items":{"type":"integer"}}}}`
	echo := userRequest(strings.Repeat("lorem ipsum dolor sit amet ", 40000))
	echo.N = 128
	cases = append(cases,
		bench{"pattern-array/n=128", Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(patterns, 128)}},
		bench{"strings-4096/n=128", Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(strs, 128)}},
		bench{"tool-strings-4096/n=128", Input{Model: "m", Behavior: BehaviorTools, Request: toolsRequest(strs, 128)}},
		bench{"integers-64x64x64/n=128", Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(ints, 128)}},
		bench{"echo-1MB/n=128", Input{Model: "mock-echo", Behavior: BehaviorEcho, Request: echo}},
		bench{"allOf-5000/n=128", Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(
			`{"allOf":[`+repeatJSON(5000, `{"properties":{"p%d":{"type":"null"}}}`)+`]}`, 128)}},
		bench{"recursive-tree/n=128", Input{Model: "m", Behavior: BehaviorChat, Request: schemaRequest(
			`{"$defs":{"t":{"type":"object","properties":{"l":{"$ref":"#/$defs/t"},"r":{"$ref":"#/$defs/t"},`+
				`"v":{"anyOf":[{"type":"integer"},{"$ref":"#/$defs/t"}]}},"required":["l","r","v"]}},"$ref":"#/$defs/t"}`, 128)}},
	)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var out int
			for b.Loop() {
				res := Generate(c.in)
				out = 0
				for _, ch := range res.Choices {
					out += len(ch.Text())
					for _, call := range ch.ToolCalls {
						out += len(call.Arguments.Text())
					}
				}
			}
			b.ReportMetric(float64(out), "out-bytes")
		})
	}
}

// BenchmarkParseLargeSchema parses the 64×64×64-integer schema of make hostile (5 MB, about
// 800,000 values): allocations per parse should stay a few per object, not several per value.
//
//	go test -run '^$' -bench ParseLargeSchema -benchmem ./internal/generate
func BenchmarkParseLargeSchema(b *testing.B) {
	schema := `{"type":"integer"}`
	for range 3 {
		schema = `{"type":"object","properties":{` + strings.ReplaceAll(repeatJSON(64, `"p%d":LEAF`), "LEAF", schema) +
			`},"required":[` + repeatJSON(64, `"p%d"`) + `]}`
	}
	data := []byte(schema)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
