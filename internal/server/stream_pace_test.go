package server

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"mockgateway/observability"
)

// deadlineLog records the deadlines set on a connection.
type deadlineLog struct{ set []time.Time }

func (l *deadlineLog) SetWriteDeadline(t time.Time) error {
	l.set = append(l.set, t)
	return nil
}

// TestWriteDeadlineBound holds writeDeadline to its documented guarantee (docs/configuration.md,
// "Slow clients"): a write starting at now is cut at some moment in [D − timeout/16, D], where D
// = min(now + timeout, until), so never past until and never more than --write-timeout after
// it starts; and writes close together set the deadline once.
func TestWriteDeadlineBound(t *testing.T) {
	t0 := time.Now()
	check := func(t *testing.T, d *writeDeadline, l *deadlineLog, now time.Time) {
		t.Helper()
		d.arm(now)
		if len(l.set) == 0 {
			t.Fatal("no deadline set before the first write")
		}
		got, want := l.set[len(l.set)-1], d.until
		if d.timeout > 0 && (want.IsZero() || now.Add(d.timeout).Before(want)) {
			want = now.Add(d.timeout)
		}
		// Cut no earlier than a sixteenth of this write's allowance before its bound: never a
		// deadline that has already passed, unless the bound itself has (a write after until).
		if earliest := want.Add(-max(0, want.Sub(now)) / 16); got.After(want) || got.Before(earliest) {
			t.Fatalf("write at +%v (timeout %v, until +%v): deadline +%v, want within [+%v, +%v]", now.Sub(t0), d.timeout,
				d.until.Sub(t0), got.Sub(t0), earliest.Sub(t0), want.Sub(t0))
		}
	}

	t.Run("frames close together", func(t *testing.T) {
		l := &deadlineLog{}
		d := &writeDeadline{conn: l, timeout: 30 * time.Second, until: t0.Add(5 * time.Minute)}
		for i := range 1000 { // a 1,000-token stream, a frame every 100 µs
			check(t, d, l, t0.Add(time.Duration(i)*100*time.Microsecond))
		}
		if len(l.set) != 1 {
			t.Errorf("%d deadlines set for 1,000 writes within 0.1 s, want 1", len(l.set))
		}
	})
	t.Run("paced frames", func(t *testing.T) {
		l := &deadlineLog{}
		d := &writeDeadline{conn: l, timeout: 32 * time.Second, until: t0.Add(5 * time.Minute)}
		for i := range 601 { // a frame every 100 ms for a minute
			check(t, d, l, t0.Add(time.Duration(i)*100*time.Millisecond))
		}
		// Set again by the first write more than timeout/16 after the last: every 2.1 s.
		if len(l.set) != 29 {
			t.Errorf("%d deadlines set for a minute of writes, want 29 (one every 2.1 s)", len(l.set))
		}
	})
	t.Run("until comes first, then the end's grace", func(t *testing.T) {
		l := &deadlineLog{}
		d := &writeDeadline{conn: l, timeout: 30 * time.Second, until: t0.Add(10 * time.Second)}
		check(t, d, l, t0)
		check(t, d, l, t0.Add(9*time.Second))
		d.until = t0.Add(9*time.Second + endGrace) // end: an error frame after the deadline
		check(t, d, l, t0.Add(9*time.Second))
		if len(l.set) != 2 {
			t.Errorf("deadlines %v, want until, then the end's grace", l.set)
		}
	})
	t.Run("a long write timeout, then the end's grace after the stream's deadline", func(t *testing.T) {
		// With --write-timeout 120 s, the end's 5 s grace is within timeout/16 of the stream's
		// deadline, which has passed: the error frame must get the grace, not the passed deadline.
		l := &deadlineLog{}
		d := &writeDeadline{conn: l, timeout: 120 * time.Second, until: t0.Add(time.Minute)}
		check(t, d, l, t0)
		d.until = t0.Add(time.Minute + time.Millisecond + endGrace)
		check(t, d, l, t0.Add(time.Minute+time.Millisecond))
		if got := l.set[len(l.set)-1]; !got.After(t0.Add(time.Minute + time.Millisecond)) {
			t.Errorf("the end's frame got a deadline %v after it started: already passed", got.Sub(t0.Add(time.Minute+time.Millisecond)))
		}
	})
	t.Run("no write timeout", func(t *testing.T) {
		l := &deadlineLog{}
		d := &writeDeadline{conn: l, until: t0.Add(time.Minute)}
		for i := range 10 {
			check(t, d, l, t0.Add(time.Duration(i)*time.Second))
		}
		if len(l.set) != 1 {
			t.Errorf("%d deadlines set, want 1: the same until each time", len(l.set))
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 200 {
			l := &deadlineLog{}
			d := &writeDeadline{conn: l, timeout: time.Duration(r.IntN(40)) * time.Second, until: t0.Add(time.Duration(r.IntN(300)) * time.Second)}
			now := t0
			for range 200 {
				now = now.Add(time.Duration(r.Int64N(int64(3 * time.Second))))
				if r.IntN(50) == 0 {
					d.until = now.Add(endGrace)
				}
				check(t, d, l, now)
			}
		}
	})
}

// TestPause: the pause's outcomes, with no delay and with one, and its one timer reused: each
// pause waits its whole delay (no tick left over from the one before).
func TestPause(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	for _, tc := range []struct {
		name        string
		gone, abort bool
		deadline    time.Duration
		want        string
	}{
		{"client gone", true, false, time.Hour, observability.OutcomeClientDisconnected},
		{"drain", false, true, time.Hour, observability.OutcomeAborted},
		{"deadline", false, false, 0, observability.OutcomeTimedOut},
		{"deadline within the delay", false, false, 20 * time.Millisecond, observability.OutcomeTimedOut},
	} {
		for _, delay := range []time.Duration{0, 50 * time.Millisecond} {
			t.Run(tc.name+"/delay="+delay.String(), func(t *testing.T) {
				p := &pacer{streamDeadline: time.Now().Add(tc.deadline)}
				if tc.gone {
					p.clientGone = closed
				}
				if tc.abort {
					p.drainAborted = closed
				}
				err := p.pause(delay)
				if delay == 0 && tc.deadline > 0 && !tc.gone && !tc.abort {
					if err != nil { // the deadline lies beyond a pause of no delay
						t.Fatal(err)
					}
					return
				}
				var ended errStreamEnded
				if !errors.As(err, &ended) || ended.outcome != tc.want {
					t.Fatalf("pause: %v, want %s", err, tc.want)
				}
			})
		}
	}
	t.Run("timer reused", func(t *testing.T) {
		p := &pacer{streamDeadline: time.Now().Add(time.Hour)}
		const delay = 15 * time.Millisecond
		for i := range 5 {
			start := time.Now()
			if err := p.pause(delay); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < delay {
				t.Fatalf("pause %d took %v, want at least %v", i, took, delay)
			}
			if p.lastReading.Before(start.Add(delay)) {
				t.Fatalf("pause %d left the reading from before its wait", i)
			}
		}
	})
}

// TestStalledStreamIsCut: a client that stops reading a stream is cut by the write timeout
// (the deadline is kept across writes, not set before each one), the outcome is timed_out
// with request_timeout, and the connection is closed.
func TestStalledStreamIsCut(t *testing.T) {
	const wt = 400 * time.Millisecond
	h := newHarness(t, func(d *Deps) {
		d.Catalog = longProse(t, "{first_chunk: 0s, between_chunks: 0s}")
		d.Config.WriteTimeout = wt
	})
	srv := httptest.NewServer(h.handler)
	t.Cleanup(srv.Close)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	body := `{"model":"mock-long","n":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	start := time.Now()
	if _, err := io.WriteString(c, "POST "+chatPath+" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "+
		strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	// Nothing is read until the server has given up.
	rec := waitForLog(t, h.logs, func(m map[string]any) bool { return m["msg"] == "request" })
	if rec["stream_outcome"] != "timed_out" || rec["error_code"] != "request_timeout" {
		t.Errorf("log: %v", rec)
	}
	if took := time.Since(start); took < wt*15/16 {
		t.Errorf("cut after %v, before the write timeout (%v) could have run out", took, wt)
	}
	// What the socket buffers hold, then the end of the connection.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, bufio.NewReader(c)); err != nil {
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("the connection was not closed: %v", err)
		}
	}
}

// BenchmarkStreamPace is what a stream does around each frame when it has no latency — the
// pause's checks, the clock, the write deadline — against a real connection: "kept" as a stream
// runs, "set every write" with the deadline set again before each write, as it was before
// writeDeadline kept it (a runtime timer update more a frame). Before this file the same work
// was a select over both channels and two time.Now a frame (figures in docs/performance.md).
func BenchmarkStreamPace(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	go func() {
		if c, err := ln.Accept(); err == nil {
			_, _ = io.Copy(io.Discard, c)
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	for _, every := range []bool{false, true} {
		name := "kept"
		if every {
			name = "set every write"
		}
		b.Run(name, func(b *testing.B) {
			s := &sseWriter{writes: writeDeadline{conn: conn, timeout: 30 * time.Second}}
			s.pace.streamDeadline = time.Now().Add(5 * time.Minute)
			s.writes.until = s.pace.streamDeadline
			s.pace.clientGone, s.pace.drainAborted = make(chan struct{}), make(chan struct{})
			b.ReportAllocs()
			for b.Loop() {
				if err := s.pace.pause(0); err != nil {
					b.Fatal(err)
				}
				s.writes.armed = s.writes.armed && !every
				s.writes.arm(s.pace.writeStart())
			}
		})
	}
}
