package observability

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync"
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
}

func (t *bufferTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	parent := trace.SpanContextFromContext(ctx)
	if cfg.NewRoot() {
		parent = trace.SpanContext{}
	}
	tid := parent.TraceID()
	if !tid.IsValid() {
		binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(tid[8:], rand.Uint64())
	}
	var sid trace.SpanID
	binary.LittleEndian.PutUint64(sid[:], rand.Uint64()|1) // never the invalid zero id
	sctx := ctx                                            // what the sampler reads the parent from
	if cfg.NewRoot() {
		sctx = trace.ContextWithSpanContext(ctx, parent)
	}
	res := t.sampler.ShouldSample(sdktrace.SamplingParameters{
		ParentContext: sctx, TraceID: tid, Name: name, Kind: cfg.SpanKind(), Attributes: cfg.Attributes(),
	})
	var flags trace.TraceFlags
	if res.Decision == sdktrace.RecordAndSample {
		flags = trace.FlagsSampled
	}
	s := &bufferSpan{tracer: t, sc: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: res.Tracestate,
	})}
	if flags.IsSampled() { // what the buffer does not keep is not recorded
		s.recording = true
		s.parent, s.name, s.kind = parent.SpanID(), name, trace.ValidateSpanKind(cfg.SpanKind())
		s.start = cfg.Timestamp()
		if s.start.IsZero() {
			s.start = time.Now()
		}
		s.attrs = appendValid(s.attrs, cfg.Attributes())
		s.attrs = appendValid(s.attrs, res.Attributes)
	}
	return trace.ContextWithSpan(ctx, s), s
}

// bufferSpan is a span that becomes a buffer record when it ends.
type bufferSpan struct {
	embedded.Span
	tracer *bufferTracer
	sc     trace.SpanContext

	mu         sync.Mutex
	recording  bool // sampled, and not ended
	parent     trace.SpanID
	name       string
	kind       trace.SpanKind
	start      time.Time
	status     codes.Code
	statusDesc string
	// Made when first set, not with the span: an open stream keeps its two spans for as long
	// as it lasts, and the server span's attributes are all set once it ends.
	attrs  []attribute.KeyValue // in the order set; a later value of a key wins
	events []sdktrace.Event
}

func (s *bufferSpan) SpanContext() trace.SpanContext { return s.sc }

func (s *bufferSpan) IsRecording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recording
}

func (s *bufferSpan) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording {
		s.name = name
	}
}

// SetStatus follows the SDK: Ok wins over everything, Error over Unset, and a description is
// kept with Error only.
func (s *bufferSpan) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recording || code < s.status { // codes: Unset < Error < Ok
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
	if s.recording {
		s.attrs = appendValid(s.attrs, kv)
	}
}

// appendValid appends the valid attributes of kv. The first ones make room for eight, what a
// chat span is given when it starts, so that a parked stream's span holds no more than that
// and grows once, when its answer's attributes come.
func appendValid(dst, kv []attribute.KeyValue) []attribute.KeyValue {
	if dst == nil && len(kv) > 0 {
		dst = make([]attribute.KeyValue, 0, max(8, len(kv)))
	}
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
	if !s.recording {
		return
	}
	cfg := trace.NewEventConfig(opts...)
	at := cfg.Timestamp()
	if at.IsZero() {
		at = time.Now()
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
	if !s.recording {
		s.mu.Unlock()
		return
	}
	s.recording = false
	endCfg := trace.NewSpanEndConfig(opts...)
	end := endCfg.Timestamp()
	if end.IsZero() {
		end = time.Now()
	}
	v := spanView{
		traceID: s.sc.TraceID(), spanID: s.sc.SpanID(), parent: s.parent, start: s.start, end: end,
		kind: s.kind, status: s.status, statusDesc: s.statusDesc, name: s.name,
		attrs: dedupeLastWins(s.attrs), events: s.events,
	}
	s.mu.Unlock()
	s.tracer.buffer.keep(v)
}

// dedupeLastWins keeps each key once, at its first place, with its last value — what the SDK
// makes of repeated keys. Spans carry a few dozen attributes at most: a quadratic pass in
// place beats a map.
func dedupeLastWins(kv []attribute.KeyValue) []attribute.KeyValue {
	out := kv[:0]
	for _, a := range kv {
		dup := false
		for i := range out {
			if out[i].Key == a.Key {
				out[i], dup = a, true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}

// bufferProvider is what a bufferSpan answers TracerProvider with.
type bufferProvider struct {
	embedded.TracerProvider
	tracer *bufferTracer
}

func (p bufferProvider) Tracer(string, ...trace.TracerOption) trace.Tracer { return p.tracer }
