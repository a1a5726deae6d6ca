package observability

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// bufferedSpan is one span as the buffer keeps it: the few fields a query filters and sorts on,
// and the span already redacted and encoded as the JSON /debug/traces serves. A byte slice holds
// no pointers, so thousands of buffered spans cost the garbage collector almost nothing to scan,
// where the SDK's snapshots (strings, attribute slices, events) cost it on every cycle of every
// request.
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

// ExportSpans keeps the spans, overwriting the oldest ones once the ring is full.
func (b *SpanBuffer) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	for _, s := range spans {
		b.add(s)
	}
	return nil
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
func (b *SpanBuffer) add(s sdktrace.ReadOnlySpan) {
	scratch := spanScratch.Get().(*[]byte)
	encoded := appendSpan((*scratch)[:0], s)
	var requestID string
	for _, kv := range s.Attributes() {
		if string(kv.Key) == requestIDAttribute {
			requestID = kv.Value.AsString()
		}
	}
	b.mu.Lock()
	b.seq++
	e := &b.ring[b.next]
	*e = bufferedSpan{seq: b.seq, traceID: s.SpanContext().TraceID(), start: s.StartTime().UnixNano(),
		requestID: requestID, record: append(e.record[:0], encoded...)}
	b.next = (b.next + 1) % len(b.ring)
	if b.count < len(b.ring) {
		b.count++
	}
	b.mu.Unlock()
	*scratch = encoded
	spanScratch.Put(scratch)
}

var spanScratch = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

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

// decodeSpanRecord turns a stored span back into a SpanRecord, with integer attributes as
// int64 as the SDK had them (JSON alone would make every number a float64).
func decodeSpanRecord(raw []byte) (SpanRecord, error) {
	var r SpanRecord
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	numbers(r.Attributes)
	for i := range r.Events {
		numbers(r.Events[i].Attributes)
	}
	return r, nil
}

func numbers(m map[string]any) {
	for k, v := range m {
		m[k] = number(v)
	}
}

func number(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = number(x[i])
		}
	}
	return v
}

