package observability

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// bufferTracer is the tracer of a service whose spans go only to the embedded buffer (no OTLP
// exporter configured: the default). The SDK's span would be kept as the buffer's record all
// the same, but only after it has been built for any processor: its attributes copied and
// de-duplicated through a map, an end-of-span snapshot, a slice per event — most of what
// telemetry cost per request (BenchmarkChatJSON, on against off). A bufferSpan keeps what the
// record needs and writes the record when it ends. Sampling, span ids, parents and what the
// buffer keeps are the SDK's: the same sampler decides, the same encoder writes, the same
// allowlist applies (TestBufferTracerMatchesTheSDK).
type bufferTracer struct {
	embedded.Tracer
	buffer  *SpanBuffer
	sampler sdktrace.Sampler
	// spanKey is otel's context key for the current span (learnSpanKey): a span of this tracer
	// is the context that carries it. nil: otel's own context (trace.ContextWithSpan) carries it.
	spanKey any
}

// newBufferTracer returns the tracer of spans kept by buffer, sampled by sampler.
func newBufferTracer(buffer *SpanBuffer, sampler sdktrace.Sampler) *bufferTracer {
	return &bufferTracer{buffer: buffer, sampler: sampler, spanKey: learnSpanKey()}
}

// Start starts a span, in one allocation with the context it returns and room for the
// attributes a chat span ends with (spanWithAttributes).
func (t *bufferTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background() // as the SDK's tracer takes it
	}
	cfg := trace.NewSpanStartConfig(opts...)
	parentSpan := trace.SpanFromContext(ctx)
	parent := parentSpan.SpanContext()
	sctx := ctx // what the sampler reads the parent from
	if cfg.NewRoot() {
		parent = trace.SpanContext{}
		sctx = trace.ContextWithSpanContext(ctx, parent)
	}
	sc, res := t.decide(sctx, parent, name, cfg.SpanKind(), cfg.Attributes())
	var s *bufferSpan
	if sc.IsSampled() { // what the buffer does not keep is not recorded, and needs no room
		w := new(spanWithAttributes)
		s = &w.bufferSpan
		s.attrs = w.space[:0]
	} else {
		s = new(bufferSpan)
	}
	s.tracer, s.sc, s.ctx = t, sc, ctx
	if sc.IsSampled() {
		start := cfg.Timestamp()
		if start.IsZero() {
			start = startAfter(parentSpan)
		}
		s.record(parent, name, cfg.SpanKind(), start, cfg.Attributes(), res.Attributes)
	}
	if t.spanKey == nil {
		return trace.ContextWithSpan(ctx, s), s
	}
	return s, s
}

// startAfter is a span's start time: read from the start of its parent, when the parent is a
// span of this tracer (its start is set before it is shared, and never changes), as a child's
// end is read from its start (ClockAfter).
func startAfter(parent trace.Span) time.Time {
	if p, ok := parent.(*bufferSpan); ok && !p.start.IsZero() {
		return ClockAfter(p.start)
	}
	return time.Now()
}

// begin starts a span in s, which the caller made: the chain's server span, part of its
// request's one allocation (request), which carries it. start is the request's start, so that
// the span and the access log share one clock reading.
func (t *bufferTracer) begin(s *bufferSpan, ctx context.Context, name string, kind trace.SpanKind, start time.Time) {
	parent := trace.SpanContextFromContext(ctx)
	sc, res := t.decide(ctx, parent, name, kind, nil)
	s.tracer, s.sc, s.ctx = t, sc, ctx
	if sc.IsSampled() {
		s.record(parent, name, kind, start, nil, res.Attributes)
	}
}

// decide gives a span its identity and the sampler's decision, as the SDK does: the parent's
// trace or a new one, a new span id, the parent (read from sctx) and the sampler's flags and
// trace state.
func (t *bufferTracer) decide(sctx context.Context, parent trace.SpanContext, name string, kind trace.SpanKind, attrs []attribute.KeyValue) (trace.SpanContext, sdktrace.SamplingResult) {
	tid := parent.TraceID()
	if !tid.IsValid() {
		binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(tid[8:], rand.Uint64())
	}
	var sid trace.SpanID
	binary.LittleEndian.PutUint64(sid[:], rand.Uint64()|1) // never the invalid zero id
	res := t.sampler.ShouldSample(sdktrace.SamplingParameters{
		ParentContext: sctx, TraceID: tid, Name: name, Kind: kind, Attributes: attrs,
	})
	var flags trace.TraceFlags
	if res.Decision == sdktrace.RecordAndSample {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: res.Tracestate,
	}), res
}

