package simulation

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

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
