package test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// trafficKind is one kind of call the metrics test sends a known number of times.
type trafficKind struct {
	name    string
	wantErr bool // the SDK reports an error (an error answer, or a stream that ends in one)
	send    func(ctx context.Context, rep *replica) error
}

var trafficKinds = []trafficKind{
	{"json", false, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-chat", "Lorem ipsum"), false)
		return err
	}},
	{"stream", false, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-chat", "Lorem ipsum dolor"), true)
		return err
	}},
	{"tools", false, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-tools", "Plan my week.", weatherTool), false)
		return err
	}},
	{"fixture stream", false, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-chat", "hello replicas"), true)
		return err
	}},
	// Fails, retries twice and falls back to mock-chat: a 200 with simulated retries and a fallback.
	{"gateway", false, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-gateway", "Lorem ipsum"), false)
		return err
	}},
	{"unknown model", true, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("no-such-model", "Lorem ipsum"), false)
		return err
	}},
	{"server error", true, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-chat", "Lorem ipsum"), false, option.WithHeader("X-Mock-Fault", "server_error"))
		return err
	}},
	{"stream error", true, func(ctx context.Context, rep *replica) error {
		_, err := complete(ctx, rep.client, chatParams("mock-chat", "Lorem ipsum"), true, option.WithHeader("X-Mock-Fault", "stream_error;after=2"))
		return err
	}},
}

// sendRounds sends every kind once to every replica, rounds times, in round-robin order.
func sendRounds(t *testing.T, set *replicaSet, rounds int) {
	t.Helper()
	ctx := context.Background()
	for range rounds {
		for _, k := range trafficKinds {
			for range replicaCount {
				i, rep := set.pick()
				if err := k.send(ctx, rep); (err != nil) != k.wantErr {
					t.Fatalf("%s on replica %d: error %v, want an error: %v", k.name, i, err, k.wantErr)
				}
			}
		}
	}
}

// chatCountsScraped reports whether Prometheus's latest samples of every replica's chat request
// counter equal the answers its client counted, by status code; it returns a description of the
// first difference.
func chatCountsScraped(prom *prometheusServer, set *replicaSet, at time.Time) (bool, string) {
	for i, rep := range set.replicas {
		samples, err := prom.queryAt(fmt.Sprintf(`sum by (status_code) (mockgateway_http_requests_total{route="/v1/chat/completions", instance=%q})`, rep.svc.addr), at)
		if err != nil {
			return false, err.Error()
		}
		got := map[string]int{}
		for _, s := range samples {
			got[s.Metric["status_code"]] = int(s.float())
		}
		if want := rep.chat.counts(); fmt.Sprint(got) != fmt.Sprint(want) {
			return false, fmt.Sprintf("replica %d: Prometheus has %v, the client counted %v", i, got, want)
		}
	}
	return true, ""
}

func totalChat(set *replicaSet) int {
	n := 0
	for _, r := range set.replicas {
		for _, v := range r.chat.counts() {
			n += v
		}
	}
	return n
}

