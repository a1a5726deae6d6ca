package observability

import (
	"net/http"
	"sync/atomic"
	"time"
)

// dateHeader is the Date header every response carries, formatted once a second and shared by
// the responses of that second. net/http formats it afresh for each response it writes
// without one (a clock reading and time.AppendFormat, a measurable share of a JSON request's
// CPU under load: docs/performance.md); the chain sets it as the response begins, from the clock reading it takes there
// anyway, so net/http leaves it alone. TestDateHeader holds it to what net/http writes.
type dateHeader struct{ last atomic.Pointer[datedSecond] }

// datedSecond is one second, formatted as http.TimeFormat. Its value is shared by every
// response of that second and never written: net/http only reads a header's values, and a
// handler that sets Date replaces the slice rather than writing into it.
type datedSecond struct {
	unix  int64
	value []string
}

// at returns the Date header's value for a response begun at now.
func (d *dateHeader) at(now time.Time) []string {
	s := d.last.Load()
	if s == nil || s.unix != now.Unix() {
		s = &datedSecond{unix: now.Unix(), value: []string{now.UTC().Format(http.TimeFormat)}}
		d.last.Store(s)
	}
	return s.value
}
