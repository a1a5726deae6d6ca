package test

import (
	"bufio"
	"context"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// liveSampleNames scrapes a running service's /metrics and returns every sample name in it
// (histograms appear as _bucket, _count and _sum).
func liveSampleNames(t *testing.T, url string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, body, err := httpGet(ctx, url+"/metrics", map[string]string{"Accept": "text/plain; version=0.0.4"})
	if err != nil || status != 200 {
		t.Fatalf("GET /metrics: %d %v", status, err)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// TestDashboardsNameOnlyLiveMetrics runs the real service, drives every path through it with
// the real traffic generator (labelled series only appear once something happened), then
// requires every metric a dashboard reads to be in the service's live /metrics.
func TestDashboardsNameOnlyLiveMetrics(t *testing.T) {
	t.Parallel()
	svc := startService(t, []string{"OTEL_SDK_DISABLED=true"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gen := exec.CommandContext(ctx, serviceBinary(t), "traffic", "--target", svc.url, "--rate", "60",
		"--duration", "4s", "--seed", "11", "--concurrency", "32", "--report-interval", "1h")
	gen.Env = []string{}
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("mockgateway traffic: %v\n%s", err, tail(string(out), 3000))
	}
	requireSimulation(t, svc.url)
	live := liveSampleNames(t, svc.url)

	missing := map[string][]string{}
	for _, e := range dashboardExprs(t) {
		expr, err := promqlParser.ParseExpr(substituteGrafanaVars(e.expr, "1m"))
		if err != nil {
			continue // reported by TestDashboardsStructure
		}
		for _, name := range selectorNames(t, e.where, expr) {
			if live[name] || promSynthetic[name] != "" {
				continue
			}
			missing[name] = append(missing[name], e.where)
		}
	}
	// The rules read only live metrics too (or series other rules record).
	records := recordingRules(t)
	for name, ruleExpr := range allRuleExprs(t) {
		expr, err := promqlParser.ParseExpr(ruleExpr)
		if err != nil {
			continue // reported by TestRulesParseWithPrometheus3
		}
		for _, m := range selectorNames(t, name, expr) {
			if _, ok := records[m]; !ok && !live[m] && promSynthetic[m] == "" {
				missing[m] = append(missing[m], "rule "+name)
			}
		}
	}

	var names []string
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Errorf("%s is not in the service's /metrics, but is read by:\n  %s", n, strings.Join(missing[n], "\n  "))
	}
}