// checkReplicaMetrics sends a known number of calls of each kind through the balancer while
// Prometheus scrapes the three replicas, then checks the counters against the traffic, and every
// recording rule and dashboard query against the same query restricted to each replica.
func checkReplicaMetrics(t *testing.T, set *replicaSet, prom *prometheusServer) {
	waitFor(t, 30*time.Second, "Prometheus scraping all replicas", func() bool {
		s, err := prom.query(`count(up{job="mockgateway"} == 1)`)
		return err == nil && len(s) == 1 && s[0].float() == replicaCount
	})
	// One round first, scraped before the counted rounds: every series then exists with a
	// baseline, so rate() sees all of the counted traffic (a series' first sample has no rate).
	sendRounds(t, set, 1)
	var diff string
	waitFor(t, 30*time.Second, "the warm-up round in Prometheus", func() bool {
		ok, d := chatCountsScraped(prom, set, time.Now())
		diff = d
		return ok
	})
	time.Sleep(2 * time.Second)
	before := totalChat(set)
	const rounds = 4
	sendRounds(t, set, rounds)
	counted := totalChat(set) - before
	if want := rounds * len(trafficKinds) * replicaCount; counted != want {
		t.Fatalf("counted %d chat calls, sent %d", counted, want)
	}
	ok := false
	deadline := time.Now().Add(30 * time.Second)
	for !ok && time.Now().Before(deadline) {
		ok, diff = chatCountsScraped(prom, set, time.Now())
		time.Sleep(250 * time.Millisecond)
	}
	if !ok {
		t.Fatalf("per-replica chat counters in Prometheus never matched the traffic: %s", diff)
	}
	// Rules are evaluated every second; let them see the last scrape.
	time.Sleep(3 * time.Second)
	at := time.Now().Add(-time.Second)

	t.Run("counters sum to the traffic", func(t *testing.T) {
		all := 0
		for _, r := range set.replicas {
			for _, v := range r.chat.counts() {
				all += v
			}
		}
		s, err := prom.queryAt(`sum(mockgateway_http_requests_total{route="/v1/chat/completions"})`, at)
		if err != nil || len(s) != 1 || int(s[0].float()) != all {
			t.Errorf("sum over replicas of chat requests: %v %v, sent %d", s, err, all)
		}
		aborted := (rounds + 1) * replicaCount // one stream error per replica per round
		s, err = prom.queryAt(`sum(mockgateway_stream_events_total{event="aborted"})`, at)
		if err != nil || len(s) != 1 || int(s[0].float()) != aborted {
			t.Errorf("sum over replicas of aborted streams: %v %v, sent %d", s, err, aborted)
		}
		// The request rate rule over 5 minutes covers the whole test: its increase is at least
		// the counted rounds (all after the baseline scrape) and at most everything sent, plus
		// rate()'s extrapolation past the first and last samples.
		s, err = prom.queryAt(`route_method:mockgateway_http_requests:rate5m{route="/v1/chat/completions", method="POST"}`, at)
		if err != nil || len(s) != 1 {
			t.Fatalf("route_method:mockgateway_http_requests:rate5m: %v %v", s, err)
		}
		if inc := s[0].float() * 300; inc < float64(counted)*0.99 || inc > float64(all)*1.2+3 {
			t.Errorf("route_method:mockgateway_http_requests:rate5m × 5m = %.1f; the counted rounds were %d calls, all calls %d", inc, counted, all)
		}
	})

	var instances []string
	for _, r := range set.replicas {
		instances = append(instances, r.svc.addr)
	}
	t.Run("recording rules aggregate the replicas", func(t *testing.T) {
		for name, expr := range recordingRules(t) {
			// The rule's own last evaluation, and the expression at that instant.
			var recorded []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			}
			if err := prom.apiAt(name+"[10s]", at, &recorded); err != nil || len(recorded) == 0 {
				t.Errorf("%s: nothing recorded (%v)", name, err)
				continue
			}
			last := recorded[0].Values[len(recorded[0].Values)-1][0].(float64)
			evalAt := time.UnixMilli(int64(math.Round(last * 1000)))
			rec := map[string]float64{}
			for _, r := range recorded {
				if _, ok := r.Metric["instance"]; ok {
					t.Errorf("%s keeps the instance label: %v", name, r.Metric)
				}
				v := r.Values[len(r.Values)-1]
				f, _ := strconv.ParseFloat(v[1].(string), 64)
				m := map[string]string{}
				for k, val := range r.Metric {
					if k != "__name__" {
						m[k] = val
					}
				}
				rec[labelKey(m)] = f
			}
			whole := checkAggregation(t, prom, "rule "+name, expr, false, instances, evalAt)
			for k, v := range whole {
				if r, ok := rec[k]; !ok || !near(r, v, 0.05) {
					t.Errorf("%s{%s}: recorded %v, the expression gives %v", name, k, r, v)
				}
			}
		}
	})

	t.Run("dashboard queries aggregate the replicas", func(t *testing.T) {
		for _, e := range dashboardExprs(t) {
			q := substituteGrafanaVars(e.expr, "1m")
			if e.panel == "variable" {
				// A label_values selector: one series per replica is what it should list.
				s, err := prom.queryAt(q, at)
				if err != nil || !hasData(s) {
					t.Errorf("%s: %v no data", e.where, err)
				}
				continue
			}
			perInstance := strings.HasPrefix(e.where, perProcessDashboard+":")
			whole := checkAggregation(t, prom, e.where, q, perInstance, instances, at)
			if len(whole) == 0 && emptyReason(e) == "" {
				t.Errorf("%s: no data\n%s", e.where, q)
			}
		}
	})
}

// perProcessDashboard is the one dashboard whose panels show each replica on its own: memory,
// CPU, goroutines and file descriptors are a process's, and their sum would hide the one replica
// that leaks. Every other panel (traffic, errors, latency, streams, simulation) must aggregate.
const perProcessDashboard = "runtime.json"

