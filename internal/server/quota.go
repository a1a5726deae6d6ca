package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/catalog"
	"mockgateway/internal/protocol"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// quotaAdmission is a request that a model's quota admitted (internal/quota): what corrects its
// token bucket once its answer is made (settleQuota).
type quotaAdmission struct {
	key    quota.Key
	limits quota.Limits
	asked  quota.Usage // what it was charged: its prompt and its output budget
}

// limited reports whether the request counts against a quota: its model has limits, or it
// names its own (x-mock-quota, when simulation headers are allowed). A model without limits
// pays this check alone.
func (h *chatHandler) limited(r *http.Request, model *catalog.Model) bool {
	return model.Limits != nil || (h.sim.headers && len(r.Header[quota.Header]) > 0)
}

// quotaTaken is what drawing on the quota made of a request: its admission (nil: it drew on
// no quota — its fallback has no limits), the model that serves it (the requested one, or the
// fallback of its gateway policy), and that policy's plan when one handled a refusal.
type quotaTaken struct {
	admitted *quotaAdmission
	model    *catalog.Model
	plan     *simulation.Plan
	holding  held // sim.held once the call holds its admission (hold)
}

// quotaDraw is what drawing on a quota allocates, as one allocation: what it made of the
// request, its admission, and the status the dialect is shown (which escapes, through the
// dialect's interface).
type quotaDraw struct {
	taken     quotaTaken
	admission quotaAdmission
	status    quota.Status
}

// takeQuota admits the request against its quota — one request, and its prompt plus its output
// budget in tokens — or refuses it in the dialect's words; a model with a gateway policy has
// the refusal handled by it (quotaGateway): its retries may get in, or a fallback serve. The
// answer carries the rate-limit headers of the model whose quota it drew from last. The buckets
// are the model's, the client key's (hashed: the key itself is neither kept nor shown) and the
// scope's.
//
//go:noinline
func (h *chatHandler) takeQuota(w http.ResponseWriter, r *http.Request, model *catalog.Model, req *protocol.Request, promptTokens int) (*quotaTaken, error) {
	limits, err := h.limitsOf(r, model)
	if err != nil {
		return nil, err
	}
	rec := observability.RecordFrom(r.Context())
	client := sha256.Sum256([]byte(h.clientKey(r)))
	budget := req.MaxTokens
	if budget <= 0 {
		budget = model.DefaultTokens
	}
	draw := &quotaDraw{admission: quotaAdmission{key: bucketKey(model.ID, rec.Scope, &limits, &client), limits: limits, asked: quota.Usage{Input: promptTokens, Output: budget * max(1, req.N)}}}
	a, st, taken := &draw.admission, &draw.status, &draw.taken
	if *st, err = h.state.TakeQuota(r.Context(), a.key, a.limits, a.asked, 0); err != nil {
		return nil, stateError(err)
	}
	*taken = quotaTaken{admitted: a, model: model}
	if st.Refused != "" {
		rec.Fault = st.Refused.Fault() // the access line's and the journal's word for it
		h.metrics.ObserveQuotaRefusal(model.ID, string(st.Refused))
		noteLimit(rec, string(st.Refused))
		if model.Gateway != nil && !st.TooLarge {
			if taken.plan, taken.model, err = h.quotaGateway(r.Context(), model, a, st); err != nil {
				return nil, err
			}
			if st.Refused != "" { // the refusal a client is shown may be a later draw's
				rec.Fault = st.Refused.Fault()
				noteLimit(rec, string(st.Refused))
			}
		}
		if st.Refused != "" && taken.model != model && taken.model != nil {
			return h.quotaOfFallback(w, r, taken, req, promptTokens)
		}
	}
	h.dialect.QuotaHeaders(w.Header(), st, time.Now())
	if st.Refused != "" { // no retry got in, and no fallback remained
		if taken.plan != nil {
			reportPlan(r.Context(), w, trace.SpanFromContext(r.Context()), h.metrics, model.ID, &simulated{plan: *taken.plan})
		}
		return nil, h.dialect.QuotaError(st, model.ID, a.key.Org)
	}
	return taken, nil
}

// admission is what the request drew from a quota, nil for none.
func (t *quotaTaken) admission() *quotaAdmission {
	if t == nil {
		return nil
	}
	return t.admitted
}

// retriesSpent is how many of the served model's gateway retries the quota took: its own retries
// that got in (none when a fallback serves, whose policy is its own).
func (t *quotaTaken) retriesSpent() int {
	if t == nil || t.plan == nil || t.plan.FallbackFrom != "" {
		return 0
	}
	return t.plan.Attempts - 1
}

