// Package simulation owns what the mock pretends about a real gateway: latency profiles,
// deterministic faults chosen by the catalog or by x-mock-* request headers, and the retry and
// fallback decisions of a gateway policy — computed and reported, never executed. Nothing here
// sleeps, calls out or keeps state between requests: a plan is a pure function of the request's
// headers, the catalog entry and the attempt number, so any number of replicas agree.
package simulation

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Request headers that choose simulated behaviour.
const (
	HeaderFault   = "X-Mock-Fault"
	HeaderLatency = "X-Mock-Latency"
	HeaderAttempt = "X-Mock-Attempt"
	// HeaderRetryCount is sent by the official OpenAI SDKs: 0 on the first try, 1 on the first
	// retry, … It lets "fail the first K attempts" work with an unmodified client.
	HeaderRetryCount = "X-Stainless-Retry-Count"
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

// Latency delays a mock's output: the first chunk, then each later token. Jitter spreads each
// delay uniformly over ±Jitter, drawn from a generator seeded by the request.
type Latency struct {
	FirstChunk    time.Duration `yaml:"first_chunk,omitempty"`
	BetweenChunks time.Duration `yaml:"between_chunks,omitempty"`
	Jitter        time.Duration `yaml:"jitter,omitempty"`
}

// Profiles are the named latencies.
func Profiles() map[string]Latency {
	return map[string]Latency{
		"instant":   {},
		"fast":      {FirstChunk: 50 * time.Millisecond, BetweenChunks: 5 * time.Millisecond, Jitter: 2 * time.Millisecond},
		"realistic": {FirstChunk: 400 * time.Millisecond, BetweenChunks: 25 * time.Millisecond, Jitter: 10 * time.Millisecond},
		"slow":      {FirstChunk: 2 * time.Second, BetweenChunks: 100 * time.Millisecond, Jitter: 30 * time.Millisecond},
	}
}

// ParseLatency reads a profile name or "ttfc=D;between=D[;jitter=D]".
func ParseLatency(s string) (Latency, error) {
	s = strings.TrimSpace(s)
	if p, ok := Profiles()[strings.ToLower(s)]; ok {
		return p, nil
	}
	if !strings.Contains(s, "=") {
		return Latency{}, errors.New("use a profile (instant, fast, realistic, slow) or ttfc=D;between=D;jitter=D")
	}
	var l Latency
	for _, p := range strings.Split(s, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			return l, errors.New("parameters are name=value")
		}
		// The name is checked before it can appear in an error: it is client text until it
		// is one of ours.
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "ttfc" && name != "between" && name != "jitter" {
			return l, errors.New("the parameters are ttfc, between and jitter")
		}
		d, err := boundedDuration(strings.TrimSpace(value), 0, 10*time.Minute)
		if err != nil {
			return l, fmt.Errorf("%s: %w", name, err)
		}
		switch name {
		case "ttfc":
			l.FirstChunk = d
		case "between":
			l.BetweenChunks = d
		case "jitter":
			l.Jitter = d
		}
	}
	return l, nil
}

// UnmarshalYAML accepts a profile name or a mapping in a catalog.
func (l *Latency) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p, ok := Profiles()[n.Value]
		if !ok {
			return errors.New("latency: unknown profile; use instant, fast, realistic, slow or a mapping")
		}
		*l = p
		return nil
	}
	type plain Latency
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if p.FirstChunk < 0 || p.BetweenChunks < 0 || p.Jitter < 0 {
		return errors.New("latency durations must not be negative")
	}
	*l = Latency(p)
	return nil
}

// IsZero reports an instant latency.
func (l Latency) IsZero() bool { return l == Latency{} }

// Timings is the deterministic schedule of one request's delays.
type Timings struct {
	lat Latency
	pcg rand.PCG // inline rather than behind a rand.Rand: one allocation per request, not three
}

// NewTimings seeds the schedule from the request, so the same request waits the same.
func NewTimings(l Latency, seed uint64) *Timings {
	t := &Timings{lat: l}
	t.pcg.Seed(seed, 0x6d6f636b67617465)
	return t
}

func (t *Timings) jittered(base time.Duration) time.Duration {
	if t.lat.Jitter <= 0 {
		return base
	}
	// rand.Rand.Float64's own arithmetic, so the schedule is what it always was.
	f := float64(t.pcg.Uint64()<<11>>11) / (1 << 53)
	j := time.Duration((f*2 - 1) * float64(t.lat.Jitter))
	return max(base+j, 0)
}

// First is the delay before the first chunk.
func (t *Timings) First() time.Duration { return t.jittered(t.lat.FirstChunk) }

// Instant reports whether the schedule never waits: no delay before the first token or between
// tokens, and no jitter to make one.
func (t *Timings) Instant() bool {
	return t.lat.FirstChunk <= 0 && t.lat.BetweenChunks <= 0 && t.lat.Jitter <= 0
}

// Next is the delay before the next token.
func (t *Timings) Next() time.Duration { return t.jittered(t.lat.BetweenChunks) }