// record makes s a recording span: one the buffer will keep when it ends.
func (s *bufferSpan) record(parent trace.SpanContext, name string, kind trace.SpanKind, start time.Time, attrs, sampled []attribute.KeyValue) {
	s.recording.Store(true)
	s.parentID, s.name, s.kind, s.start = parent.SpanID(), name, trace.ValidateSpanKind(kind), start
	s.attrs = appendValid(s.attrs, attrs)
	s.attrs = appendValid(s.attrs, sampled)
}

// bufferSpan is a span that becomes a buffer record when it ends. It is also the context that
// carries it (Value): Start's context and span are one allocation, not a span and the
// context.WithValue of trace.ContextWithSpan.
type bufferSpan struct {
	embedded.Span
	tracer *bufferTracer
	sc     trace.SpanContext
	ctx    context.Context // the context the span was started in

	mu         sync.Mutex
	recording  atomic.Bool // sampled, and not ended: changed under mu, read without it by IsRecording
	parentID   trace.SpanID
	name       string
	kind       trace.SpanKind
	start      time.Time
	status     codes.Code
	statusDesc string
	// A started span's are in its spanWithAttributes' room. The chain's server span has none
	// unless something else sets one: the chain gives it its own as it ends (endWith).
	attrs  []attribute.KeyValue // in the order set; a later value of a key wins
	events []sdktrace.Event
}

// spanAttributeRoom is the room a started span has for attributes in its own allocation: what
// a chat span is given — its request's attributes as it starts (four, and up to four options),
// its answer's as it ends (five, and an error) — fits without growing, and a span with its room
// is a kilobyte. A stream's outcome and a gateway's decision may take it over, as it ends.
const spanAttributeRoom = 12

// spanWithAttributes is a sampled span as Start makes it, with its attributes' room: one
// allocation where the span, its context and its attribute slice, grown once as its answer's
// attributes came, were four (BenchmarkSpans). A parked stream's chat span holds all its room
// from the start, where it held eight attributes' worth: 250 bytes more an open stream.
type spanWithAttributes struct {
	bufferSpan
	space [spanAttributeRoom]attribute.KeyValue
}

// Deadline, Done, Err and Value make the span the context that carries it: otel's key for the
// current span (learnSpanKey) finds the span, every other key the context it was started in.
func (s *bufferSpan) Deadline() (time.Time, bool) { return s.ctx.Deadline() }
func (s *bufferSpan) Done() <-chan struct{}       { return s.ctx.Done() }
func (s *bufferSpan) Err() error                  { return s.ctx.Err() }

func (s *bufferSpan) Value(key any) any {
	if key == s.tracer.spanKey && key != nil {
		return s
	}
	return s.ctx.Value(key)
}

func (s *bufferSpan) SpanContext() trace.SpanContext { return s.sc }

// IsRecording takes no lock: the service asks it before every batch of attributes.
func (s *bufferSpan) IsRecording() bool { return s.recording.Load() }

func (s *bufferSpan) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording.Load() {
		s.name = name
	}
}

// SetStatus follows the SDK: Ok wins over everything, Error over Unset, and a description is
// kept with Error only.
func (s *bufferSpan) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording.Load() {
		s.setStatus(code, description)
	}
}

// setStatus sets the status of a recording span; s.mu is held.
func (s *bufferSpan) setStatus(code codes.Code, description string) {
	if code < s.status { // codes: Unset < Error < Ok
		return
	}
	s.status, s.statusDesc = code, ""
	if code == codes.Error {
		s.statusDesc = description
	}
}

func (s *bufferSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording.Load() {
		s.attrs = appendValid(s.attrs, kv)
	}
}

// appendValid appends the valid attributes of kv (what the SDK keeps: those with a key).
func appendValid(dst, kv []attribute.KeyValue) []attribute.KeyValue {
	dst = slices.Grow(dst, len(kv))
	for _, a := range kv {
		if a.Valid() {
			dst = append(dst, a)
		}
	}
	return dst
}

