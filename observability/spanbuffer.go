package observability

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// defaultSpanBufferSize is used when no size is configured: a few hundred requests' worth of
// spans, bounded to a few megabytes.
const defaultSpanBufferSize = 4096

// requestIDAttribute is the span attribute that ties a server span to the request id clients see
// in the x-request-id header, which is how /debug/traces?request_id= finds a trace.
const requestIDAttribute = "mockgateway.request_id"

// SpanRecord is one ended span as served at GET /debug/traces. It is a plain copy: nothing in it
// refers back into the SDK, so buffered spans keep no SDK memory alive.
type SpanRecord struct {
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id,omitempty"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"` // "server", "internal", "client", "producer", "consumer"
	StartTime    time.Time      `json:"start_time"`
	EndTime      time.Time      `json:"end_time"`
	DurationMS   float64        `json:"duration_ms"`
	Status       SpanStatus     `json:"status"`
	Attributes   map[string]any `json:"attributes"`
	Events       []SpanEvent    `json:"events,omitempty"`
}

// SpanStatus is a span's status; Code is "unset", "ok" or "error".
type SpanStatus struct {
	Code        string `json:"code"`
	Description string `json:"description,omitempty"`
}

// SpanEvent is one event on a span, such as stream.first_chunk.
type SpanEvent struct {
	Name       string         `json:"name"`
	Time       time.Time      `json:"time"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// SpanFilter selects spans from the buffer. Zero fields do not filter; Limit 0 means no limit.
type SpanFilter struct {
	TraceID   string
	RequestID string
	Limit     int
}

// SpanBuffer keeps the most recent ended spans in a fixed-size ring, so the embedded trace
// inspector works without a tracing backend and memory stays bounded however long the service
// runs. It is an sdktrace.SpanProcessor: Tracing installs it on the provider, so a span is
// queryable as soon as it ends, and it keeps only what the allowlists let through.
type SpanBuffer struct {
	mu    sync.Mutex
	ring  []bufferedSpan // fixed length; entries [0, count) are valid
	next  int            // slot the next span is written to
	count int
	seq   uint64 // insertion counter: orders spans and traces by recency
	// scratch lends keep the buffers it encodes into, outside the lock (*[]byte).
	scratch sync.Pool
}

// bufferedSpan is one span as the buffer keeps it: the few fields a query filters and sorts on,
// and the span already redacted, as a compact binary record (spanrecord.go) from which
// /debug/traces makes its JSON. A byte slice holds no pointers, so thousands of buffered spans
// cost the garbage collector almost nothing to scan, where the SDK's snapshots (strings,
// attribute slices, events) cost it on every cycle of every request.
type bufferedSpan struct {
	seq       uint64
	traceID   trace.TraceID
	start     int64 // unix nanoseconds, for ordering a trace's spans
	requestID string
	record    []byte
}

// NewSpanBuffer returns a buffer holding the size most recent spans (4096 when size < 1).
func NewSpanBuffer(size int) *SpanBuffer {
	if size < 1 {
		size = defaultSpanBufferSize
	}
	return &SpanBuffer{ring: make([]bufferedSpan, size)}
}

// OnStart is part of sdktrace.SpanProcessor: nothing to do until a span ends.
func (b *SpanBuffer) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps an ended, sampled span. As a processor the buffer sees spans before any exporter:
// add encodes only allowlisted attributes, so nothing unfiltered is kept, let alone served.
func (b *SpanBuffer) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		b.add(s)
	}
}

// ForceFlush is part of sdktrace.SpanProcessor: the buffer holds nothing back.
func (b *SpanBuffer) ForceFlush(context.Context) error { return nil }

// add encodes the span outside the lock, then stores it. The ring's slots keep their byte
// slices: a span is copied into the capacity the span it replaces leaves, so in the steady state
// keeping a span allocates nothing (Query copies what it reads, under the lock).
func (b *SpanBuffer) add(s sdktrace.ReadOnlySpan) { b.keep(viewOf(s)) }

