package server

import (
	"net/http"
	"strconv"

	"mockgateway/internal/catalog"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// quotaGateway is what a model's gateway policy does with a refusal of its quota, as with the
// rate_limit fault (simulation.Decide): its retries, then its fallback chain. A simulated
// decision waits for nothing, so the bucket has not refilled when the retries are made: they
// are refused alike, and the first executable model of the chain serves (external ones are skipped, metadata only). It
// returns that model, or nil when none remains and the refusal stands. Either way the decision
// is reported as a fault's is: the x-mock-gateway-* headers, the metrics and the access line.
func (h *chatHandler) quotaGateway(w http.ResponseWriter, r *http.Request, model *catalog.Model, st *quota.Status) *catalog.Model {
	fault := &simulation.Fault{Kind: simulation.RateLimit, RetryAfter: st.RetryAfter}
	plan := simulation.Decide(model.ID, fault, 1, model.Gateway, h.catalog.Target)
	var served *catalog.Model
	if plan.Fault == nil {
		served, _ = h.catalog.Lookup(plan.ServedBy)
	}
	ctx := r.Context()
	rec := observability.RecordFrom(ctx)
	rec.GatewayAttempts, rec.ServedBy, rec.FallbackFrom = plan.Attempts, plan.ServedBy, plan.FallbackFrom
	hd := w.Header()
	hd.Set("X-Mock-Gateway-Attempts", strconv.Itoa(plan.Attempts))
	hd.Set("X-Mock-Gateway-Served-By", plan.ServedBy)
	if plan.FallbackFrom != "" {
		hd.Set("X-Mock-Gateway-Fallback-From", plan.FallbackFrom)
	}
	retries := 0
	for _, step := range plan.Steps {
		switch step.Kind {
		case "retry":
			retries++
		case "fallback":
			h.metrics.ObserveFallback(ctx, model.ID, step.To)
		}
	}
	h.metrics.ObserveRetries(ctx, model.ID, simulation.RateLimit, retries)
	return served
}
