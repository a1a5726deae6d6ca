package observability

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestAttributeScratchRelease: a released scratch holds nothing of what it was lent for —
// however many attributes were appended, with an empty one among them or all sixteen.
func TestAttributeScratchRelease(t *testing.T) {
	for _, kv := range [][]attribute.KeyValue{
		nil,
		{attribute.String("a", "x")},
		{attribute.String("a", "x"), {}, attribute.StringSlice("b", []string{"y"})},
		{{Value: attribute.StringValue("keyless")}},
		make([]attribute.KeyValue, 16),
	} {
		if len(kv) == 16 {
			for i := range kv {
				kv[i] = attribute.Int("n", i)
			}
		}
		s := new(AttributeScratch)
		_ = append(s.KeyValues(), kv...)
		s.Release()
		if s.kv != [16]attribute.KeyValue{} {
			t.Errorf("after %d attributes the scratch holds %v", len(kv), s.kv)
		}
	}
}
