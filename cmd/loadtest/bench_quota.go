package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mockgateway/internal/chatclient"
)

// The quota kinds: the chat JSON and stream requests against the same mockgateway
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

// quotaCost is a quota or capacity kind's result beside the plain kind of the same rounds.
type quotaCost struct {
	// Kind is json or stream: the plain kind it is compared with; Limit is quota or capacity.
	Kind  string `json:"kind"`
	Limit string `json:"limit"`
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

// limitedKinds are the quota and capacity kinds' figures beside the plain kinds'.
func limitedKinds(l *loadResult) []struct {
	kind, limit, what string
	quota, plain      *loadFigures
} {
	return []struct {
		kind, limit, what string
		quota, plain      *loadFigures
	}{
		{"json", "quota", "JSON chat requests/s with a quota** (`x-mock-quota`, never reached", l.QuotaJSON, l.JSON["mockgateway"]},
		{"stream", "quota", "16-token streams/s with a quota** (`x-mock-quota`, never reached", l.QuotaStream, l.Stream["mockgateway"]},
		{"json", "capacity", fmt.Sprintf("JSON chat requests/s with a capacity** (%d, never filled; another mockgateway", benchCapacity), l.CapacityJSON, l.JSON["mockgateway"]},
		{"stream", "capacity", fmt.Sprintf("16-token streams/s with a capacity** (%d, never filled; another mockgateway", benchCapacity), l.CapacityStream, l.Stream["mockgateway"]},
	}
}

// quotaCosts are the quota and capacity kinds' figures against the plain kinds' of the same
// rounds.
func quotaCosts(res *loadResult) []quotaCost {
	var out []quotaCost
	for _, c := range limitedKinds(res) {
		if c.quota == nil || c.plain == nil || c.quota.RPS <= 0 || c.plain.RPS <= 0 {
			continue
		}
		qc := quotaCost{Kind: c.kind, Limit: c.limit, RPSRatio: c.quota.RPS / c.plain.RPS}
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

// writeQuotaRows adds the quota and capacity kinds' rows to the table: each against the plain
// kind of the same rounds (no limits).
func writeQuotaRows(row func(fig, a, b, rat, want, ok string), l *loadResult) {
	for _, c := range limitedKinds(l) {
		if c.quota == nil || c.plain == nil || len(c.quota.Rounds) == 0 {
			continue
		}
		row("**"+c.what+"; vs no limits, same rounds)", num(c.quota.RPS), num(c.plain.RPS), roundRatios(c.quota, c.plain), "", "")
		row(fmt.Sprintf("**server CPU per request with a %s** (µs; ratio: no limits ÷ %s)", c.limit, c.limit), num(c.quota.CPUus), num(c.plain.CPUus), ratio(c.plain.CPUus, c.quota.CPUus), "", "")
		row(fmt.Sprintf("latency p50 / p99 with a %s (ms, vs no limits)", c.limit), num(c.quota.P50ms)+" / "+num(c.quota.P99ms), num(c.plain.P50ms)+" / "+num(c.plain.P99ms), "", "", "")
		if c.limit == "quota" {
			row("bytes per response with a quota (headers included: its rate-limit headers)", num(c.quota.RespB), num(c.plain.RespB), "", "", "")
		}
		row(fmt.Sprintf("wrk errors with a %s (all rounds)", c.limit), strconv.FormatInt(c.quota.Errors, 10), strconv.FormatInt(c.plain.Errors, 10), "", "", "")
	}
	if l.QuotaJSON != nil || l.QuotaStream != nil {
		row("quota refusals (mockgateway_quota_refusals_total, whole load)", num(l.QuotaRefusals), "", "", "", "")
	}
}

// The capacity kinds: the chat JSON and stream requests against a third mockgateway, started
// as the first (the same fixtures, full telemetry) but with a catalog in which mock-echo, as
// built in, has a capacity no load fills: every request takes a place in the model's load gate
// and gives it back, none waits or is refused. The catalog holds mock-echo alone, the only
// model the requests name, so the answers are the plain kinds' bytes.
const (
	capacityKindSuffix = "-capacity"
	benchCapacity      = 1024 // far beyond the load's connections
	modelRunning       = "mockgateway_model_running"
)

// capacityKind reports whether a load kind runs against the capacity's mockgateway.
func capacityKind(k string) bool { return strings.HasSuffix(k, capacityKindSuffix) }

// capacityCatalog is the capacity's mockgateway's catalog: mock-echo as built in, with a gate.
func capacityCatalog() string {
	return fmt.Sprintf("models:\n  - id: mock-echo\n    kind: mock\n    behavior: echo\n    capabilities: {streaming: true, tools: false}\n    capacity: %d\n", benchCapacity)
}

// startCapacity writes the catalog and starts the capacity's mockgateway with extra flags, then
// checks that the gate is there (its gauge is exported) and that it answers the plain bytes.
func startCapacity(ctx context.Context, ws *workspace, plain probeResult, extra ...string) (*server, error) {
	cat := filepath.Join(ws.dir, "capacity-catalog.yaml")
	if err := os.WriteFile(cat, []byte(capacityCatalog()), 0o644); err != nil {
		return nil, err
	}
	s, err := ws.startMockgateway(ctx, "capacity", append(extra, "--catalog", cat)...)
	if err != nil {
		return nil, err
	}
	s.name = "mg+capacity"
	p, err := probe(ctx, s)
	if err == nil && (p.JSONBytes != plain.JSONBytes || p.Stream.Bytes != plain.Stream.Bytes || p.Stream.Chunks != plain.Stream.Chunks) {
		err = fmt.Errorf("with a capacity the answers differ: JSON %d B, stream %d B in %d chunks; without, %d B, %d B in %d chunks",
			p.JSONBytes, p.Stream.Bytes, p.Stream.Chunks, plain.JSONBytes, plain.Stream.Bytes, plain.Stream.Chunks)
	}
	if err == nil {
		client := &http.Client{Timeout: 10 * time.Second}
		defer client.CloseIdleConnections()
		var m map[string]float64
		if m, err = scrape(ctx, client, s.url("/metrics"), modelRunning); err == nil {
			if _, ok := m[modelRunning]; !ok {
				err = fmt.Errorf("the capacity's mockgateway exports no %s: mock-echo has no gate", modelRunning)
			}
		}
	}
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("the capacity's mockgateway: %w", err)
	}
	return s, nil
}