// appendSpan writes the span as /debug/traces serves it (the SpanRecord shape), keeping only
// allowlisted attributes and a status description that is a bare code: the same rules as the
// redacting exporter. Hand-written appends, because this runs for every span of every request.
func appendSpan(buf []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	start, end := s.StartTime(), s.EndTime()
	buf = append(buf, `{"trace_id":"`...)
	tid := sc.TraceID()
	buf = hex.AppendEncode(buf, tid[:])
	buf = append(buf, `","span_id":"`...)
	sid := sc.SpanID()
	buf = hex.AppendEncode(buf, sid[:])
	buf = append(buf, '"')
	if p := s.Parent(); p.SpanID().IsValid() {
		buf = append(buf, `,"parent_span_id":"`...)
		pid := p.SpanID()
		buf = hex.AppendEncode(buf, pid[:])
		buf = append(buf, '"')
	}
	buf = append(buf, `,"name":`...)
	buf = appendJSONString(buf, s.Name())
	buf = append(buf, `,"kind":`...)
	buf = appendJSONString(buf, s.SpanKind().String())
	buf = append(buf, `,"start_time":"`...)
	buf = appendUTCTime(buf, start)
	buf = append(buf, `","end_time":"`...)
	buf = appendUTCTime(buf, end)
	buf = append(buf, `","duration_ms":`...)
	buf = appendFloat(buf, float64(end.Sub(start))/float64(time.Millisecond))
	st := s.Status()
	buf = append(buf, `,"status":{"code":`...)
	switch st.Code {
	case codes.Ok:
		buf = append(buf, `"ok"`...)
	case codes.Error:
		buf = append(buf, `"error"`...)
		if st.Description != "" && statusDescriptionAllowed(st.Description) {
			buf = append(buf, `,"description":`...)
			buf = appendJSONString(buf, st.Description)
		}
	default:
		buf = append(buf, `"unset"`...)
	}
	buf = append(buf, `},"attributes":`...)
	buf = appendAttributes(buf, s.Attributes())
	if events := s.Events(); len(events) > 0 {
		buf = append(buf, `,"events":[`...)
		for i, ev := range events {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"name":`...)
			buf = appendJSONString(buf, ev.Name)
			buf = append(buf, `,"time":"`...)
			buf = appendUTCTime(buf, ev.Time)
			buf = append(buf, '"')
			if len(ev.Attributes) > 0 {
				buf = append(buf, `,"attributes":`...)
				buf = appendAttributes(buf, ev.Attributes)
			}
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	return append(buf, '}')
}

// appendUTCTime writes t in UTC exactly as time.RFC3339Nano formats it, at a fraction of
// AppendFormat's cost (three times per span: start, end and each event).
func appendUTCTime(buf []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(buf, time.RFC3339Nano)
	}
	hour, minute, sec := t.Clock()
	buf = appendDigits(buf, year, 4)
	buf = append(buf, '-')
	buf = appendDigits(buf, int(month), 2)
	buf = append(buf, '-')
	buf = appendDigits(buf, day, 2)
	buf = append(buf, 'T')
	buf = appendDigits(buf, hour, 2)
	buf = append(buf, ':')
	buf = appendDigits(buf, minute, 2)
	buf = append(buf, ':')
	buf = appendDigits(buf, sec, 2)
	if ns := t.Nanosecond(); ns != 0 {
		buf = append(buf, '.')
		n := len(buf)
		buf = appendDigits(buf, ns, 9)
		for buf[len(buf)-1] == '0' && len(buf) > n {
			buf = buf[:len(buf)-1] // RFC3339Nano drops trailing zeros
		}
	}
	return append(buf, 'Z')
}

// appendDigits writes v (non-negative) zero-padded to width digits.
func appendDigits(buf []byte, v, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(buf, d[:width]...)
}

func appendAttributes(buf []byte, kvs []attribute.KeyValue) []byte {
	buf = append(buf, '{')
	first := true
	for _, kv := range kvs {
		if !SpanAttributeAllowed(string(kv.Key)) {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		// Allowlisted keys are plain ASCII names: nothing to escape.
		buf = append(buf, '"')
		buf = append(buf, kv.Key...)
		buf = append(buf, '"', ':')
		buf = appendValue(buf, kv.Value)
	}
	return append(buf, '}')
}

func appendValue(buf []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return strconv.AppendBool(buf, v.AsBool())
	case attribute.INT64:
		return strconv.AppendInt(buf, v.AsInt64(), 10)
	case attribute.FLOAT64:
		return appendFloat(buf, v.AsFloat64())
	case attribute.STRING:
		return appendJSONString(buf, v.AsString())
	case attribute.BOOLSLICE:
		return appendSlice(buf, v.AsBoolSlice(), strconv.AppendBool)
	case attribute.INT64SLICE:
		return appendSlice(buf, v.AsInt64Slice(), func(b []byte, i int64) []byte { return strconv.AppendInt(b, i, 10) })
	case attribute.FLOAT64SLICE:
		return appendSlice(buf, v.AsFloat64Slice(), appendFloat)
	case attribute.STRINGSLICE:
		return appendSlice(buf, v.AsStringSlice(), appendJSONString)
	}
	return append(buf, "null"...)
}

func appendSlice[T any](buf []byte, xs []T, f func([]byte, T) []byte) []byte {
	buf = append(buf, '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = f(buf, x)
	}
	return append(buf, ']')
}

// appendFloat writes a JSON number; NaN and infinities, which JSON cannot hold, become null.
func appendFloat(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(buf, "null"...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, 64)
}

// appendJSONString writes s as a JSON string as slog's JSON handler does: quotes, backslashes
// and control characters escaped (\n \r \t short, the rest \u00XX), invalid UTF-8 replaced by
// U+FFFD, and U+2028 and U+2029 escaped.
func appendJSONString(buf []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	buf = append(buf, '"')
	// Most values (ids, routes, model names) need no escaping: copy them in one go.
	plain := 0
	for plain < len(s) {
		if c := s[plain]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		plain++
	}
	buf = append(buf, s[:plain]...)
	for i := plain; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, "\\ufffd"...)
		} else if r == '\u2028' || r == '\u2029' {
			// Valid JSON either way, but JavaScript line terminators: escaped, as slog and
			// encoding/json escape them.
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
