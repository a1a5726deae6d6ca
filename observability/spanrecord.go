package observability

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The span buffer keeps each ended span as one byte slice in this compact binary form: written
// on every span of every request, read only when /debug/traces is asked. It is a plain copy of
// the allowlisted parts — nothing refers back into the SDK, and bytes hold no pointers, so the
// garbage collector never scans the thousands of kept spans. Writing it is mostly copying; the
// JSON the inspector serves is made from it at read time (decodeSpanRecord). What it pays:
// BenchmarkSpanBufferSpan, and the telemetry overhead of BenchmarkChatJSON in make bench, which
// the records more than halved (docs/performance.md); FuzzDecodeSpanRecord holds the decoder to
// what the encoder wrote.
//
// Layout, little-endian; a string is a uvarint length and its bytes:
//
//	trace id [16] · span id [8] · parent span id [8] (zero: none) · start, end: unix ns [8] each
//	kind [1] · status code [1] · status description (a bare code, else empty) · name
//	attributes · events: uvarint count, then each: name · time [8] · attributes
//
// attributes: uvarint count, then each: key · value type [1] · value — bool [1], int64 and
// float64 [8], string, or a slice: uvarint count and the elements. Only allowlisted keys are
// written; a value of a type the inspector does not show is written as type 0 (null).

const (
	valNull byte = iota
	valBool
	valInt64
	valFloat64
	valString
	valBoolSlice
	valInt64Slice
	valFloat64Slice
	valStringSlice
)

// spanView is what a record is made of: read from an SDK span (viewOf), or handed over by a
// bufferSpan as it ends.
type spanView struct {
	traceID          trace.TraceID
	spanID, parent   trace.SpanID
	start, end       time.Time
	kind             trace.SpanKind
	status           codes.Code
	statusDesc, name string
	attrs            []attribute.KeyValue
	events           []sdktrace.Event
}

func viewOf(s sdktrace.ReadOnlySpan) spanView {
	sc, st := s.SpanContext(), s.Status()
	return spanView{
		traceID: sc.TraceID(), spanID: sc.SpanID(), parent: s.Parent().SpanID(),
		start: s.StartTime(), end: s.EndTime(), kind: s.SpanKind(),
		status: st.Code, statusDesc: st.Description, name: s.Name(),
		attrs: s.Attributes(), events: s.Events(),
	}
}

// appendSpanRecord appends the span's record: its allowlisted attributes only, and a status
// description only when it is a bare code — the same rules as the redacting exporter.
func appendSpanRecord(buf []byte, s spanView) []byte {
	buf = append(buf, s.traceID[:]...)
	buf = append(buf, s.spanID[:]...)
	buf = append(buf, s.parent[:]...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.start.UnixNano()))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.end.UnixNano()))
	buf = append(buf, byte(s.kind))
	buf = append(buf, byte(s.status))
	if s.status == codes.Error && statusDescriptionAllowed(s.statusDesc) {
		buf = appendRecordString(buf, s.statusDesc)
	} else {
		buf = appendRecordString(buf, "")
	}
	buf = appendRecordString(buf, s.name)
	buf = appendRecordAttributes(buf, s.attrs)
	buf = binary.AppendUvarint(buf, uint64(len(s.events)))
	for _, ev := range s.events {
		buf = appendRecordString(buf, ev.Name)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(ev.Time.UnixNano()))
		buf = appendRecordAttributes(buf, ev.Attributes)
	}
	return buf
}

func appendRecordString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// appendRecordAttributes writes the allowlisted attributes of kvs. Their count comes first,
// but is known only once every key has been judged: below 128 attributes it is a one-byte
// uvarint, so a byte is kept for it and filled in after them, and each key is judged once.
func appendRecordAttributes(buf []byte, kvs []attribute.KeyValue) []byte {
	if len(kvs) < 0x80 {
		at, n := len(buf), 0
		buf = append(buf, 0)
		for i := range kvs {
			if kv := &kvs[i]; SpanAttributeAllowed(string(kv.Key)) {
				buf = appendRecordString(buf, string(kv.Key))
				buf = appendRecordValue(buf, &kv.Value)
				n++
			}
		}
		buf[at] = byte(n)
		return buf
	}
	n := 0
	for _, kv := range kvs {
		if SpanAttributeAllowed(string(kv.Key)) {
			n++
		}
	}
	buf = binary.AppendUvarint(buf, uint64(n))
	for i := range kvs {
		if kv := &kvs[i]; SpanAttributeAllowed(string(kv.Key)) {
			buf = appendRecordString(buf, string(kv.Key))
			buf = appendRecordValue(buf, &kv.Value)
		}
	}
	return buf
}

// appendRecordValue writes a value. It is given a pointer, and leaves slices to
// appendRecordSlice: a Value passed by value was copied at each of its methods, and the slice
// cases' temporaries made a frame of half a kilobyte for every scalar (BenchmarkSpanRecord).
func appendRecordValue(buf []byte, v *attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		return appendRecordString(append(buf, valString), v.AsString())
	case attribute.INT64:
		return binary.LittleEndian.AppendUint64(append(buf, valInt64), uint64(v.AsInt64()))
	case attribute.BOOL:
		return append(buf, valBool, boolByte(v.AsBool()))
	case attribute.FLOAT64:
		return binary.LittleEndian.AppendUint64(append(buf, valFloat64), math.Float64bits(v.AsFloat64()))
	}
	return appendRecordSlice(buf, v)
}

