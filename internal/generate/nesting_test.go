package generate

import (
	"fmt"
	"strings"
	"testing"

	"mockgateway/internal/testutil"
)

// deepSchemas are JSON Schemas nested as deep as a client likes (a non-strict schema is held to
// no nesting limit), one per way a schema nests: the shapes the generator descends.
var deepSchemas = []struct {
	name   string
	schema func(depth int) string
}{
	{"properties", func(d int) string {
		return strings.Repeat(`{"type":"object","required":["a"],"properties":{"a":`, d) + `{"type":"string"}` + strings.Repeat(`}}`, d)
	}},
	{"items", func(d int) string {
		return strings.Repeat(`{"type":"array","minItems":1,"items":`, d) + `{"type":"string"}` + strings.Repeat(`}`, d)
	}},
	{"anyOf", func(d int) string {
		return strings.Repeat(`{"anyOf":[`, d) + `{"type":"string"}` + strings.Repeat(`]}`, d)
	}},
	{"allOf", func(d int) string {
		return strings.Repeat(`{"allOf":[{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}},`, d) + `{"type":"object"}` + strings.Repeat(`]}`, d)
	}},
	{"not", func(d int) string { return strings.Repeat(`{"not":`, d) + `{"type":"string"}` + strings.Repeat(`}`, d) }},
	{"$ref chain", func(d int) string {
		defs := make([]string, d+1)
		for i := range d {
			defs[i] = fmt.Sprintf(`"d%d":{"type":"object","required":["a"],"properties":{"a":{"$ref":"#/$defs/d%d"}}}`, i, i+1)
		}
		defs[d] = fmt.Sprintf(`"d%d":{"type":"string"}`, d)
		return `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `}}`
	}},
}

// TestSchemaInstanceCostIsLinearInDepth: parsing a schema and generating an instance of it
// allocates at most about twice as much for a schema twice as deep, however it nests — the
// decoder's rule (TestDecodeCostIsLinearInDepth in internal/protocol) carried to the generator,
// which reads every schema a request carries.
func TestSchemaInstanceCostIsLinearInDepth(t *testing.T) {
	const depth = 300
	for _, c := range deepSchemas {
		t.Run(c.name, func(t *testing.T) {
			cost := func(d int) uint64 {
				schema := c.schema(d)
				return testutil.BytesAllocated(func() { _ = instance(schema, 0) })
			}
			cost(depth)
			single, double := cost(depth), cost(2*depth)
			if ratio := float64(double) / float64(single); ratio > 2.5 {
				t.Errorf("depth %d allocates %d B, depth %d %d B: %.1f times as much", depth, single, 2*depth, double, ratio)
			}
		})
	}
}

// BenchmarkSchemaInstanceDeep parses and generates each deep schema at the depth of the hostile
// load cases' schemas (cmd/loadtest's nestingDepth).
func BenchmarkSchemaInstanceDeep(b *testing.B) {
	for _, c := range deepSchemas {
		b.Run(c.name, func(b *testing.B) {
			schema := c.schema(4900)
			b.SetBytes(int64(len(schema)))
			b.ReportAllocs()
			for b.Loop() {
				_ = instance(schema, 0)
			}
		})
	}
}
