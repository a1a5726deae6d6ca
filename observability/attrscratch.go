package observability

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// AttributeScratch lends the slice of attributes a span is given. The SDK copies what it is
// given, but a slice passed through the trace.Span interface escapes: built on the stack, it
// would cost one allocation per call. Borrowed and released, it costs none
// (BenchmarkChatJSON/telemetry=on's allocations).
type AttributeScratch struct {
	kv [16]attribute.KeyValue
}

var attributeScratches = sync.Pool{New: func() any { return new(AttributeScratch) }}

// BorrowAttributes lends a scratch; Release gives it back once the span has been given the
// attributes.
func BorrowAttributes() *AttributeScratch { return attributeScratches.Get().(*AttributeScratch) }

// KeyValues is the empty slice to append the attributes to (16 fit without growing).
func (s *AttributeScratch) KeyValues() []attribute.KeyValue { return s.kv[:0] }

// Release clears the scratch (its values may hold strings) and gives it back. It clears what
// was used, found from the end, not all sixteen: a cleared attribute is 64 bytes written, with
// write barriers while the collector runs, and a borrower uses the first few.
func (s *AttributeScratch) Release() {
	n := len(s.kv)
	// An attribute.Value of type EMPTY is the zero Value: every constructor sets the type.
	for n > 0 && s.kv[n-1].Key == "" && s.kv[n-1].Value.Type() == attribute.EMPTY {
		n--
	}
	clear(s.kv[:n])
	attributeScratches.Put(s)
}
