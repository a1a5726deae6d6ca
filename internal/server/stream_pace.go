package server

import (
	"time"

	"mockgateway/observability"
)

// What a stream does around each frame besides encoding and writing it: the pause's checks (a
// client gone, the drain, the stream's deadline), the clock, the write deadline. A stream does
// it for every frame, so each is done at most once a frame, and only where it must be: no
// select over two channels, one clock reading shared by the pause and the write after it, and
// a write deadline kept across writes rather than set before each (BenchmarkStreamPace holds
// the cost a frame, BenchmarkStreamLoopback's profile its share under load; figures in
// docs/performance.md).

// pacer is a stream's per-frame state: the channels its pause looks at, found once, and its
// clock. pause is the one place a stream waits.
type pacer struct {
	clientGone     <-chan struct{} // the request's ctx.Done(): the client went away
	drainAborted   <-chan struct{} // the drain's Aborted(): shutdown ends open streams
	streamDeadline time.Time       // --stream-timeout from the request's start; clock reads from it too
	lastReading    time.Time       // a reading the last pause took, for the write after it; zero once used
	timer          *time.Timer     // the pauses' timer, made by the first real delay and reset by the next
}

// clock is the time now, read from the deadline on the monotonic clock (observability.ClockAfter:
// one clock reading where time.Now takes two). Deadlines compare on the monotonic clock either
// way.
func (p *pacer) clock() time.Time { return observability.ClockAfter(p.streamDeadline) }

// writeStart is the reading for the write about to start: the one the pause before it took, if
// it has not been used (only the frame's making, never a wait, lies between), or a fresh one.
func (p *pacer) writeStart() time.Time {
	now := p.lastReading
	p.lastReading = time.Time{}
	if now.IsZero() {
		now = p.clock()
	}
	return now
}

// pause waits a simulated delay, returning early with the outcome that interrupted it. With no
// delay it still looks once, so a gone client stops generation at the next chunk. Looking is
// two non-blocking receives, each a lock-free check of one channel (a select over both locks
// both every frame), and one clock reading for the stream's deadline, which the write after the
// pause uses too (writeStart).
func (p *pacer) pause(delay time.Duration) error {
	select {
	case <-p.clientGone:
		return errStreamEnded{outcome: observability.OutcomeClientDisconnected}
	default:
	}
	select {
	case <-p.drainAborted:
		return errStreamEnded{outcome: observability.OutcomeAborted}
	default:
	}
	now := p.clock()
	if !now.Before(p.streamDeadline) {
		return errStreamEnded{outcome: observability.OutcomeTimedOut}
	}
	p.lastReading = now
	if delay <= 0 {
		return nil
	}
	return p.sleep(min(delay, p.streamDeadline.Sub(now)))
}

// sleep is pause's wait. One timer serves all of a stream's pauses: Reset instead of a new
// timer (and its allocations) per token. Stop and Reset leave no stale tick in its channel (Go
// 1.23's timers, which this module's go version selects).
func (p *pacer) sleep(delay time.Duration) error {
	if p.timer == nil {
		p.timer = time.NewTimer(delay)
	} else {
		p.timer.Reset(delay)
	}
	select {
	case <-p.timer.C:
		now := p.clock()
		if !now.Before(p.streamDeadline) {
			return errStreamEnded{outcome: observability.OutcomeTimedOut}
		}
		p.lastReading = now
		return nil
	case <-p.clientGone:
		p.timer.Stop()
		return errStreamEnded{outcome: observability.OutcomeClientDisconnected}
	case <-p.drainAborted:
		p.timer.Stop()
		return errStreamEnded{outcome: observability.OutcomeAborted}
	}
}

// writeDeadline bounds a stream's writes: every write must go out within --write-timeout (a
// client that stops reading is cut, its slot and buffers freed), and none past until. The
// deadline is reckoned from the moment each write starts, so the pauses between writes (latency,
// stalls) do not count against it.
//
// A write starting at now has the exact bound D = min(now + timeout, until). Setting a deadline
// is a runtime timer update (more than the rest of this file's work for a frame), so
// the one on the connection is kept when it is not after D and at most (D − now)/rearmFraction
// before it — a sixteenth of this write's own allowance — and set to D otherwise: each write is
// cut at some moment in [D − (D − now)/16, D] — a client that stops reading, after at least 15/16
// of --write-timeout and at most all of it — and no write goes on past until
// (docs/configuration.md, "Slow clients"). Measured against the write's allowance rather than the
// timeout, a deadline already passed (the stream's, before the end's grace) is never kept. A
// stream's frames go out close together, so it sets the deadline once, and again every
// timeout/16 when they are paced further apart (TestWriteDeadlineBound).
type writeDeadline struct {
	conn    interface{ SetWriteDeadline(time.Time) error }
	timeout time.Duration // --write-timeout; 0: until alone
	until   time.Time     // no write may go on past it (zero: no limit): the stream's deadline, then endGrace
	onConn  time.Time     // the deadline on the connection, once armed
	armed   bool
}

// rearmFraction: a write may be cut up to 1/rearmFraction of its allowance before its exact bound.
const rearmFraction = 16

// arm bounds the write that starts at now (a reading taken at most the frame's making before).
func (d *writeDeadline) arm(now time.Time) {
	want := d.until
	if d.timeout > 0 {
		if t := now.Add(d.timeout); want.IsZero() || t.Before(want) {
			want = t
		}
	}
	if d.armed && !d.onConn.After(want) && want.Sub(d.onConn) <= want.Sub(now)/rearmFraction {
		return
	}
	d.onConn, d.armed = want, true
	_ = d.conn.SetWriteDeadline(want)
}
