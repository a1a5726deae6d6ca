package observability

import (
	"sync/atomic"
	"time"
)

// logClock writes an access line's time as time.RFC3339Nano formats it, one second at a time:
// the date, the time of day and the zone are formatted once per second (and location) and
// kept, and each line adds its fraction. Formatted whole, the time was a sixth of writing the
// line (BenchmarkAccessLine); TestLogClock holds it to AppendFormat.
type logClock struct{ last atomic.Pointer[loggedSecond] }

// loggedSecond is one second of one location, formatted: "2006-01-02T15:04:05" and the zone.
type loggedSecond struct {
	unix       int64
	loc        *time.Location
	head, zone string
}

func (c *logClock) appendTime(buf []byte, t time.Time) []byte {
	s := c.last.Load()
	if s == nil || s.unix != t.Unix() || s.loc != t.Location() {
		if s = formatSecond(t); s == nil {
			return t.AppendFormat(buf, time.RFC3339Nano)
		}
		c.last.Store(s)
	}
	buf = append(buf, s.head...)
	if ns := t.Nanosecond(); ns != 0 { // nine digits, less the trailing zeros
		var f [10]byte
		f[0] = '.'
		for i := 9; i > 0; i-- {
			f[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(f)
		for f[n-1] == '0' {
			n--
		}
		buf = append(buf, f[:n]...)
	}
	return append(buf, s.zone...)
}

// formatSecond formats t's second, or returns nil for a year RFC3339 does not write in four
// digits (then the time is formatted whole).
func formatSecond(t time.Time) *loggedSecond {
	out := time.Unix(t.Unix(), 0).In(t.Location()).AppendFormat(make([]byte, 0, 32), time.RFC3339)
	if len(out) < 20 || out[4] != '-' || out[10] != 'T' || out[13] != ':' || out[16] != ':' {
		return nil
	}
	return &loggedSecond{unix: t.Unix(), loc: t.Location(), head: string(out[:19]), zone: string(out[19:])}
}
