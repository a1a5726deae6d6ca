package simulation

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fault kinds.
const (
	RateLimit   = "rate_limit"
	ServerError = "server_error"
	Unavailable = "unavailable"
	Timeout     = "timeout"
	StreamError = "stream_error"
	StreamCut   = "stream_cut"
)

// Kinds lists every fault kind, for metrics pre-initialisation and documentation.
func Kinds() []string {
	return []string{RateLimit, ServerError, Unavailable, Timeout, StreamError, StreamCut}
}

// Fault is a simulated failure.
type Fault struct {
	Kind string
	// Attempts > 0 fails only attempts 1..Attempts; 0 fails every attempt.
	Attempts   int
	After      int           // stream faults: chunks sent before the fault
	RetryAfter time.Duration // rate_limit, unavailable: what retry-after says
	For        time.Duration // timeout: how long the request stalls before its 504
}

// Defaults of the fault parameters.
const (
	defaultAfter      = 3
	defaultRetryAfter = time.Second
	defaultStall      = 30 * time.Second
)

// ActiveOn reports whether the fault fails the given attempt (1-based).
func (f *Fault) ActiveOn(attempt int) bool {
	return f != nil && (f.Attempts == 0 || attempt <= f.Attempts)
}

// retryAfter is what the fault's answer tells a client to wait: only a rate limit and an
// unavailability say it.
func (f *Fault) retryAfter() time.Duration {
	if f.Kind == RateLimit || f.Kind == Unavailable {
		return f.RetryAfter
	}
	return 0
}

// BeforeOutput reports whether the fault happens before anything is sent: only those can be
// retried by a gateway, since a stream that has started cannot be taken back.
func (f *Fault) BeforeOutput() bool { return f.Kind != StreamError && f.Kind != StreamCut }

// String renders the fault in header syntax.
func (f Fault) String() string {
	s := f.Kind
	if f.Attempts > 0 {
		s += ";attempts=" + strconv.Itoa(f.Attempts)
	}
	return s
}

// ParseFault reads "KIND[;param=value]...". Errors say what is wrong without quoting the value.
func ParseFault(s string) (Fault, error) {
	parts := strings.Split(s, ";")
	f := Fault{Kind: strings.TrimSpace(strings.ToLower(parts[0])), After: defaultAfter, RetryAfter: defaultRetryAfter, For: defaultStall}
	known := false
	for _, k := range Kinds() {
		known = known || k == f.Kind
	}
	if !known {
		return f, errors.New("the fault kind must be one of " + strings.Join(Kinds(), ", "))
	}
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			return f, errors.New("parameters are name=value")
		}
		name, value = strings.TrimSpace(strings.ToLower(name)), strings.TrimSpace(value)
		var err error
		switch name {
		case "attempts":
			f.Attempts, err = boundedInt(value, 1, 1000)
		case "after":
			if f.Kind != StreamError && f.Kind != StreamCut {
				return f, errors.New("after applies to stream_error and stream_cut")
			}
			f.After, err = boundedInt(value, 0, 100000)
		case "retry_after":
			if f.Kind != RateLimit && f.Kind != Unavailable {
				return f, errors.New("retry_after applies to rate_limit and unavailable")
			}
			f.RetryAfter, err = boundedDuration(value, 0, time.Hour)
		case "for":
			if f.Kind != Timeout {
				return f, errors.New("for applies to timeout")
			}
			f.For, err = boundedDuration(value, 0, time.Hour)
		default:
			return f, errors.New("the parameters are attempts, after, retry_after and for")
		}
		if err != nil {
			return f, fmt.Errorf("%s: %w", name, err)
		}
	}
	return f, nil
}

func boundedInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("must be a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

func boundedDuration(v string, lo, hi time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		return 0, fmt.Errorf("must be a duration such as 250ms or 2s, at most %s", hi)
	}
	return d, nil
}
