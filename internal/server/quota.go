package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"mockgateway/internal/catalog"
	"mockgateway/internal/protocol"
	"mockgateway/internal/quota"
	"mockgateway/observability"
)

// quotaAdmission is a request that a model's quota admitted (internal/quota): what corrects its
// token bucket once its answer is made (settleQuota).
type quotaAdmission struct {
	key    quota.Key
	limits quota.Limits
	tokens int // what it was charged: its prompt and its output budget
}

// limited reports whether the request counts against a quota: its model has limits, or it
// names its own (x-mock-quota, when simulation headers are allowed). A model without limits
// pays this check alone.
func (h *chatHandler) limited(r *http.Request, model *catalog.Model) bool {
	return model.Limits != nil || (h.sim.headers && len(r.Header[quota.Header]) > 0)
}

// takeQuota admits the request against its quota — one request, and its prompt plus its output
// budget in tokens — or refuses it in the dialect's words; a model with a gateway policy may
// have the refusal served by a fallback (quotaGateway), the model it returns. The answer carries
// the rate-limit headers of the model whose quota it drew from. The buckets are the model's, the client key's (hashed: the key
// itself is neither kept nor shown) and the scope's.
//
//go:noinline
func (h *chatHandler) takeQuota(w http.ResponseWriter, r *http.Request, model *catalog.Model, req *protocol.Request, promptTokens int) (*quotaAdmission, *catalog.Model, error) {
	var limits quota.Limits
	if model.Limits != nil {
		limits = *model.Limits
	}
	if h.sim.headers {
		if v := r.Header.Get(quota.Header); v != "" {
			l, err := quota.Parse(v)
			if err != nil {
				return nil, model, invalidHeader(quota.Header, err)
			}
			limits = l
		}
	}
	rec := observability.RecordFrom(r.Context())
	client := sha256.Sum256([]byte(h.clientKey(r)))
	k := sha256.New()
	for _, part := range []string{model.ID, rec.Scope, limits.String()} {
		k.Write([]byte(part))
		k.Write([]byte{0})
	}
	k.Write(client[:])
	key := quota.Key{ID: hex.EncodeToString(k.Sum(nil)[:16]), Model: model.ID, Scope: rec.Scope}
	o := sha256.Sum256(append([]byte("org\x00"), client[:]...))
	copy(key.Org[:], o[:])

	budget := req.MaxTokens
	if budget <= 0 {
		budget = model.DefaultTokens
	}
	tokens := promptTokens + budget*max(1, req.N)
	st, err := h.state.TakeQuota(r.Context(), key, limits, tokens, 0)
	if err != nil {
		return nil, model, stateError(err)
	}
	if st.Refused != "" {
		rec.Fault = st.Refused.Fault() // the access line's and the journal's word for it
		h.metrics.ObserveQuotaRefusal(model.ID, string(st.Refused))
		noteLimit(rec, string(st.Refused))
		if model.Gateway != nil && !st.TooLarge && rec.GatewayAttempts == 0 {
			if fb := h.quotaGateway(w, r, model, &st); fb != nil {
				if !h.limited(r, fb) {
					return nil, fb, nil
				}
				return h.takeQuota(w, r, fb, req, promptTokens) // the fallback's own quota (its policy is not asked again)
			}
		}
		h.dialect.QuotaHeaders(w.Header(), &st, time.Now())
		return nil, model, h.dialect.QuotaError(&st, model.ID, key.Org)
	}
	h.dialect.QuotaHeaders(w.Header(), &st, time.Now())
	return &quotaAdmission{key: key, limits: limits, tokens: tokens}, model, nil
}

// clientKey is the key the request carries, as the dialect's clients send it: the bearer
// token, else the dialect's own key header; "" for none (one organization for all of them).
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
	if name := h.dialect.KeyHeader(); name != "" {
		return r.Header.Get(name)
	}
	return ""
}

// settleQuota corrects the admission's token bucket to the tokens the call used: its prompt
// and what it produced (a stream cut short gives back what it did not send). rec holds the
// call's counts once its answer is written.
func (h *chatHandler) settleQuota(ctx context.Context, a *quotaAdmission, rec *observability.Record) {
	if a == nil {
		return
	}
	used := rec.PromptTokens + rec.CompletionTokens
	h.state.SettleQuota(context.WithoutCancel(ctx), a.key, a.limits, used-a.tokens)
}
