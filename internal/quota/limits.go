// Package quota simulates a provider's rate limits: token buckets per model, client key and
// scope, replenished continuously, that a request draws from at admission (one request, and
// its prompt plus its output budget in tokens; its prompt alone of an input bucket, its budget
// alone of an output bucket) and that are corrected to the tokens the answer produced when it
// ends. It knows no dialect: what the buckets say (Status) is shown by each
// dialect in its provider's words (internal/dialect). The buckets live in this process
// (Buckets) or in the shared state store (internal/state), which does the same arithmetic.
package quota

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header sets a request's limits for tests, in place of its model's:
// "rpm=3;tpm=2000;rpd=100;itpm=1500;otpm=500;window=5s".
const Header = "X-Mock-Quota"

// DefaultWindow is the window of rpm and tpm when none is given: a minute, as the providers count.
const DefaultWindow = time.Minute

// Day is the window of rpd.
const Day = 24 * time.Hour

// Limits are a model's limits, from the catalog (`limits:`) or the x-mock-quota header. A zero
// field is no limit of that kind; Limits with every field zero limit nothing.
type Limits struct {
	Requests     int           `yaml:"rpm,omitempty"`  // requests per window
	Tokens       int           `yaml:"tpm,omitempty"`  // tokens per window: prompt and output
	Daily        int           `yaml:"rpd,omitempty"`  // requests per day
	InputTokens  int           `yaml:"itpm,omitempty"` // input tokens per window, counted at admission
	OutputTokens int           `yaml:"otpm,omitempty"` // output tokens per window: the budget, then what was produced
	Window       time.Duration `yaml:"window,omitempty"`
}

// counts are l's counts, the fields the checks below go through.
func (l *Limits) counts() [5]int {
	return [5]int{l.Requests, l.Tokens, l.Daily, l.InputTokens, l.OutputTokens}
}

// maxLimit bounds every count: far above any provider's tier, and within what the store's
// arithmetic keeps exact.
const maxLimit = 1 << 40

// Validate checks the limits' ranges.
func (l *Limits) Validate() error {
	some := false
	for _, n := range l.counts() {
		switch {
		case n < 0:
			return errors.New("rpm, tpm, rpd, itpm and otpm must not be negative")
		case n > maxLimit:
			return errors.New("rpm, tpm, rpd, itpm and otpm must be at most 2^40")
		}
		some = some || n > 0
	}
	switch {
	case l.Window < 0 || l.Window > Day:
		return errors.New("window must be from 0 (a minute) to 24h")
	case l.Window != 0 && l.Window < time.Millisecond:
		return errors.New("window must be at least 1ms")
	case !some:
		return errors.New("at least one of rpm, tpm, rpd, itpm and otpm is needed")
	}
	return nil
}

// Period is the window of rpm and tpm.
func (l *Limits) Period() time.Duration {
	if l.Window == 0 {
		return DefaultWindow
	}
	return l.Window
}

// String is the limits in the header's syntax: part of a bucket's key, so that a test that
// changes its limits starts on fresh buckets.
func (l *Limits) String() string { return string(l.AppendString(nil)) }

// AppendString appends String's text to b: a bucket's key is hashed from it without a string.
func (l *Limits) AppendString(b []byte) []byte {
	start := len(b)
	add := func(name string, v int64) {
		if len(b) > start {
			b = append(b, ';')
		}
		b = append(b, name...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
	}
	if l.Requests > 0 {
		add("rpm", int64(l.Requests))
	}
	if l.Tokens > 0 {
		add("tpm", int64(l.Tokens))
	}
	if l.Daily > 0 {
		add("rpd", int64(l.Daily))
	}
	if l.InputTokens > 0 {
		add("itpm", int64(l.InputTokens))
	}
	if l.OutputTokens > 0 {
		add("otpm", int64(l.OutputTokens))
	}
	add("windowms", l.Period().Milliseconds())
	return b
}

// Parse reads the x-mock-quota header: `;`-separated `name=value` pairs, rpm, tpm, rpd, itpm,
// otpm (whole numbers) and window (a Go duration). Its errors never quote the value.
func Parse(v string) (Limits, error) {
	var l Limits
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || val == "" {
			return Limits{}, errors.New("each part must be name=value (rpm, tpm, rpd, itpm, otpm, window)")
		}
		if seen[name] {
			return Limits{}, errors.New("a name is given twice")
		}
		seen[name] = true
		var err error
		switch name {
		case "rpm":
			l.Requests, err = count(val)
		case "tpm":
			l.Tokens, err = count(val)
		case "rpd":
			l.Daily, err = count(val)
		case "itpm":
			l.InputTokens, err = count(val)
		case "otpm":
			l.OutputTokens, err = count(val)
		case "window":
			l.Window, err = time.ParseDuration(val)
			if err != nil {
				err = errors.New("window must be a duration such as 5s or 1m")
			}
		default:
			return Limits{}, errors.New("unknown name: the names are rpm, tpm, rpd, itpm, otpm and window")
		}
		if err != nil {
			return Limits{}, err
		}
	}
	if err := l.Validate(); err != nil {
		return Limits{}, err
	}
	return l, nil
}

func count(v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > maxLimit {
		return 0, errors.New("rpm, tpm, rpd, itpm and otpm must be whole numbers from 1 to 2^40")
	}
	return int(n), nil
}
