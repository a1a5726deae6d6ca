package observability

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/jsonenc"
)

// writeAccessLog writes one line per request when it ends — for a stream, when the stream ends —
// from the Record alone, so it can only ever contain bounded values.
//
// With the JSON format (the default) the line is encoded by accessOut.line, byte for byte what the
// slog handler writes for the same record (a test holds it to that): going through slog cost a
// request more than its two spans' attributes — two records, an allowlist pass and a generic
// encoder, json.Marshal for the one float included. The text format goes through slog. Either
// way the record goes straight to a handler: slog.Logger would capture the caller's program
// counter, a stack walk per request that the line never shows.
//
// The logger's filter (--access-log) decides first, before anything is formatted: a line left
// out costs a comparison and, for a success, one atomic count (TestDroppedAccessLineAllocations).
func writeAccessLog(ctx context.Context, h slog.Handler, rec *Record, now time.Time) {
	level := slog.LevelInfo
	if rec.Status >= 500 {
		level = slog.LevelError
	}
	if !h.Enabled(ctx, level) {
		return
	}
	if lh, ok := h.(*logHandler); ok {
		if !lh.filter.keep(rec) {
			return
		}
		if lh.access != nil {
			lh.access.write(ctx, now, level, rec)
			return
		}
	}
	_ = h.Handle(ctx, accessRecord(now, level, rec))
}

// accessOut writes the access lines to the access queue of the LogWriter behind the root
// handler: JSON lines encoded here, with what each line reuses (a line buffer, and its time's
// formatted second: logClock); text lines through a text handler of their own.
type accessOut struct {
	w     io.Writer
	text  slog.Handler // the text format's; nil for JSON
	lines sync.Pool    // *[]byte
	clock logClock
}

func (a *accessOut) write(ctx context.Context, now time.Time, level slog.Level, rec *Record) {
	if a.text != nil {
		_ = a.text.Handle(ctx, accessRecord(now, level, rec))
		return
	}
	buf, _ := a.lines.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	*buf = a.line((*buf)[:0], ctx, now, level, rec)
	_, _ = a.w.Write(*buf)
	a.lines.Put(buf)
}

// accessRecord is the access line as an slog record, for the text format.
func accessRecord(now time.Time, level slog.Level, rec *Record) slog.Record {
	out := slog.NewRecord(now, level, "request", 0)
	out.AddAttrs(
		slog.String("request_id", rec.RequestID),
		slog.String("method", rec.Method),
		slog.String("route", rec.Route),
		slog.Int("status", rec.Status),
		slog.String("error_code", rec.ErrorLabel()),
		slog.Float64("duration_ms", durationMS(now, rec)),
	)
	if rec.Scope != "" {
		out.AddAttrs(slog.String("scope", rec.Scope))
	}
	if rec.Chat {
		out.AddAttrs(
			slog.String("model", rec.Model),
			slog.Bool("stream", rec.Stream),
			slog.Int("prompt_tokens", rec.PromptTokens),
			slog.Int("completion_tokens", rec.CompletionTokens),
		)
		if rec.ReasoningTokens > 0 {
			out.AddAttrs(slog.Int("reasoning_tokens", rec.ReasoningTokens))
		}
		if rec.Stream {
			out.AddAttrs(slog.String("stream_outcome", rec.StreamOutcome), slog.Int("chunks", rec.Chunks))
		}
		if rec.Fixture != "" {
			out.AddAttrs(slog.String("fixture", rec.Fixture))
		}
		if rec.Fault != "" {
			out.AddAttrs(slog.String("fault", rec.Fault))
		}
		if rec.QueueWait > 0 {
			out.AddAttrs(slog.Int64("queue_ms", rec.QueueWait.Milliseconds()))
		}
		if rec.GatewayAttempts > 0 {
			out.AddAttrs(slog.Int("attempts", rec.GatewayAttempts), slog.String("served_by", rec.ServedBy))
			if rec.FallbackFrom != "" {
				out.AddAttrs(slog.String("fallback_from", rec.FallbackFrom))
			}
		}
	}
	return out
}

func durationMS(now time.Time, rec *Record) float64 {
	return float64(now.Sub(rec.Start).Microseconds()) / 1000
}

// line appends the JSON access line accessRecord stands for, as slog's JSON handler behind
// logHandler writes it: time, level, msg, the trace ids, then the fields in order. Every key is
// a constant on the log-field allowlist; values go through jsonenc's slog appenders.
func (a *accessOut) line(buf []byte, ctx context.Context, now time.Time, level slog.Level, rec *Record) []byte {
	buf = append(buf, `{"time":"`...)
	buf = a.clock.appendTime(buf, now)
	buf = append(buf, `","level":"`...)
	buf = append(buf, level.String()...)
	buf = append(buf, `","msg":"request"`...)
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		tid, sid := sc.TraceID(), sc.SpanID()
		buf = append(buf, `,"trace_id":"`...)
		buf = hex.AppendEncode(buf, tid[:])
		buf = append(buf, `","span_id":"`...)
		buf = hex.AppendEncode(buf, sid[:])
		buf = append(buf, '"')
	}
	str := func(key, v string) {
		buf = append(buf, `,"`...)
		buf = append(buf, key...)
		buf = append(buf, `":`...)
		buf = jsonenc.AppendSlogString(buf, v)
	}
	num := func(key string, n int) {
		buf = append(buf, `,"`...)
		buf = append(buf, key...)
		buf = append(buf, `":`...)
		buf = strconv.AppendInt(buf, int64(n), 10)
	}
	str("request_id", rec.RequestID)
	str("method", rec.Method)
	str("route", rec.Route)
	num("status", rec.Status)
	str("error_code", rec.ErrorLabel())
	buf = append(buf, `,"duration_ms":`...)
	buf = jsonenc.AppendSlogFloat(buf, durationMS(now, rec))
	if rec.Scope != "" {
		str("scope", rec.Scope)
	}
	if rec.Chat {
		str("model", rec.Model)
		buf = append(buf, `,"stream":`...)
		buf = strconv.AppendBool(buf, rec.Stream)
		num("prompt_tokens", rec.PromptTokens)
		num("completion_tokens", rec.CompletionTokens)
		if rec.ReasoningTokens > 0 {
			num("reasoning_tokens", rec.ReasoningTokens)
		}
		if rec.Stream {
			str("stream_outcome", rec.StreamOutcome)
			num("chunks", rec.Chunks)
		}
		if rec.Fixture != "" {
			str("fixture", rec.Fixture)
		}
		if rec.Fault != "" {
			str("fault", rec.Fault)
		}
		if rec.QueueWait > 0 {
			num("queue_ms", int(rec.QueueWait.Milliseconds()))
		}
		if rec.GatewayAttempts > 0 {
			num("attempts", rec.GatewayAttempts)
			str("served_by", rec.ServedBy)
			if rec.FallbackFrom != "" {
				str("fallback_from", rec.FallbackFrom)
			}
		}
	}
	return append(buf, "}\n"...)
}
