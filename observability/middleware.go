package observability

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader carries the request id on every response.
const RequestIDHeader = "X-Request-Id"

// ValidRequestID reports whether id may be kept as a request id: the contract's
// ^[A-Za-z0-9._:-]{1,128}$. Anything else is replaced, never echoed, because it would otherwise
// flow into every signal. (A byte loop: it runs on every request.)
func ValidRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// ChainConfig is what the middleware chain needs; run builds it and passes it in.
type ChainConfig struct {
	Logger     *slog.Logger
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
	Metrics    *Metrics // nil turns metrics off (benchmarks of the bare service)
	// WriteInternalError writes the contract's 500 internal_error response. It is the server's
	// one error writer, passed in so that panics are answered in the same shape as any error.
	WriteInternalError func(http.ResponseWriter, *http.Request)
	// WriteTimeout bounds the writing of every response from its first byte (0: no bound). A
	// stream extends it on each write itself. It starts at the first write rather than with the
	// request, so that simulated latency is not counted as writing.
	WriteTimeout time.Duration
	// Draining reports whether the service is shutting down (nil: never). Responses begun while
	// it is carry Connection: close, so that clients leave their keep-alive connections for the
	// drain to close, instead of sending on one just as it is closed.
	Draining func() bool
}

// Chain wraps the whole router, so that every response — 404, 405, 413 and recovered panics
// included — is traced, counted and logged. What it does, in order:
//
//	recovery → request id → tracing → metrics → access log → handler recovery → router
//
// The outer recovery guards the chain itself. Handler panics are recovered innermost, where they
// can still become a 500 that tracing, metrics and the access log see like any response. The
// response writer it hands on starts each response's write deadline and, while the service
// drains, adds Connection: close (statusWriter).
//
// The layers are one handler rather than six nested ones. A stream parks its goroutine for as
// long as it lasts, with every frame below it on the stack: six closures, each wrapped in
// http.HandlerFunc and each holding its after-work's locals (an slog.Record, the span's
// attributes), kept a parked stream's stack above 8 KB, so every open stream cost a 16 KB stack.
// Here the after-work runs in its own calls, off the parked stack, and the request is copied
// once for its context instead of at each layer.
func Chain(next http.Handler, c ChainConfig) http.Handler {
	return &observer{next: next, c: c, log: c.Logger.Handler()}
}

type observer struct {
	next http.Handler
	c    ChainConfig
	log  slog.Handler // the record goes straight to the handler (see writeAccessLog)
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer o.recoverChain(w, r)
	rec := &Record{Start: time.Now(), Method: normalizeMethod(r.Method), Route: RouteUnmatched}
	if id := r.Header.Get(RequestIDHeader); ValidRequestID(id) {
		rec.RequestID = id
	} else {
		rec.RequestID = newRequestID()
	}
	// Set before anything else can write the response.
	w.Header().Set(RequestIDHeader, rec.RequestID)

	ctx := o.c.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := o.c.Tracer.Start(ctx, rec.Method, trace.WithSpanKind(trace.SpanKindServer))
	// Deferred, so that even a panic in the chain itself leaves neither the gauge up nor the
	// span open; in the normal course it ends the span just after finish has described it.
	defer span.End()
	r = r.WithContext(withRecord(ctx, rec))
	if m := o.c.Metrics; m != nil {
		m.inFlight.Inc()
		defer m.inFlight.Dec()
	}
	abort := o.serve(&statusWriter{ResponseWriter: w, rec: rec, c: &o.c}, r)
	o.finish(r, rec, span)
	if abort != nil {
		panic(abort) // net/http's own signal, passed on once the request is accounted for
	}
}

// serve runs the router, turning a handler panic into the contract's 500 internal_error while
// tracing, metrics and the access log can still see it. The panic value is not logged: it may
// hold request data; its type and location are enough to find the bug. http.ErrAbortHandler is
// net/http's signal to drop the connection quietly: it is returned, to be raised again.
func (o *observer) serve(w http.ResponseWriter, r *http.Request) (abort any) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			abort = p
			return
		}
		logPanic(r, o.c.Logger, p)
		rec := RecordFrom(r.Context())
		rec.SetError("internal_error")
		if rec.Status == 0 { // nothing sent yet: the 500 can still be answered
			o.c.WriteInternalError(w, r)
		}
	}()
	o.next.ServeHTTP(w, r)
	return nil
}

// recoverChain is the last line: a panic in the chain itself. It cannot rely on the Record, so
// it makes sure the response still carries a request id.
func (o *observer) recoverChain(w http.ResponseWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	logPanic(r, o.c.Logger, p)
	if w.Header().Get(RequestIDHeader) == "" {
		w.Header().Set(RequestIDHeader, newRequestID())
	}
	o.c.WriteInternalError(w, r)
}

