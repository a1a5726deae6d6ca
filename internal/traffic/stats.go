package traffic

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// counters are what one summary line reports.
type counters struct {
	calls           int
	requests        int
	skipped         int
	disconnects     int // deliberate: the client_disconnect scenario hanging up mid-stream
	transportErrors int
	status          map[string]int // HTTP status of every request, retries included
	scenarios       map[string]int // calls started, by scenario
	unexpected      map[string]int // calls whose answer broke the contract, by scenario
	lastUnexpected  string
}

func newCounters() counters {
	return counters{status: map[string]int{}, scenarios: map[string]int{}, unexpected: map[string]int{}}
}

func (c *counters) add(o counters) {
	c.calls += o.calls
	c.requests += o.requests
	c.skipped += o.skipped
	c.disconnects += o.disconnects
	c.transportErrors += o.transportErrors
	for k, v := range o.status {
		c.status[k] += v
	}
	for k, v := range o.scenarios {
		c.scenarios[k] += v
	}
	for k, v := range o.unexpected {
		c.unexpected[k] += v
	}
	if o.lastUnexpected != "" {
		c.lastUnexpected = o.lastUnexpected
	}
}

// stats is shared by the calls in flight and the reporter.
type stats struct {
	mu       sync.Mutex
	cur      counters // since the last summary line
	all      counters // since the start
	inFlight int
}

func newStats() *stats { return &stats{cur: newCounters(), all: newCounters()} }

func (s *stats) begin(scenario string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.calls++
	s.cur.scenarios[scenario]++
	s.inFlight++
}

// end records how a call went. A call cancelled by the generator's own stop is not the
// service's fault and is not counted as unexpected.
func (s *stats) end(scenario string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	var ue *unexpectedError
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
	case errors.As(err, &ue):
		s.cur.unexpected[scenario]++
		s.cur.lastUnexpected = scenario + ": " + ue.msg
	default:
		// Transport errors are counted per request in request(); the call just ends.
	}
}

func (s *stats) request(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.requests++
	s.cur.status[strconv.Itoa(status)]++
}

func (s *stats) transportError() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.requests++
	s.cur.transportErrors++
}

func (s *stats) disconnect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.disconnects++
}

func (s *stats) skip() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.skipped++
}

func (s *stats) inFlightNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// take returns the counters since the last take and starts new ones.
func (s *stats) take() counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cur
	s.all.add(c)
	s.cur = newCounters()
	return c
}

// totals returns the counters since the start (up to the last take).
func (s *stats) totals() counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := newCounters()
	c.add(s.all)
	return c
}

// unexpectedError is a contract violation seen by a scenario: a status, a stream shape or a
// body other than the contract promises for that call.
type unexpectedError struct{ msg string }

func (e *unexpectedError) Error() string { return "unexpected: " + e.msg }

func unexpected(format string, args ...any) error {
	return &unexpectedError{msg: fmt.Sprintf(format, args...)}
}