// Total is a JSON response's whole wait for n tokens: the same draws a stream would make.
func (t *Timings) Total(tokens int) time.Duration {
	d := t.First()
	for i := 0; i < tokens; i++ {
		d += t.Next()
	}
	return d
}

// Policy is the retry and fallback policy of the gateway a model stands for.
type Policy struct {
	Retries           int           `yaml:"retries"`
	Backoff           time.Duration `yaml:"backoff"`
	BackoffMultiplier float64       `yaml:"backoff_multiplier,omitempty"`
	Fallback          []string      `yaml:"fallback,omitempty"`
	// SleepBackoff makes the mock really wait the backoff it reports; off by default, since the
	// point is to see the decision, not to wait for it.
	SleepBackoff bool `yaml:"sleep_backoff,omitempty"`
}

// Validate checks the policy's own fields; fallback ids are checked by the catalog.
func (p *Policy) Validate() error {
	switch {
	case p.Retries < 0 || p.Retries > 10:
		return errors.New("gateway.retries must be from 0 to 10")
	case p.Backoff < 0 || p.Backoff > time.Minute:
		return errors.New("gateway.backoff must be from 0 to 1m")
	case p.BackoffMultiplier != 0 && (p.BackoffMultiplier < 1 || p.BackoffMultiplier > 10):
		return errors.New("gateway.backoff_multiplier must be from 1 to 10")
	case len(p.Fallback) > 10:
		return errors.New("gateway.fallback has at most 10 entries")
	}
	return nil
}

// backoff is the wait before retry number n (1-based).
func (p *Policy) backoff(n int) time.Duration {
	m := p.BackoffMultiplier
	if m == 0 {
		m = 1
	}
	return time.Duration(float64(p.Backoff) * math.Pow(m, float64(n-1)))
}

// Target is what a fallback id resolves to.
type Target struct {
	Executable bool
}

// Step is one reported gateway decision.
type Step struct {
	Kind    string        // "retry" or "fallback"
	Attempt int           // retry: the attempt that failed and is retried
	Backoff time.Duration // retry: the wait before the next attempt
	To      string        // fallback: the target id
	Skipped bool          // fallback: an external target, metadata only — not executed
}

// Plan is what happens to one request.
type Plan struct {
	// Fault is the fault to serve, nil when the request succeeds (possibly after simulated
	// retries or on a fallback model).
	Fault *Fault
	// ServedBy is the model that answers: the requested one, or a fallback target.
	ServedBy string
	// Policy is true when a gateway policy made decisions; then Attempts, Steps and
	// FallbackFrom are reported.
	Policy       bool
	Cause        string // the fault kind the policy handled
	Attempts     int
	FallbackFrom string
	Steps        []Step
	// Wait is the total simulated backoff, slept only when the policy asks for it.
	Wait  time.Duration
	Sleep bool
}

// Decide computes the plan for a request to model whose fault (may be nil) applies, on the
// client's attempt number. With a policy, the gateway's own attempts are counted from 1 and the
// fault's attempts=K fails the first K of them; lookup resolves fallback ids.
func Decide(model string, fault *Fault, attempt int, policy *Policy, lookup func(string) (Target, bool)) Plan {
	plan := Plan{ServedBy: model, Attempts: 1}
	if fault == nil {
		return plan
	}
	if policy == nil || !fault.BeforeOutput() {
		if fault.ActiveOn(attempt) {
			plan.Fault = fault
		}
		return plan
	}
	plan.Policy, plan.Sleep, plan.Cause = true, policy.SleepBackoff, fault.Kind
	for a := 1; a <= policy.Retries+1; a++ {
		plan.Attempts = a
		if !fault.ActiveOn(a) {
			return plan // this attempt of the primary succeeds
		}
		if a <= policy.Retries {
			b := policy.backoff(a)
			plan.Steps = append(plan.Steps, Step{Kind: "retry", Attempt: a, Backoff: b})
			plan.Wait += b
		}
	}
	for _, id := range policy.Fallback {
		t, ok := lookup(id)
		if !ok || !t.Executable {
			plan.Steps = append(plan.Steps, Step{Kind: "fallback", To: id, Skipped: true})
			continue
		}
		plan.Steps = append(plan.Steps, Step{Kind: "fallback", To: id})
		plan.ServedBy, plan.FallbackFrom = id, model
		return plan
	}
	plan.Fault = fault // every attempt failed and no executable fallback remained
	return plan
}

// AttemptOf reads the client's attempt number: x-mock-attempt (1-based) when sent, else
// x-stainless-retry-count + 1, else 1.
func AttemptOf(h http.Header) (int, error) {
	if v := h.Get(HeaderAttempt); v != "" {
		n, err := boundedInt(strings.TrimSpace(v), 1, 1000)
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	if v := h.Get(HeaderRetryCount); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err == nil && n >= 0 && n < 1000 {
			return n + 1, nil
		}
		// The SDKs' own header: a value we cannot read is theirs to get wrong, not a client
		// error of the mock's; fall back to the first attempt.
	}
	return 1, nil
}