// hold makes the call hold its admission until it ends, and joins the gateway policy's
// handling of the quota to the simulation's plan for the model that serves: its retries and
// fallback first, then whatever that model's own fault and policy decided.
func (t *quotaTaken) hold(sim *simulated) {
	if t.admitted != nil {
		t.holding = held{quota: t.admitted}
		sim.held = &t.holding
	}
	q := t.plan
	if q == nil {
		return
	}
	p := sim.plan
	if !p.Policy {
		joined := *q
		joined.Fault = p.Fault
		sim.plan = joined
		return
	}
	p.Steps = append(append([]simulation.Step(nil), q.Steps...), p.Steps...)
	if q.FallbackFrom != "" { // the fallback's own policy decided its fault; the attempts were the requested model's
		p.Attempts, p.FallbackFrom = q.Attempts, q.FallbackFrom
	} // else the fault's attempts went on from the quota's (retriesSpent)
	sim.plan = p
}

// quotaOfFallback draws on the quota of the fallback a gateway policy chose, if it has one (its
// policy is not asked again); the answer then carries that quota's headers, or its refusal.
func (h *chatHandler) quotaOfFallback(w http.ResponseWriter, r *http.Request, taken *quotaTaken, req *protocol.Request, promptTokens int) (*quotaTaken, error) {
	fb := taken.model
	taken.admitted = nil
	if !h.limited(r, fb) {
		return taken, nil
	}
	own := *fb
	own.Gateway = nil
	t, err := h.takeQuota(w, r, &own, req, promptTokens)
	if err != nil {
		reportPlan(r.Context(), w, trace.SpanFromContext(r.Context()), h.metrics, taken.plan.FallbackFrom, &simulated{plan: *taken.plan})
		return nil, err
	}
	taken.admitted = t.admitted
	return taken, nil
}

// limitsOf are the limits the request is counted against: its x-mock-quota header's, when
// simulation headers are allowed, else its model's.
func (h *chatHandler) limitsOf(r *http.Request, model *catalog.Model) (quota.Limits, error) {
	var limits quota.Limits
	if model.Limits != nil {
		limits = *model.Limits
	}
	if h.sim.headers {
		if v := r.Header.Get(quota.Header); v != "" {
			l, err := quota.Parse(v)
			if err != nil {
				return limits, invalidHeader(quota.Header, err)
			}
			limits = l
		}
	}
	return limits, nil
}

// bucketKey names the buckets of a model, a scope, the limits they count under (a test that
// changes its limits starts afresh) and a client key's hash, and the organization a refusal
// names, derived from that hash. Each hash is one sha256.Sum256 over a buffer on the stack
// (the same bytes as writing the parts in turn): no hasher, no string of the limits, one
// allocation (the ID).
func bucketKey(model, scope string, l *quota.Limits, client *[sha256.Size]byte) quota.Key {
	var stack [256]byte // a model, a scope and limits of ordinary length fit
	b := append(stack[:0], model...)
	b = append(b, 0)
	b = append(b, scope...)
	b = append(b, 0)
	b = l.AppendString(b)
	b = append(b, 0)
	b = append(b, client[:]...)
	sum := sha256.Sum256(b)
	var id [32]byte
	hex.Encode(id[:], sum[:16])
	key := quota.Key{ID: string(id[:]), Model: model, Scope: scope}
	org := [4 + sha256.Size]byte{'o', 'r', 'g', 0}
	copy(org[4:], client[:])
	o := sha256.Sum256(org[:])
	copy(key.Org[:], o[:])
	return key
}

// clientKey is the key the request carries, as the dialect's clients send it: the bearer
// token, else where the dialect has its clients put it (dialect.Dialect's Key: one key is one
// organization wherever it is sent); "" for none (one organization for all of them).
func (h *chatHandler) clientKey(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if t, ok := strings.CutPrefix(a, "Bearer "); ok {
			return t
		}
		if t, ok := strings.CutPrefix(a, "bearer "); ok {
			return t
		}
		return a
	}
	return h.dialect.Key(r)
}

// settleQuota corrects the admission's token buckets to what the call produced: a stream cut
// short, or a call answered by a fault before any output, gives back what it did not send. The
// prompt was counted at admission and stays counted, in every bucket alike (a call that made
// nothing has no prompt count of its own to correct it by). rec holds the call's counts once
// its answer is written.
func (h *chatHandler) settleQuota(ctx context.Context, a *quotaAdmission, rec *observability.Record) {
	if a == nil {
		return
	}
	delta := quota.Usage{Output: rec.CompletionTokens - a.asked.Output}
	h.state.SettleQuota(context.WithoutCancel(ctx), a.key, a.limits, delta)
}
