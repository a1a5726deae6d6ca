// Package simulation owns what the mock pretends about a real gateway: latency profiles,
// deterministic faults chosen by the catalog or by x-mock-* request headers, and the retry and
// fallback decisions of a gateway policy — computed and reported, never executed. Nothing here
// sleeps, calls out or keeps state between requests: a plan is a pure function of the request's
// headers, the catalog entry and the attempt number, so any number of replicas agree.
package simulation

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
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
	case p.Backoff < 0 || p.Backoff > MaxBackoff:
		return errors.New("gateway.backoff must be from 0 to 1m")
	case p.BackoffMultiplier != 0 && (p.BackoffMultiplier < 1 || p.BackoffMultiplier > 10):
		return errors.New("gateway.backoff_multiplier must be from 1 to 10")
	case len(p.Fallback) > 10:
		return errors.New("gateway.fallback has at most 10 entries")
	}
	return nil
}

// MaxBackoff is the longest wait a policy makes before a retry: its own backoff is at most
// that, and a refusal whose retry-after is longer is not retried — the gateway goes on to its
// fallback chain rather than hold the request for minutes or a day.
const MaxBackoff = time.Minute

// backoff is the wait before retry number n (1-based): the backoff grown by the multiplier,
// at most MaxBackoff (computed in floats, so that ten retries at ×10 do not overflow).
func (p *Policy) backoff(n int) time.Duration {
	m := p.BackoffMultiplier
	if m == 0 {
		m = 1
	}
	return time.Duration(math.Min(float64(p.Backoff)*math.Pow(m, float64(n-1)), float64(MaxBackoff)))
}

// RetryWait is the wait before retry number n (1-based) of a refusal that said retryAfter (0:
// it said nothing): the policy's backoff, or the retry-after when that is longer, as gateways
// honour it. ok is false when the retry-after is beyond MaxBackoff: no retry is made.
func (p *Policy) RetryWait(n int, retryAfter time.Duration) (wait time.Duration, ok bool) {
	if retryAfter > MaxBackoff {
		return 0, false
	}
	return max(p.backoff(n), retryAfter), true
}

// Target is what a fallback id resolves to.
type Target struct {
	Executable bool
}

// Step is one reported gateway decision.
type Step struct {
	Kind    string        // "retry" or "fallback"
	Cause   string        // retry: the fault kind retried (a quota's refusal is a rate_limit)
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

// Progress is what a gateway policy has done for a request before its fault is decided: the
// retries it already made (on the model's quota, which refused them before the model was
// reached), and how long it may still sleep in all when it sleeps its backoff (0: no bound).
type Progress struct {
	Retries int
	Left    time.Duration
}

// Decide computes the plan for a request to model whose fault (may be nil) applies, on the
// client's attempt number. With a policy, the gateway's own attempts are counted from 1 — on
// from the retries it already made (done) — and the fault's attempts=K fails the first K that
// reach the model; a sleeping policy makes no retry that would sleep beyond done.Left. lookup
// resolves fallback ids.
func Decide(model string, fault *Fault, attempt int, policy *Policy, lookup func(string) (Target, bool), done Progress) Plan {
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
	done.Retries = min(done.Retries, policy.Retries)
	plan.Attempts = done.Retries + 1
	for a := done.Retries + 1; a <= policy.Retries+1; a++ {
		plan.Attempts = a
		if !fault.ActiveOn(a - done.Retries) {
			return plan // this attempt of the primary succeeds
		}
		if a <= policy.Retries {
			wait, ok := policy.RetryWait(a, fault.retryAfter())
			if !ok || policy.SleepBackoff && done.Left > 0 && plan.Wait+wait > done.Left {
				break
			}
			plan.Retried(a, wait)
		}
	}
	if !plan.FallBack(model, policy, lookup) {
		plan.Fault = fault // every attempt failed and no executable fallback remained
	}
	return plan
}

// Retried records that attempt failed and is retried after wait.
func (p *Plan) Retried(attempt int, wait time.Duration) {
	p.Steps = append(p.Steps, Step{Kind: "retry", Cause: p.Cause, Attempt: attempt, Backoff: wait})
	p.Wait += wait
}

// FallBack walks the policy's fallback chain once model's attempts have failed: an external
// target is skipped (metadata only, never executed), the first executable one serves. It
// reports false when none remains.
func (p *Plan) FallBack(model string, policy *Policy, lookup func(string) (Target, bool)) bool {
	for _, id := range policy.Fallback {
		t, ok := lookup(id)
		if !ok || !t.Executable {
			p.Steps = append(p.Steps, Step{Kind: "fallback", To: id, Skipped: true})
			continue
		}
		p.Steps = append(p.Steps, Step{Kind: "fallback", To: id})
		p.ServedBy, p.FallbackFrom = id, model
		return true
	}
	return false
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
