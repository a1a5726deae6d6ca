package server

import (
	"net/http"

	"mockgateway/internal/fixtures"
	"mockgateway/internal/protocol"
	"mockgateway/observability"
)

// deepAnswer reports whether making the answer goes deep: a JSON instance of a schema, tool
// calls, a fixture's scripted reply. Made on the handler's goroutine, such an answer grew a
// stream's stack to its next size before the stream parked on it, and each open stream held
// the larger stack (TestParkedStreamStack; the sizes are in docs/performance.md).
func deepAnswer(req *protocol.Request, hit *fixtures.Hit) bool {
	return hit != nil || len(req.Tools) > 0 || (req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text")
}

// onOwnStack runs f on a goroutine of its own and waits for it: its stack, however deep f goes,
// is freed when it ends, while the caller's — a stream's, which parks for the stream's life —
// stays as small as the caller's own frames need. A panic in f is raised again in the caller,
// with where it happened (observability.Locate), where the handler's recovery answers it. It
// costs a goroutine start, which only a stream with a deep answer pays.
func onOwnStack(f func()) {
	var p any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			// Where it happened is known only on this goroutine; net/http's signal to drop the
			// connection passes on as it is.
			if p = recover(); p != nil && p != http.ErrAbortHandler {
				p = observability.Locate(p)
			}
		}()
		f()
	}()
	<-done
	if p != nil {
		panic(p)
	}
}
