package observability

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Stream outcomes: the terminal state of every stream, exactly one per stream.
const (
	OutcomeCompleted          = "completed"
	OutcomeClientDisconnected = "client_disconnected"
	OutcomeAborted            = "aborted"
	OutcomeTimedOut           = "timed_out"
)

// StreamTelemetry follows one SSE stream from start to its single terminal outcome and feeds
// every signal from the same facts: span events on the chat span, the stream metrics, and the
// Record that the access log line is written from when the stream ends. (The SSE writing
// itself is the server's; this is only its telemetry.)
//
// It counts chunks but never sees their content: the stream writer reports only that a chunk
// went out.
type StreamTelemetry struct {
	ctx     context.Context
	metrics *Metrics
	span    trace.Span
	rec     *Record
	model   string // the model label
	start   time.Time
	chunks  int
	ended   bool
}

// StartStreamTelemetry records stream.started. start is the request's start time, so time to
// first chunk and duration include decoding and simulated latency, as a client measures them.
func StartStreamTelemetry(ctx context.Context, m *Metrics, span trace.Span, model string, start time.Time) *StreamTelemetry {
	s := &StreamTelemetry{ctx: ctx, metrics: m, span: span, rec: RecordFrom(ctx), model: m.ModelLabel(model), start: start}
	m.streamStarted(s.model)
	span.AddEvent("stream.started")
	return s
}

// Chunk records that one chunk was written and flushed.
func (s *StreamTelemetry) Chunk() {
	s.chunks++
	if s.chunks != 1 {
		return
	}
	now := ClockAfter(s.start)
	s.rec.FirstChunk = now.Sub(s.start)
	s.span.AddEvent("stream.first_chunk")
	s.metrics.streamFirstChunk(s.ctx, s.model, s.start, now)
}

// Chunks is the number of chunks written so far.
func (s *StreamTelemetry) Chunks() int { return s.chunks }

// End records the terminal outcome. Only the first call counts, so every exit path of the
// stream writer may call it without double counting; it reports whether this call did.
func (s *StreamTelemetry) End(outcome string) bool {
	if s.ended {
		return false
	}
	s.ended = true
	s.span.AddEvent("stream."+outcome, trace.WithAttributes(
		attribute.Int("mockgateway.stream.chunks", s.chunks),
	))
	s.span.SetAttributes(
		attribute.String("mockgateway.stream.outcome", outcome),
		attribute.Int("mockgateway.stream.chunks", s.chunks),
	)
	s.rec.StreamOutcome = outcome
	s.rec.Chunks = s.chunks
	s.metrics.streamEnded(s.ctx, s.model, outcome, s.chunks, s.start, ClockAfter(s.start))
	return true
}
