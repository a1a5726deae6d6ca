package observability

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// NewLogger returns a slog.Logger writing to w in "json" or "text" format at the given level
// ("debug", "info", "warn", "error"; case-insensitive) with trace_id/span_id added from the
// context.
//
// Every record passes the log-field allowlist (LogFieldAllowed): a top-level attribute whose key
// is not on it is dropped, so a stray slog call cannot log request content. Groups are judged by
// their key alone: a group under an allowlisted key (say "config") is written whole, any other
// group is dropped with everything in it — including what is logged through a logger derived
// with WithGroup of a key that is not allowlisted. trace_id and span_id are always top-level,
// however the logger was derived.
//
// Every access line is kept; OpenLog makes the service's logger, whose --access-log may keep
// fewer.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	return newLogger(w, level, format, nil)
}

func newLogger(w io.Writer, level, format string, filter *accessFilter) (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "debug":
		lvl = slog.LevelDebug
	case "info":
		lvl = slog.LevelInfo
	case "warn":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, fmt.Errorf("invalid --log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	var access *accessOut
	lw, _ := w.(*LogWriter)
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "json":
		h = slog.NewJSONHandler(w, opts)
		if lw != nil {
			// Safe to write to beside the handler: a LogWriter takes each Write whole, one at
			// a time (before and after Close). Any other writer is left to the handler, which
			// serializes writes.
			access = &accessOut{w: lw.AccessLines()}
		}
	case "text":
		h = slog.NewTextHandler(w, opts)
		if lw != nil {
			// The access lines through a handler of their own, on the LogWriter's access
			// queue: they need not go wherever the other lines go (LogWriter's echo).
			access = &accessOut{text: &logHandler{base: slog.NewTextHandler(lw.AccessLines(), opts)}}
		}
	default:
		return nil, fmt.Errorf("invalid --log-format %q: want json or text", format)
	}
	return slog.New(&logHandler{base: h, access: access, filter: filter}), nil
}

// logHandler filters attributes through the allowlist and adds the trace ids.
//
// It never passes WithGroup down to the wrapped handler: once a slog handler has opened a
// group, everything added afterwards lands inside it, and trace_id/span_id must stay top-level
// for log-to-trace correlation. Instead it remembers the open groups (with the attributes added
// inside them) and nests them itself when a record is handled. Top-level WithAttrs, the common
// case, is passed down so the wrapped handler pre-formats those attributes once.
type logHandler struct {
	base slog.Handler // the wrapped handler with top-level attributes applied; never grouped
	// access is the access log's own output, writing to the access queue of the LogWriter the
	// root handler writes to (see accessOut); nil for other writers and derived handlers.
	access *accessOut
	// filter decides which access lines are kept (--access-log); nil keeps all. Only the root
	// handler has one: the chain writes its access lines to the logger's own handler.
	filter *accessFilter
	groups []logGroup // open groups, outermost first
	// drop is set once a group with a non-allowlisted key is open: everything logged below it
	// would be inside that group, so it is all dropped.
	drop bool
}

type logGroup struct {
	name  string
	attrs []slog.Attr
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.base.Enabled(ctx, l)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if h.drop || len(attrs) == 0 {
		return h
	}
	if len(h.groups) == 0 {
		kept := make([]slog.Attr, 0, len(attrs))
		for _, a := range attrs {
			kept = appendAllowed(kept, a)
		}
		if len(kept) == 0 {
			return h
		}
		return &logHandler{base: h.base.WithAttrs(kept)}
	}
	// Inside an allowlisted group nothing is filtered; copy so sibling loggers derived from h
	// do not share (and overwrite) one backing array.
	groups := slices.Clone(h.groups)
	last := &groups[len(groups)-1]
	last.attrs = append(slices.Clip(last.attrs), attrs...)
	return &logHandler{base: h.base, groups: groups}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" || h.drop {
		// slog inlines a group without a name, so it changes nothing.
		return h
	}
	if len(h.groups) == 0 && !LogFieldAllowed(name) {
		return &logHandler{base: h.base, drop: true}
	}
	groups := append(slices.Clip(h.groups), logGroup{name: name})
	return &logHandler{base: h.base, groups: groups}
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	// A new record rather than r itself: handlers must not modify the record they are given
	// (it may be shared), and slog.Record stores its first few attributes inline, so this
	// usually costs no allocation.
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	sc := trace.SpanContextFromContext(ctx)
	if sc.IsValid() {
		traceID, spanID := hexIDs(sc)
		out.AddAttrs(slog.String("trace_id", traceID), slog.String("span_id", spanID))
	}
	switch {
	case h.drop:
	case len(h.groups) == 0:
		// Collected first and added in one call: adding one by one past the record's inline
		// capacity would regrow its overflow slice several times per record.
		var stack [16]slog.Attr
		kept := stack[:0]
		r.Attrs(func(a slog.Attr) bool {
			switch {
			case a.Key == "":
				// An inline group: its members are top-level attributes and are judged one by
				// one.
				kept = appendAllowed(kept, a)
			case sc.IsValid() && (a.Key == "trace_id" || a.Key == "span_id"):
				// Already taken from the context; writing it twice would give the JSON
				// output duplicate keys.
			case LogFieldAllowed(a.Key):
				kept = append(kept, a)
			}
			return true
		})
		out.AddAttrs(kept...)
	default:
		out.AddAttrs(h.nest(r))
	}
	return h.base.Handle(ctx, out)
}

// hexIDs encodes both ids with a single allocation; TraceID.String and SpanID.String cost two
// each, and this runs for every log record inside a request.
func hexIDs(sc trace.SpanContext) (traceID, spanID string) {
	tid, sid := sc.TraceID(), sc.SpanID()
	var buf [2*len(tid) + 2*len(sid)]byte
	hex.Encode(buf[:2*len(tid)], tid[:])
	hex.Encode(buf[2*len(tid):], sid[:])
	s := string(buf[:])
	return s[:2*len(tid)], s[2*len(tid):]
}

// nest builds the open groups around the record's attributes, innermost first. The built-in
// handlers omit groups that end up empty.
func (h *logHandler) nest(r slog.Record) slog.Attr {
	inner := h.groups[len(h.groups)-1]
	attrs := make([]slog.Attr, 0, len(inner.attrs)+r.NumAttrs())
	attrs = append(attrs, inner.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	g := slog.Attr{Key: inner.name, Value: slog.GroupValue(attrs...)}
	for i := len(h.groups) - 2; i >= 0; i-- {
		outer := h.groups[i]
		g = slog.Attr{Key: outer.name, Value: slog.GroupValue(append(slices.Clip(outer.attrs), g)...)}
	}
	return g
}

// appendAllowed appends a if its key is allowlisted. An attribute with an empty key holding a
// group is inlined by slog, so its members are top-level and are checked individually.
func appendAllowed(dst []slog.Attr, a slog.Attr) []slog.Attr {
	if a.Key == "" {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			for _, m := range v.Group() {
				dst = appendAllowed(dst, m)
			}
		}
		return dst
	}
	if LogFieldAllowed(a.Key) {
		dst = append(dst, a)
	}
	return dst
}