// keep encodes a span's record into its ring slot.
func (b *SpanBuffer) keep(s spanView) {
	scratch, _ := b.scratch.Get().(*[]byte)
	if scratch == nil {
		scratch = new([]byte)
	}
	encoded := appendSpanRecord((*scratch)[:0], s)
	var requestID string
	for _, kv := range s.attrs {
		if string(kv.Key) == requestIDAttribute {
			requestID = kv.Value.AsString()
		}
	}
	traceID, start := s.traceID, s.start.UnixNano()
	b.mu.Lock()
	b.seq++
	e := &b.ring[b.next]
	*e = bufferedSpan{seq: b.seq, traceID: traceID, start: start, requestID: requestID, record: append(e.record[:0], encoded...)}
	b.next = (b.next + 1) % len(b.ring)
	if b.count < len(b.ring) {
		b.count++
	}
	b.mu.Unlock()
	*scratch = encoded
	b.scratch.Put(scratch)
}

// Shutdown does nothing: the buffer holds no resources, and it stays queryable after the
// provider shut down so a test or a final /debug/traces request can still read it.
func (b *SpanBuffer) Shutdown(context.Context) error { return nil }

// Len returns the number of buffered spans.
func (b *SpanBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count
}

// Query returns the buffered spans that match f, grouped by trace: the most recently active
// trace first, the spans of one trace in start-time order.
//
//   - No filter: the Limit most recent spans.
//   - TraceID: the spans of that trace.
//   - RequestID: every span of the traces that contain a span whose mockgateway.request_id is
//     RequestID — the whole trace, because child spans (chat) do not carry the request id.
//
// Limit, when positive, keeps the most recently buffered matching spans.
func (b *SpanBuffer) Query(f SpanFilter) []SpanRecord {
	var wantTrace trace.TraceID
	if f.TraceID != "" {
		id, err := trace.TraceIDFromHex(strings.ToLower(f.TraceID))
		if err != nil {
			return []SpanRecord{}
		}
		wantTrace = id
	}

	b.mu.Lock()
	var traces map[trace.TraceID]struct{}
	if f.RequestID != "" {
		traces = make(map[trace.TraceID]struct{})
		for i := range b.count {
			if e := &b.ring[i]; e.requestID == f.RequestID {
				traces[e.traceID] = struct{}{}
			}
		}
	}
	var matched []bufferedSpan
	// Walk from the newest entry backwards so Limit keeps the most recent spans.
	for i := range b.count {
		e := b.ring[(b.next-1-i+len(b.ring))%len(b.ring)]
		if f.Limit > 0 && len(matched) == f.Limit {
			break
		}
		if wantTrace.IsValid() && e.traceID != wantTrace {
			continue
		}
		if traces != nil {
			if _, ok := traces[e.traceID]; !ok {
				continue
			}
		}
		e.record = bytes.Clone(e.record) // the slot's bytes are reused once the lock is released
		matched = append(matched, e)
	}
	b.mu.Unlock()

	if len(matched) == 0 {
		return []SpanRecord{}
	}

	// matched is newest first, so the first time a trace appears gives its recency rank.
	rank := make(map[trace.TraceID]int)
	for _, e := range matched {
		if _, ok := rank[e.traceID]; !ok {
			rank[e.traceID] = len(rank)
		}
	}
	slices.SortFunc(matched, func(a, c bufferedSpan) int {
		if a.traceID != c.traceID {
			return cmp.Compare(rank[a.traceID], rank[c.traceID])
		}
		if d := cmp.Compare(a.start, c.start); d != 0 {
			return d
		}
		return cmp.Compare(a.seq, c.seq)
	})

	out := make([]SpanRecord, 0, len(matched))
	for _, e := range matched {
		if r, err := decodeSpanRecord(e.record); err == nil {
			out = append(out, r)
		}
	}
	return out
}
