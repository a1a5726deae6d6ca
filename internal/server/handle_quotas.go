package server

import (
	"net/http"

	"mockgateway/internal/quota"
	"mockgateway/internal/state"
)

// defaultQuotasLimit is how many buckets GET /_mock/quotas lists without a limit, and
// maxQuotasLimit the most it lists: a scope of a load test can hold a bucket per client key.
const (
	defaultQuotasLimit = 100
	maxQuotasLimit     = 1000
)

// quotaList is GET /_mock/quotas's answer: a scope's simulated quota buckets, in the envelope
// of the control surface's other lists.
type quotaList struct {
	Object string      `json:"object"` // "list"
	Scope  string      `json:"scope"`
	Data   []quotaInfo `json:"data"`
}

// quotaInfo is one model's buckets for one organization in a scope. Its strings are a catalog
// id, the caller's own scope and the organization derived from a client key's hash (as the
// provider's 429 names it): never the key, and nothing else a client wrote.
type quotaInfo struct {
	Model        string       `json:"model"`
	Scope        string       `json:"scope"`
	Org          string       `json:"org"`
	Limits       quotaLimits  `json:"limits"`
	Requests     *quotaBucket `json:"requests,omitempty"`
	Tokens       *quotaBucket `json:"tokens,omitempty"`
	Daily        *quotaBucket `json:"daily,omitempty"`
	InputTokens  *quotaBucket `json:"input_tokens,omitempty"`
	OutputTokens *quotaBucket `json:"output_tokens,omitempty"`
}

// quotaLimits are the limits the buckets follow, in the catalog's and x-mock-quota's names.
type quotaLimits struct {
	RPM      int   `json:"rpm,omitempty"`
	TPM      int   `json:"tpm,omitempty"`
	RPD      int   `json:"rpd,omitempty"`
	ITPM     int   `json:"itpm,omitempty"`
	OTPM     int   `json:"otpm,omitempty"`
	WindowMS int64 `json:"window_ms"`
}

// quotaBucket is one bucket now: its size, what it holds, and how long until it is full.
type quotaBucket struct {
	Limit     int   `json:"limit"`
	Remaining int   `json:"remaining"`
	ResetMS   int64 `json:"reset_ms"`
}

// bucketOf is b as the list shows it; nil for a limit the quota does not have.
func bucketOf(b quota.Bucket) *quotaBucket {
	if b.Limit == 0 {
		return nil
	}
	return &quotaBucket{Limit: b.Limit, Remaining: b.Remaining, ResetMS: b.Reset.Milliseconds()}
}

// handleQuotas serves GET /_mock/quotas: the simulated quota buckets of the scope (?scope=,
// else x-mock-scope), per model and organization, each with its limit, what remains and when it
// is full again — what the console's quota panel shows.
func handleQuotas(store state.Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope, ok := scopeParam(w, r)
		if !ok {
			return
		}
		limit, ok := limitParam(w, r, defaultQuotasLimit, maxQuotasLimit)
		if !ok {
			return
		}
		views, err := store.ListQuotas(r.Context(), scope, limit)
		if err != nil {
			writeError(w, r, stateError(err))
			return
		}
		list := quotaList{Object: "list", Scope: scope, Data: make([]quotaInfo, 0, min(len(views), limit))}
		for _, v := range views[:min(len(views), limit)] {
			list.Data = append(list.Data, quotaInfo{
				Model: v.Model, Scope: v.Scope, Org: v.Org,
				Limits: quotaLimits{RPM: v.Limits.Requests, TPM: v.Limits.Tokens, RPD: v.Limits.Daily, ITPM: v.Limits.InputTokens, OTPM: v.Limits.OutputTokens,
					WindowMS: v.Limits.Period().Milliseconds()},
				Requests: bucketOf(v.Requests), Tokens: bucketOf(v.Tokens), Daily: bucketOf(v.Daily),
				InputTokens: bucketOf(v.InputTokens), OutputTokens: bucketOf(v.OutputTokens),
			})
		}
		encodeJSON(w, http.StatusOK, list)
	})
}