// finish accounts for the ended request from its Record: the access log line, the metrics, then
// the server span's attributes and its end.
//
//go:noinline
func (o *observer) finish(r *http.Request, rec *Record, span trace.Span) {
	ctx := r.Context()
	end := time.Now() // one clock reading for the line, the durations and the exemplar gates
	writeAccessLog(ctx, o.log, rec, end)
	if m := o.c.Metrics; m != nil {
		m.observeRequest(ctx, rec, end)
	}
	describeServerSpan(span, r, rec)
}

// newRequestID makes "req_" + 32 hex digits. Request ids need to be unique, not secret, so the
// runtime's fast per-thread generator is enough.
func newRequestID() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := rand.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	var out [36]byte
	copy(out[:], "req_")
	hex.Encode(out[4:], b[:])
	return string(out[:])
}

// statusWriter notes the status in the Record, starts the write deadline and adds the drain's
// Connection: close as the response begins, and notes a response the client did not take. It
// keeps Flush and Unwrap so that streams and http.ResponseController work through it.
type statusWriter struct {
	http.ResponseWriter
	rec *Record
	c   *ChainConfig
}

// StatusClientClosed is the status logged and counted for a response (not a stream: a stream
// reports its outcome) that the client did not take — it went away, or stopped reading until
// the write timeout cut it (error_code request_timeout). It is nginx's "client closed request":
// the status line sent, if any, reached no one who read it.
const StatusClientClosed = 499

// begin runs once, as the response starts.
func (w *statusWriter) begin(code int) {
	w.rec.Status = code
	if w.c.Draining != nil && w.c.Draining() {
		w.ResponseWriter.Header().Set("Connection", "close")
	}
	if w.c.WriteTimeout > 0 {
		if d, ok := w.ResponseWriter.(interface{ SetWriteDeadline(time.Time) error }); ok {
			_ = d.SetWriteDeadline(time.Now().Add(w.c.WriteTimeout))
		}
	}
}

