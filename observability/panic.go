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
