package observability

import (
	"io"
	"sync"
	"time"
)

// flushDelay is how long lines may wait to be written: short enough that a person or a test
// reading the log sees a request's line at once, long enough to batch a busy service's lines.
const flushDelay = 5 * time.Millisecond

// maxPendingLog bounds what the LogWriter holds before writers wait: a log that cannot keep up
// slows requests down rather than growing without bound or dropping lines.
const maxPendingLog = 1 << 20

// LogWriter takes the log's write syscalls off the request path. slog's handlers hold a lock
// while they write each record, so with the log going to stderr and a file every request
// queued behind two syscalls; here a Write only copies the line, and one goroutine writes
// whatever has gathered with one call per batch.
//
// The goroutine lets lines gather for flushDelay after the first one before it writes. Woken
// per line instead, it cost each request a goroutine hand-off — and, with an idle processor, a
// futex call to wake a thread — which was more than formatting the line.
//
// It writes to one sink, w, and may echo lines to a second: with --log-file, the file is w and
// stderr the echo, which gets every line but the access lines (AccessLines) unless asked for
// those too. Each batch is one write to each.
type LogWriter struct {
	w    io.Writer
	echo io.Writer // nil: no second sink
	// echoAccess sends the access lines to echo too.
	echoAccess bool
	mu         sync.Mutex
	room       *sync.Cond // signalled when pending has been taken
	pending    []byte
	spare      []byte
	// echoPending are the lines of pending that go to echo as well, in the same order.
	echoPending []byte
	echoSpare   []byte
	closed      bool
	closeOnce   sync.Once
	wake        chan struct{}
	full        chan struct{} // half of maxPendingLog gathered: write now, not at the end of the window
	done        chan struct{}
	stopped     chan struct{}
}

// NewLogWriter starts the writer goroutine, writing every line to w; Close flushes and stops it.
func NewLogWriter(w io.Writer) *LogWriter { return newLogWriter(w, nil, false) }

// newLogWriter writes every line to w and, when echo is not nil, the lines other than access
// lines to echo too — and those as well with echoAccess.
func newLogWriter(w, echo io.Writer, echoAccess bool) *LogWriter {
	l := &LogWriter{w: w, echo: echo, echoAccess: echoAccess, wake: make(chan struct{}, 1), full: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	l.room = sync.NewCond(&l.mu)
	go l.loop()
	return l
}

// Write queues p, which slog hands over as exactly one record.
func (l *LogWriter) Write(p []byte) (int, error) { return l.write(p, false) }

// AccessLines is the writer of the access lines: the same queue, but echoed only when asked.
func (l *LogWriter) AccessLines() io.Writer { return accessLines{l} }

type accessLines struct{ l *LogWriter }

func (a accessLines) Write(p []byte) (int, error) { return a.l.write(p, true) }

func (l *LogWriter) write(p []byte, access bool) (int, error) {
	echo := l.echo != nil && (!access || l.echoAccess)
	l.mu.Lock()
	for len(l.pending) >= maxPendingLog && !l.closed {
		l.room.Wait()
	}
	if l.closed {
		// After Close: straight through, still one line at a time, so nothing is lost.
		defer l.mu.Unlock()
		if echo {
			_, _ = l.echo.Write(p)
		}
		return l.w.Write(p)
	}
	first := len(l.pending) == 0
	l.pending = append(l.pending, p...)
	if echo {
		l.echoPending = append(l.echoPending, p...)
	}
	full := len(l.pending) >= maxPendingLog/2
	l.mu.Unlock()
	// Only the line that found the batch empty wakes the goroutine: the lines after it go out
	// with it, and a channel operation per line cost every request under load.
	if first {
		select {
		case l.wake <- struct{}{}:
		default: // already woken; this line goes with the batch
		}
	}
	if full {
		select {
		case l.full <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func (l *LogWriter) loop() {
	defer close(l.stopped)
	gather := time.NewTimer(flushDelay)
	gather.Stop()
	for {
		select {
		case <-l.wake:
		case <-l.done:
			l.flush()
			return
		}
		gather.Reset(flushDelay)
		select {
		case <-gather.C:
			l.flush()
		case <-l.full:
			gather.Stop()
			l.flush()
		case <-l.done:
			l.flush()
			return
		}
	}
}

func (l *LogWriter) flush() {
	l.mu.Lock()
	batch, echo := l.pending, l.echoPending
	l.pending, l.echoPending = l.spare[:0], l.echoSpare[:0]
	l.room.Broadcast()
	l.mu.Unlock()
	if len(batch) > 0 {
		_, _ = l.w.Write(batch) // a log that cannot be written has nowhere to report it
	}
	if len(echo) > 0 {
		_, _ = l.echo.Write(echo)
	}
	l.mu.Lock()
	l.spare, l.echoSpare = batch[:0], echo[:0]
	l.mu.Unlock()
}

// Close writes what is pending and stops the goroutine; later writes go straight through.
func (l *LogWriter) Close() error {
	l.closeOnce.Do(func() {
		// The goroutine writes its last batch first; lines written meanwhile still queue, and
		// go out here, under the lock, before any line written after Close — so the two never
		// write at once, and the log keeps its order.
		close(l.done)
		<-l.stopped
		l.mu.Lock()
		defer l.mu.Unlock()
		l.closed = true
		if len(l.pending) > 0 {
			_, _ = l.w.Write(l.pending)
			l.pending = nil
		}
		if len(l.echoPending) > 0 {
			_, _ = l.echo.Write(l.echoPending)
			l.echoPending = nil
		}
		l.room.Broadcast()
	})
	return nil
}