func (s *bufferSpan) AddEvent(name string, opts ...trace.EventOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recording.Load() {
		return
	}
	cfg := trace.NewEventConfig(opts...)
	at := cfg.Timestamp()
	if at.IsZero() {
		at = ClockAfter(s.start)
	}
	if s.events == nil {
		s.events = make([]sdktrace.Event, 0, 2) // what a parked stream has: started, first chunk
	}
	s.events = append(s.events, sdktrace.Event{Name: name, Time: at, Attributes: cfg.Attributes()})
}

// RecordError is not used by the service: an error's message is free text, which no signal
// carries. It is recorded as the SDK records it, an "exception" event, whose attributes the
// buffer's allowlist then drops.
func (s *bufferSpan) RecordError(err error, opts ...trace.EventOption) {
	if err != nil {
		s.AddEvent("exception", opts...)
	}
}

func (s *bufferSpan) AddLink(trace.Link) {} // the buffer keeps no links

func (s *bufferSpan) TracerProvider() trace.TracerProvider { return bufferProvider{tracer: s.tracer} }

// End writes the span's record into the buffer.
func (s *bufferSpan) End(opts ...trace.SpanEndOption) {
	s.mu.Lock()
	if !s.recording.Load() {
		s.mu.Unlock()
		return
	}
	cfg := trace.NewSpanEndConfig(opts...)
	end := cfg.Timestamp()
	if end.IsZero() {
		end = ClockAfter(s.start)
	}
	s.endLocked(dedupeLastWins(s.attrs), end)
}

// endWith is SetName (unless name is empty), SetAttributes(kv...), SetStatus (unless code is
// Unset) and End(trace.WithTimestamp(end)) under one lock: how the chain ends its server span
// (endServerSpan). kv is the caller's, filtered in place, and holds each key once
// (describeServerSpan's do: TestServerSpanAttributes): a span that holds no attributes yet —
// the server span — keeps its record of them without copying them anywhere or looking for
// repeated keys.
func (s *bufferSpan) endWith(name string, kv []attribute.KeyValue, code codes.Code, description string, end time.Time) {
	s.mu.Lock()
	if !s.recording.Load() {
		s.mu.Unlock()
		return
	}
	if name != "" {
		s.name = name
	}
	if code != codes.Unset {
		s.setStatus(code, description)
	}
	var attrs []attribute.KeyValue
	if len(s.attrs) == 0 {
		attrs = appendValid(kv[:0], kv) // in place: each element is read before it is written
	} else {
		s.attrs = appendValid(s.attrs, kv)
		attrs = dedupeLastWins(s.attrs)
	}
	s.endLocked(attrs, end)
}

// endLocked writes the span's record, with attrs (each key once) as its attributes, and
// releases s.mu.
func (s *bufferSpan) endLocked(attrs []attribute.KeyValue, end time.Time) {
	s.recording.Store(false)
	v := spanView{
		traceID: s.sc.TraceID(), spanID: s.sc.SpanID(), parent: s.parentID, start: s.start, end: end,
		kind: s.kind, status: s.status, statusDesc: s.statusDesc, name: s.name,
		attrs: attrs, events: s.events,
	}
	s.mu.Unlock()
	s.tracer.buffer.keep(v)
}

// dedupeLastWins keeps each key once, at its first place, with its last value — what the SDK
// makes of repeated keys. Spans carry a few dozen attributes at most: a quadratic pass in
// place beats a map. An attribute is written only when it moves or is replaced: written onto
// itself, each cost a copy of 64 bytes, with write barriers while the collector runs.
func dedupeLastWins(kv []attribute.KeyValue) []attribute.KeyValue {
	n := 0 // kv[:n] is done
	for j := range kv {
		a := &kv[j]
		dup := false
		for i := range n {
			if kv[i].Key == a.Key {
				kv[i], dup = *a, true
				break
			}
		}
		if !dup {
			if n != j {
				kv[n] = *a
			}
			n++
		}
	}
	return kv[:n]
}

// bufferProvider is what a bufferSpan answers TracerProvider with.
type bufferProvider struct {
	embedded.TracerProvider
	tracer *bufferTracer
}

func (p bufferProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return p.tracer }