// checkAggregation evaluates expr at one instant, and again restricted to each instance (every
// selector given instance="…"). A sum must equal the sum of the restricted results, label set
// by label set: nothing counted twice, no replica missing. Anything else (a ratio of sums, a
// quantile of merged buckets, max, min) must lie between the replicas' own values, as a mixture
// of the replicas does. Only where perInstance is set may the result keep the instance label,
// grouped by instance on purpose, and then it must show every replica. It returns the whole
// result, label key -> value, NaN left out.
func checkAggregation(t *testing.T, prom *prometheusServer, where, expr string, perInstance bool, instances []string, at time.Time) map[string]float64 {
	t.Helper()
	parsed, err := promqlParser.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return nil
	}
	whole, err := resultAt(prom, expr, at)
	if err != nil {
		t.Errorf("%s: %v\n%s", where, err, expr)
		return nil
	}
	parts := make([]map[string]float64, len(instances))
	for i, inst := range instances {
		if parts[i], err = resultAt(prom, restrictToInstance(t, parsed, inst), at); err != nil {
			t.Errorf("%s restricted to %s: %v", where, inst, err)
			return nil
		}
	}

	byInstance := groupsByInstance(parsed)
	seen := map[string]bool{}
	for k := range whole {
		if inst := labelsOf(k)["instance"]; inst != "" {
			if !perInstance || !byInstance {
				t.Errorf("%s: the result keeps instance %s: it splits by replica what it should aggregate", where, inst)
			}
			seen[inst] = true
		}
	}
	if perInstance && byInstance && len(whole) > 0 && len(seen) != len(instances) {
		t.Errorf("%s: grouped by instance, but shows %d of %d replicas", where, len(seen), len(instances))
	}

	agg, isAgg := unparen(parsed).(*parser.AggregateExpr)
	additive := isAgg && agg.Op == parser.SUM
	for k, v := range whole {
		var sum float64
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for _, p := range parts {
			pv, ok := p[k]
			if !ok {
				continue
			}
			sum += pv
			lo, hi, n = math.Min(lo, pv), math.Max(hi, pv), n+1
		}
		switch {
		case additive && !near(v, sum, 1e-6):
			t.Errorf("%s{%s}: %v over all replicas, but the replicas sum to %v\n%s", where, k, v, sum, expr)
		case !additive && n == 0:
			t.Errorf("%s{%s}: %v over all replicas, but no replica has a value\n%s", where, k, v, expr)
		case !additive && (v < lo-1e-9*math.Abs(lo) || v > hi+1e-9*math.Abs(hi)):
			t.Errorf("%s{%s}: %v over all replicas, outside the replicas' own values [%v, %v]\n%s", where, k, v, lo, hi, expr)
		}
	}
	if additive {
		for i, p := range parts {
			for k := range p {
				if _, ok := whole[k]; !ok {
					t.Errorf("%s{%s}: replica %s has it, the whole result does not", where, k, instances[i])
				}
			}
		}
	}
	return whole
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// groupsByInstance reports whether the outermost aggregation keeps the instance label.
func groupsByInstance(e parser.Expr) bool {
	agg, ok := unparen(e).(*parser.AggregateExpr)
	return ok && !agg.Without && strings.Contains(","+strings.Join(agg.Grouping, ",")+",", ",instance,")
}

// restrictToInstance is expr with instance="inst" added to every selector.
func restrictToInstance(t *testing.T, parsed parser.Expr, inst string) string {
	t.Helper()
	// Parse again: the rewrite changes the tree in place.
	e, err := promqlParser.ParseExpr(parsed.String())
	if err != nil {
		t.Fatal(err)
	}
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			vs.LabelMatchers = append(vs.LabelMatchers, labels.MustNewMatcher(labels.MatchEqual, "instance", inst))
		}
		return nil
	})
	return e.String()
}

// resultAt runs an instant query at a given time: label key -> value, NaN left out.
func resultAt(prom *prometheusServer, q string, at time.Time) (map[string]float64, error) {
	samples, err := prom.queryAt(q, at)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range samples {
		if f := s.float(); !math.IsNaN(f) {
			out[labelKey(s.Metric)] = f
		}
	}
	return out, nil
}

// labelKey is a label set as a stable string: a=1,b=2.
func labelKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

func labelsOf(key string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(key, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// near reports whether a and b agree to a relative tolerance.
func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// queryAt is an instant query evaluated at a given time.
func (p *prometheusServer) queryAt(q string, at time.Time) ([]sample, error) {
	var data struct {
		ResultType string   `json:"resultType"`
		Result     []sample `json:"result"`
	}
	params := url.Values{"query": {q}, "time": {promTime(at)}}
	if err := p.api("/api/v1/query", params, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: result type %s, want vector", q, data.ResultType)
	}
	return data.Result, nil
}

// apiAt runs a query returning a range vector (a matrix) at a given time.
func (p *prometheusServer) apiAt(q string, at time.Time, into any) error {
	var data struct {
		Result json.RawMessage `json:"result"`
	}
	if err := p.api("/api/v1/query", url.Values{"query": {q}, "time": {promTime(at)}}, &data); err != nil {
		return err
	}
	return json.Unmarshal(data.Result, into)
}

func promTime(at time.Time) string {
	return strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)
}
