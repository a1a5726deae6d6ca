package observability

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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
// runs. It is an sdktrace.SpanExporter; Tracing installs it behind a synchronous processor (so a
// span is queryable as soon as it ends) and behind the redacting exporter.
type SpanBuffer struct {
	mu    sync.Mutex
	ring  []bufferedSpan // fixed length; entries [0, count) are valid
	next  int            // slot the next span is written to
	count int
	seq   uint64 // insertion counter: orders spans and traces by recency
}

type bufferedSpan struct {
	seq  uint64
	span sdktrace.ReadOnlySpan
}

// NewSpanBuffer returns a buffer holding the size most recent spans (4096 when size < 1).
func NewSpanBuffer(size int) *SpanBuffer {
	if size < 1 {
		size = defaultSpanBufferSize
	}
	return &SpanBuffer{ring: make([]bufferedSpan, size)}
}

// ExportSpans keeps the spans, overwriting the oldest ones once the ring is full. The SDK hands
// over immutable snapshots, so they are stored as they are and turned into SpanRecords only
// when someone asks: exporting is on every request's path, querying is rare.
func (b *SpanBuffer) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range spans {
		b.seq++
		b.ring[b.next] = bufferedSpan{seq: b.seq, span: s}
		b.next = (b.next + 1) % len(b.ring)
		if b.count < len(b.ring) {
			b.count++
		}
	}
	return nil
}

// OnStart is part of sdktrace.SpanProcessor: nothing to do until a span ends.
func (b *SpanBuffer) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps an ended, sampled span. As a processor the buffer sees spans before any redaction:
// Query redacts every span it hands out, so nothing leaves it unfiltered.
func (b *SpanBuffer) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	b.seq++
	b.ring[b.next] = bufferedSpan{seq: b.seq, span: s}
	b.next = (b.next + 1) % len(b.ring)
	if b.count < len(b.ring) {
		b.count++
	}
	b.mu.Unlock()
}

// ForceFlush is part of sdktrace.SpanProcessor: the buffer holds nothing back.
func (b *SpanBuffer) ForceFlush(context.Context) error { return nil }

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
			s := b.ring[i].span
			for _, kv := range s.Attributes() {
				if string(kv.Key) == requestIDAttribute && kv.Value.AsString() == f.RequestID {
					traces[s.SpanContext().TraceID()] = struct{}{}
				}
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
		tid := e.span.SpanContext().TraceID()
		if wantTrace.IsValid() && tid != wantTrace {
			continue
		}
		if traces != nil {
			if _, ok := traces[tid]; !ok {
				continue
			}
		}
		matched = append(matched, e)
	}
	b.mu.Unlock()

	if len(matched) == 0 {
		return []SpanRecord{}
	}

	// matched is newest first, so the first time a trace appears gives its recency rank.
	rank := make(map[trace.TraceID]int)
	for _, e := range matched {
		if _, ok := rank[e.span.SpanContext().TraceID()]; !ok {
			rank[e.span.SpanContext().TraceID()] = len(rank)
		}
	}
	slices.SortFunc(matched, func(a, c bufferedSpan) int {
		at, ct := a.span.SpanContext().TraceID(), c.span.SpanContext().TraceID()
		if at != ct {
			return cmp.Compare(rank[at], rank[ct])
		}
		if d := a.span.StartTime().Compare(c.span.StartTime()); d != 0 {
			return d
		}
		return cmp.Compare(a.seq, c.seq)
	})

	out := make([]SpanRecord, len(matched))
	for i, e := range matched {
		out[i] = newSpanRecord(redactSpan(e.span))
	}
	return out
}

func newSpanRecord(s sdktrace.ReadOnlySpan) SpanRecord {
	sc := s.SpanContext()
	start, end := s.StartTime(), s.EndTime()
	r := SpanRecord{
		TraceID:    sc.TraceID().String(),
		SpanID:     sc.SpanID().String(),
		Name:       s.Name(),
		Kind:       s.SpanKind().String(),
		StartTime:  start,
		EndTime:    end,
		DurationMS: float64(end.Sub(start)) / float64(time.Millisecond),
		Status:     spanStatus(s.Status()),
		Attributes: attributeMap(s.Attributes()),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		r.ParentSpanID = p.SpanID().String()
	}
	if events := s.Events(); len(events) > 0 {
		r.Events = make([]SpanEvent, len(events))
		for i, ev := range events {
			r.Events[i] = SpanEvent{Name: ev.Name, Time: ev.Time}
			if len(ev.Attributes) > 0 {
				r.Events[i].Attributes = attributeMap(ev.Attributes)
			}
		}
	}
	return r
}

func spanStatus(s sdktrace.Status) SpanStatus {
	switch s.Code {
	case codes.Ok:
		return SpanStatus{Code: "ok"}
	case codes.Error:
		return SpanStatus{Code: "error", Description: s.Description}
	default:
		return SpanStatus{Code: "unset"}
	}
}

// attributeMap always returns a non-nil map so the JSON shows {} rather than null.
func attributeMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		// AsInterface yields string, bool, int64, float64 or a slice of those, all of which
		// encode to JSON directly.
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}
