package server

import (
	"context"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// quotaGateway is what a model's gateway policy does with a refusal of its quota, as with the
// rate_limit fault: it retries, each time after the longer of its backoff and the refusal's
// retry-after in whole seconds, as the header says it (simulation.Policy.RetryWait), then walks
// its fallback chain. Each retry draws on the quota again: after really waiting when the policy
// sleeps its backoff, else as if it came that much later — the buckets are charged ahead, so
// the requests after it see what it took — so that a bucket which refills within the wait
// admits the retry, and one that does not refuses it. A sleeping policy waits at most
// --stream-timeout from the request's start in all (its fault's retries after these too,
// simulator.decide): a retry that would wait beyond it is not made.
// It returns the policy's plan and the model that serves: the requested one when a retry got
// in (st then its admission), the fallback the chain lands on, or nil when the refusal stands
// (st then the refusal a client is shown: as the buckets are now). The plan is reported by the
// caller, with the answer.
func (h *chatHandler) quotaGateway(ctx context.Context, model *catalog.Model, a *quotaAdmission, st *quota.Status) (*simulation.Plan, *catalog.Model, error) {
	policy := model.Gateway
	plan := &simulation.Plan{Policy: true, Cause: simulation.RateLimit, ServedBy: model.ID, Attempts: 1}
	deadline := observability.RecordFrom(ctx).Start.Add(h.streamTimeout) // the request's, as a stream's

	last := *st
	var ahead time.Duration
	for n := 1; n <= policy.Retries; n++ {
		wait, ok := policy.RetryWait(n, time.Duration(quota.Seconds(last.RetryAfter))*time.Second)
		if !ok || policy.SleepBackoff && time.Now().Add(wait).After(deadline) {
			break
		}
		plan.Retried(n, wait)
		plan.Attempts = n + 1
		if policy.SleepBackoff {
			if !h.wait(ctx, wait) {
				return nil, nil, errClientLeft
			}
		} else {
			ahead += wait
		}
		next, err := h.state.TakeQuota(ctx, a.key, a.limits, a.asked, ahead)
		if err != nil {
			return nil, nil, stateError(err)
		}
		if next.Refused == "" {
			*st = next
			return plan, model, nil
		}
		h.metrics.ObserveQuotaRefusal(model.ID, string(next.Refused))
		last = next
		if policy.SleepBackoff { // drawn now: what a client is shown
			*st = next
		}
	}
	if plan.FallBack(model.ID, policy, h.catalog.Target) {
		served, _ := h.catalog.Lookup(plan.ServedBy)
		return plan, served, nil
	}
	return plan, nil, nil
}