// appendRecordSlice writes a slice value, or null for a type the inspector does not show.
func appendRecordSlice(buf []byte, v *attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOLSLICE:
		xs := v.AsBoolSlice()
		buf = binary.AppendUvarint(append(buf, valBoolSlice), uint64(len(xs)))
		for _, x := range xs {
			buf = append(buf, boolByte(x))
		}
		return buf
	case attribute.INT64SLICE:
		xs := v.AsInt64Slice()
		buf = binary.AppendUvarint(append(buf, valInt64Slice), uint64(len(xs)))
		for _, x := range xs {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(x))
		}
		return buf
	case attribute.FLOAT64SLICE:
		xs := v.AsFloat64Slice()
		buf = binary.AppendUvarint(append(buf, valFloat64Slice), uint64(len(xs)))
		for _, x := range xs {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
		return buf
	case attribute.STRINGSLICE:
		xs := v.AsStringSlice()
		buf = binary.AppendUvarint(append(buf, valStringSlice), uint64(len(xs)))
		for _, x := range xs {
			buf = appendRecordString(buf, x)
		}
		return buf
	}
	return append(buf, valNull)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

var errBadRecord = errors.New("span buffer: malformed record")

// recordReader reads a record; the first malformed read sets err and every later read is zero.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errBadRecord
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *recordReader) byte() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *recordReader) uint64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *recordReader) count() int {
	if r.err != nil {
		return 0
	}
	n, size := binary.Uvarint(r.b)
	if size <= 0 || n > uint64(len(r.b)) { // every element takes at least one byte
		r.err = errBadRecord
		return 0
	}
	r.b = r.b[size:]
	return int(n)
}

// string returns the string with invalid UTF-8 replaced byte by byte with U+FFFD, which is what
// the JSON the inspector serves would make of it anyway.
func (r *recordReader) string() string {
	p := r.take(r.count())
	if utf8.Valid(p) {
		return string(p)
	}
	out := make([]byte, 0, len(p)+8)
	for len(p) > 0 {
		c, size := utf8.DecodeRune(p)
		if c == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, p[:size]...)
		}
		p = p[size:]
	}
	return string(out)
}

func (r *recordReader) attributes() map[string]any {
	n := r.count()
	m := make(map[string]any, n)
	for range n {
		k := r.string()
		m[k] = r.value()
	}
	return m
}

// value returns an attribute value as the inspector's JSON shows it: a NaN or infinite float,
// which JSON cannot hold, is null.
func (r *recordReader) value() any {
	switch r.byte() {
	case valBool:
		return r.byte() == 1
	case valInt64:
		return int64(r.uint64())
	case valFloat64:
		return jsonFloat(math.Float64frombits(r.uint64()))
	case valString:
		return r.string()
	case valBoolSlice:
		return r.slice(func() any { return r.byte() == 1 })
	case valInt64Slice:
		return r.slice(func() any { return int64(r.uint64()) })
	case valFloat64Slice:
		return r.slice(func() any { return jsonFloat(math.Float64frombits(r.uint64())) })
	case valStringSlice:
		return r.slice(func() any { return r.string() })
	case valNull:
		return nil
	}
	r.err = errBadRecord // a type this code never writes: the record is damaged
	return nil
}

func (r *recordReader) slice(elem func() any) []any {
	xs := make([]any, r.count())
	for i := range xs {
		xs[i] = elem()
	}
	return xs
}

func jsonFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// decodeSpanRecord turns a stored record back into the SpanRecord /debug/traces serves.
func decodeSpanRecord(raw []byte) (SpanRecord, error) {
	r := &recordReader{b: raw}
	var tid trace.TraceID
	var sid, pid trace.SpanID
	copy(tid[:], r.take(len(tid)))
	copy(sid[:], r.take(len(sid)))
	copy(pid[:], r.take(len(pid)))
	start, end := int64(r.uint64()), int64(r.uint64())
	rec := SpanRecord{
		TraceID:    hex.EncodeToString(tid[:]),
		SpanID:     hex.EncodeToString(sid[:]),
		StartTime:  time.Unix(0, start).UTC(),
		EndTime:    time.Unix(0, end).UTC(),
		DurationMS: float64(end-start) / float64(time.Millisecond),
		Kind:       trace.SpanKind(r.byte()).String(),
	}
	if pid.IsValid() {
		rec.ParentSpanID = hex.EncodeToString(pid[:])
	}
	switch codes.Code(r.byte()) {
	case codes.Ok:
		rec.Status.Code = "ok"
	case codes.Error:
		rec.Status.Code = "error"
	default:
		rec.Status.Code = "unset"
	}
	rec.Status.Description = r.string()
	rec.Name = r.string()
	rec.Attributes = r.attributes()
	for range r.count() {
		ev := SpanEvent{Name: r.string(), Time: time.Unix(0, int64(r.uint64())).UTC()}
		if attrs := r.attributes(); len(attrs) > 0 {
			ev.Attributes = attrs
		}
		rec.Events = append(rec.Events, ev)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errBadRecord
	}
	return rec, r.err
}
