package observability

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// logPanic logs a recovered panic by its type and location only: the value may hold request
// data.
func logPanic(r *http.Request, logger *slog.Logger, p any) {
	location := ""
	if lp, ok := p.(LocatedPanic); ok {
		p, location = lp.Value, lp.Location
	} else {
		location = panicLocation()
	}
	logger.LogAttrs(r.Context(), slog.LevelError, "panic recovered",
		slog.String("request_id", RecordFrom(r.Context()).RequestID),
		slog.String("panic_type", fmt.Sprintf("%T", p)),
		slog.String("panic_location", location),
	)
}

// LocatedPanic is a panic raised again on another goroutine than the one it began on: the stack
// it is raised on no longer shows where it happened, so it carries that, for logPanic.
type LocatedPanic struct {
	Value    any
	Location string
}

// Locate wraps p, just recovered by a deferred function on the goroutine that panicked, with
// where it happened. Called anywhere else, the location is "unknown".
//
//go:noinline
func Locate(p any) LocatedPanic { return LocatedPanic{Value: p, Location: panicLocation()} }

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