// failed notes a write the client did not take.
func (w *statusWriter) failed(err error) {
	if w.rec.Stream {
		return // the stream writer records the outcome itself
	}
	w.rec.Status = StatusClientClosed
	if w.rec.ErrorCode == "" && errors.Is(err, os.ErrDeadlineExceeded) {
		w.rec.SetError("request_timeout")
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.rec.Status == 0 {
		w.begin(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.rec.Status == 0 {
		w.begin(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	if err != nil {
		w.failed(err)
	}
	return n, err
}

func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController calls: a stream must learn that its flush failed
// (a stalled or gone client), which Flush alone would swallow.
func (w *statusWriter) FlushError() error {
	if w.rec.Status == 0 {
		w.begin(http.StatusOK)
	}
	var err error
	switch f := w.ResponseWriter.(type) {
	case interface{ FlushError() error }: // net/http's own writer: no controller per chunk
		err = f.FlushError()
	default:
		err = http.NewResponseController(w.ResponseWriter).Flush()
	}
	if err != nil {
		w.failed(err)
	}
	return err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

const maxUserAgent = 128

// describeServerSpan gives the SERVER span the chain started its name and attributes. The chain makes it rather
// than an instrumentation library because those record the raw path, query and host a client
// sent; this one records only the allowlisted, bounded attributes of docs/telemetry.md.
func describeServerSpan(span trace.Span, r *http.Request, rec *Record) {
	if !span.IsRecording() {
		return
	}
	var buf [12]attribute.KeyValue
	attrs := append(buf[:0],
		attribute.String("http.request.method", rec.Method),
		attribute.Int("http.response.status_code", rec.Status),
		attribute.String("mockgateway.request_id", rec.RequestID),
		attribute.String("url.scheme", scheme(r)),
		attribute.String("network.protocol.version", protocolVersion(r)),
	)
	if rec.Route != RouteUnmatched {
		span.SetName(rec.Method + " " + rec.Route)
		attrs = append(attrs, attribute.String("http.route", rec.Route), attribute.String("url.path", rec.Route))
	}
	if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		attrs = append(attrs, attribute.String("client.address", host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("client.port", p))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, attribute.String("user_agent.original", Sanitize(ua, maxUserAgent)))
	}
	if rec.ErrorCode != "" {
		attrs = append(attrs, attribute.String("error.type", rec.ErrorCode))
	}
	span.SetAttributes(attrs...)
	if rec.Status >= 500 {
		// The description is the normalized code: a Go error string could carry anything.
		span.SetStatus(codes.Error, rec.ErrorLabel())
	}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func protocolVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 2:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	}
	return "1.1"
}

// observeRequest counts the request and observes its duration, with the trace id as exemplar.
func (m *Metrics) observeRequest(ctx context.Context, rec *Record, end time.Time) {
	now := end.UnixNano()
	addWithExemplar(ctx, now, &m.gates.requests, m.requestsBy.get(requestLabels{rec.Route, rec.Method, rec.Status, rec.ErrorLabel()}), 1)
	observeWithExemplar(ctx, now, &m.gates.duration, m.durationBy.get(durationLabels{rec.Route, rec.Method, rec.Status}), end.Sub(rec.Start).Seconds())
	if rec.Chat {
		m.observeChat(ctx, rec, now)
	}
}

// writeAccessLog writes one line per request when it ends — for a stream, when the stream ends —
// from the Record alone, so it can only ever contain bounded values.
//
// With the JSON format (the default) the line is encoded by accessLine, byte for byte what the
// slog handler writes for the same record (a test holds it to that): going through slog cost a
// request more than its two spans' attributes — two records, an allowlist pass and a generic
// encoder, json.Marshal for the one float included. The text format goes through slog. Either
// way the record goes straight to a handler: slog.Logger would capture the caller's program
// counter, a stack walk per request that the line never shows.
func writeAccessLog(ctx context.Context, h slog.Handler, rec *Record, now time.Time) {
	level := slog.LevelInfo
	if rec.Status >= 500 {
		level = slog.LevelError
	}
	if !h.Enabled(ctx, level) {
		return
	}
	if lh, ok := h.(*logHandler); ok && lh.jsonOut != nil {
		buf := accessLinePool.Get().(*[]byte)
		*buf = accessLine((*buf)[:0], ctx, now, level, rec)
		_, _ = lh.jsonOut.Write(*buf)
		accessLinePool.Put(buf)
		return
	}
	_ = h.Handle(ctx, accessRecord(now, level, rec))
}

var accessLinePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

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
	if rec.Chat {
		out.AddAttrs(
			slog.String("model", rec.Model),
			slog.Bool("stream", rec.Stream),
			slog.Int("prompt_tokens", rec.PromptTokens),
			slog.Int("completion_tokens", rec.CompletionTokens),
		)
		if rec.Stream {
			out.AddAttrs(slog.String("stream_outcome", rec.StreamOutcome), slog.Int("chunks", rec.Chunks))
		}
		if rec.Fault != "" {
			out.AddAttrs(slog.String("fault", rec.Fault))
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

// accessLine appends the JSON access line accessRecord stands for, as slog's JSON handler
// behind logHandler writes it: time, level, msg, the trace ids, then the fields in order. Every
// key is a constant on the log-field allowlist.
func accessLine(buf []byte, ctx context.Context, now time.Time, level slog.Level, rec *Record) []byte {
	buf = append(buf, `{"time":"`...)
	buf = now.AppendFormat(buf, time.RFC3339Nano)
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
		buf = appendJSONString(buf, v)
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
	buf = appendJSONFloat(buf, durationMS(now, rec))
	if rec.Chat {
		str("model", rec.Model)
		buf = append(buf, `,"stream":`...)
		buf = strconv.AppendBool(buf, rec.Stream)
		num("prompt_tokens", rec.PromptTokens)
		num("completion_tokens", rec.CompletionTokens)
		if rec.Stream {
			str("stream_outcome", rec.StreamOutcome)
			num("chunks", rec.Chunks)
		}
		if rec.Fault != "" {
			str("fault", rec.Fault)
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

// appendJSONFloat writes f as encoding/json does (which is what slog's JSON handler calls):
// 'f' notation, or 'e' without a leading zero in the exponent for very small or large values.
func appendJSONFloat(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendJSONString(buf, "!ERROR:json: unsupported value: "+strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

func logPanic(r *http.Request, logger *slog.Logger, p any) {
	logger.LogAttrs(r.Context(), slog.LevelError, "panic recovered",
		slog.String("request_id", RecordFrom(r.Context()).RequestID),
		slog.String("panic_type", fmt.Sprintf("%T", p)),
		slog.String("panic_location", panicLocation()),
	)
}

// panicLocation names the function, file and line that panicked: the first frame below the
// runtime's panic machinery.
func panicLocation() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	sawPanic := false
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			sawPanic = sawPanic || f.Function == "runtime.gopanic" || strings.HasPrefix(f.Function, "runtime.panic")
		} else if sawPanic {
			return f.Function + " (" + filepath.Base(f.File) + ":" + strconv.Itoa(f.Line) + ")"
		}
		if !more {
			return "unknown"
		}
	}
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
