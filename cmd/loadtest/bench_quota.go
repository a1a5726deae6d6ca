package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mockgateway/internal/chatclient"
)

// The quota kinds (issue 41): the chat JSON and stream requests against the same mockgateway
// as the plain kinds, in the same rounds, but with an x-mock-quota header whose limits no load
// reaches. Every request then draws on its buckets (requests per window, tokens per window,
// requests per day) and settles its tokens when its answer ends, and is never refused: the
// ratio to the plain kinds (which name no limits) is what counting a quota costs a request.
// All requests carry no key, so they share one organization's buckets, as one client's would.
const (
	quotaKindSuffix = "-quota"
	benchQuotaLimit = "1000000000000" // 10^12: within the header's bound (2^40), far beyond any load
	benchQuota      = "rpm=" + benchQuotaLimit + ";tpm=" + benchQuotaLimit + ";rpd=" + benchQuotaLimit
	quotaHeader     = "X-Mock-Quota"
	quotaRefusals   = "mockgateway_quota_refusals_total"
)

// quotaKind reports whether a load kind is one of the quota kinds.
func quotaKind(k string) bool { return strings.HasSuffix(k, quotaKindSuffix) }

// quotaCost is the quota kinds' result beside the plain kinds of the same rounds.
type quotaCost struct {
	// Kind is json or stream: the plain kind the quota kind is compared with.
	Kind string `json:"kind"`
	// RPSRatio is requests/s with the quota ÷ without (medians); RoundRatios the same per round.
	RPSRatio    float64   `json:"rps_limits_over_none"`
	RoundRatios []float64 `json:"round_rps_limits_over_none,omitempty"`
	// CPURatio is mockgateway's CPU per request without the quota ÷ with it, so that both
	// ratios read "× of no limits" (1 is free, below 1 is the cost).
	CPURatio float64 `json:"cpu_none_over_limits"`
}

// probeQuota checks, before the load, that a request with the bench's quota is answered with
// the plain request's bytes and carries the quota's headers, one request below the limit: it
// drew on the buckets. (So large a bucket refills faster than requests come, so the remaining
// count does not go lower.)
func probeQuota(ctx context.Context, s *server, plain probeResult) error {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	limit, _ := strconv.ParseInt(benchQuotaLimit, 10, 64)
	for i, body := range []string{jsonRequest, streamRequest} {
		resp, b, err := chatclient.Request{URL: s.url(chatclient.ChatPath), Body: []byte(body), Header: map[string]string{quotaHeader: benchQuota}}.Do(ctx, client, maxAnswer)
		if err != nil {
			return fmt.Errorf("quota probe: %v", err)
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("quota probe: status %d: %.200s", resp.StatusCode, b)
		}
		want := plain.JSONBytes
		if i == 1 {
			want = plain.Stream.Bytes
		}
		if len(b) != want {
			return fmt.Errorf("quota probe: %d bytes, without the quota %d", len(b), want)
		}
		if l := resp.Header.Get("X-Ratelimit-Limit-Requests"); l != benchQuotaLimit {
			return fmt.Errorf("quota probe: x-ratelimit-limit-requests %q, want %s: the quota is not drawn", l, benchQuotaLimit)
		}
		for _, h := range []string{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Remaining-Tokens"} {
			if r, err := strconv.ParseInt(resp.Header.Get(h), 10, 64); err != nil || r >= limit {
				return fmt.Errorf("quota probe: %s %q: the quota is not drawn", strings.ToLower(h), resp.Header.Get(h))
			}
		}
	}
	return nil
}

// finishQuota computes the quota kinds' ratios and reads the refusals mockgateway counted over
// the load (any is a problem: the limits are meant never to be reached).
func finishQuota(ctx context.Context, s *server, res *loadResult) {
	res.QuotaCost = quotaCosts(res)
	if res.QuotaJSON == nil && res.QuotaStream == nil {
		return
	}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	m, err := scrape(ctx, client, s.url("/metrics"), quotaRefusals)
	if err != nil {
		res.Notes = append(res.Notes, "the quota's refusals: "+err.Error())
		return
	}
	res.QuotaRefusals = m[quotaRefusals]
	if res.QuotaRefusals > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the quota kinds were refused %s times: their limits were reached, and their figures are not those of an admitted request", num(res.QuotaRefusals)))
	}
}

// quotaCosts are the quota kinds' figures against the plain kinds' of the same rounds.
func quotaCosts(res *loadResult) []quotaCost {
	var out []quotaCost
	for _, c := range []struct {
		kind         string
		quota, plain *loadFigures
	}{{"json", res.QuotaJSON, res.JSON["mockgateway"]}, {"stream", res.QuotaStream, res.Stream["mockgateway"]}} {
		if c.quota == nil || c.plain == nil || c.quota.RPS <= 0 || c.plain.RPS <= 0 {
			continue
		}
		qc := quotaCost{Kind: c.kind, RPSRatio: c.quota.RPS / c.plain.RPS}
		if c.quota.CPUus > 0 {
			qc.CPURatio = c.plain.CPUus / c.quota.CPUus
		}
		if len(c.quota.Rounds) == len(c.plain.Rounds) {
			for i := range c.quota.Rounds {
				if p := c.plain.Rounds[i].RPS(); p > 0 {
					qc.RoundRatios = append(qc.RoundRatios, c.quota.Rounds[i].RPS()/p)
				}
			}
		}
		out = append(out, qc)
	}
	return out
}

// writeQuotaRows adds the quota kinds' rows to the table: each against the plain kind of the
// same rounds on the same mockgateway (no limits).
func writeQuotaRows(row func(fig, a, b, rat, want, ok string), l *loadResult) {
	for _, c := range []struct {
		what         string
		quota, plain *loadFigures
	}{{"JSON chat requests/s", l.QuotaJSON, l.JSON["mockgateway"]}, {"16-token streams/s", l.QuotaStream, l.Stream["mockgateway"]}} {
		if c.quota == nil || c.plain == nil || len(c.quota.Rounds) == 0 {
			continue
		}
		row(fmt.Sprintf("**%s with a quota** (`x-mock-quota`, never reached; vs no limits, same rounds)", c.what), num(c.quota.RPS), num(c.plain.RPS), roundRatios(c.quota, c.plain), "", "")
		row("**server CPU per request with a quota** (µs; ratio: no limits ÷ quota)", num(c.quota.CPUus), num(c.plain.CPUus), ratio(c.plain.CPUus, c.quota.CPUus), "", "")
		row("latency p50 / p99 with a quota (ms, vs no limits)", num(c.quota.P50ms)+" / "+num(c.quota.P99ms), num(c.plain.P50ms)+" / "+num(c.plain.P99ms), "", "", "")
		row("bytes per response with a quota (headers included: its rate-limit headers)", num(c.quota.RespB), num(c.plain.RespB), "", "", "")
		row("wrk errors with a quota (all rounds)", strconv.FormatInt(c.quota.Errors, 10), strconv.FormatInt(c.plain.Errors, 10), "", "", "")
	}
	if l.QuotaJSON != nil || l.QuotaStream != nil {
		row("quota refusals (mockgateway_quota_refusals_total, whole load)", num(l.QuotaRefusals), "", "", "", "")
	}
}
