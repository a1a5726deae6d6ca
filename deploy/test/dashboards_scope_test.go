package test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// jobVariable is the query of the job variable every dashboard has: the jobs that scrape a
// mockgateway. Every other query of the dashboard filters on it (job=~"$job"), so a Prometheus
// that scrapes other services with the same metric names (every Go service has go_* and
// process_*, another gateway may have the same http metrics) does not mix them in.
const jobVariable = "label_values(mockgateway_build_info, job)"

// hasJobFilter reports whether a selector keeps to the job variable's selection.
func hasJobFilter(vs *parser.VectorSelector) bool {
	for _, m := range vs.LabelMatchers {
		if m.Name == "job" && m.Type == labels.MatchRegexp && m.Value == "$job" {
			return true
		}
	}
	return false
}

// TestDashboardsFilterOnJob: every dashboard has the job variable, ahead of the variables whose
// queries use it, and every selector of every panel and variable query (but the job variable's
// own) filters on it.
func TestDashboardsFilterOnJob(t *testing.T) {
	t.Parallel()
	for _, d := range loadDashboards(t) {
		jobAt := -1
		for i, v := range d.Templating.List {
			if v.Name != "job" {
				continue
			}
			jobAt = i
			// No allValue: All is then every job the query lists, (job1|job2). An allValue of .*
			// would make All, the default, match every job in the Prometheus: in a shared one,
			// the replicas up would count every target, Uptime take another service's start time
			// and the runtime panels mix in every Go service's go_* and process_*.
			if v.Type != "query" || v.Definition != jobVariable || !v.IncludeAll || !v.Multi || v.AllValue != "" {
				t.Errorf("%s: variable job: want a multi-value query variable %s with All and no allValue (All is then the jobs it lists), got type %q, query %q, multi %v, includeAll %v, allValue %q", d.file, jobVariable, v.Type, v.Definition, v.Multi, v.IncludeAll, v.AllValue)
			}
		}
		if jobAt < 0 {
			t.Errorf("%s: no job variable", d.file)
			continue
		}
		for i, v := range d.Templating.List[:jobAt] {
			if strings.Contains(v.Definition, "$job") {
				t.Errorf("%s: variable %s (#%d) uses $job, which is defined after it (#%d)", d.file, v.Name, i, jobAt)
			}
		}
	}

	checked := 0
	for _, e := range dashboardExprs(t) {
		if e.panel == "variable" && strings.HasSuffix(e.owner, ": variable job") {
			continue // lists the jobs to choose from
		}
		expr, err := promqlParser.ParseExpr(interpolate(e.expr, "1m", keepLabelVars))
		if err != nil {
			t.Errorf("%s: PromQL does not parse: %v\n%s", e.where, err, e.expr)
			continue
		}
		parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				checked++
				if !hasJobFilter(vs) {
					t.Errorf(`%s: %s does not filter on the job variable: add job=~"$job"`, e.where, vs)
				}
			}
			return nil
		})
	}
	if checked == 0 {
		t.Fatal("no selectors found in the dashboards")
	}
}

// uptimeTargets are the queries of every Uptime panel. The oldest replica's uptime says how long
// the service has run; the youngest's (max of the start times) would read as a fresh restart
// whenever one replica of many is replaced or added. The number of replicas up beside it tells
// one process from several.
var uptimeTargets = []struct{ refID, expr string }{
	{"A", `time() - min(process_start_time_seconds{job=~"$job"})`},
	{"B", `sum(up{job=~"$job"})`},
}

// TestDashboardsUptime: the Uptime panels of the overview and runtime dashboards show the oldest
// replica's uptime and the replicas up, the count in its own unit and both values named; and
// no other panel reads start times another way.
func TestDashboardsUptime(t *testing.T) {
	t.Parallel()
	canonical := func(where, expr string) string {
		e, err := promqlParser.ParseExpr(interpolate(expr, "1m", keepLabelVars))
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return expr
		}
		return e.String()
	}
	want := map[string]string{}
	for _, u := range uptimeTargets {
		want[u.refID] = canonical("uptimeTargets", u.expr)
	}

	uptimePanels := map[string]bool{}
	for _, d := range loadDashboards(t) {
		for _, p := range allPanels(d.Panels) {
			if p.Title != "Uptime" {
				continue
			}
			where := d.file + ": " + p.Title
			uptimePanels[where] = true
			got := map[string]string{}
			for _, tg := range p.Targets {
				got[tg.RefID] = canonical(where, tg.Expr)
				if tg.LegendFormat == "" {
					t.Errorf("%s / %s: no legendFormat: the stat panel would show two unnamed numbers", where, tg.RefID)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: queries\n  %v\nwant\n  %v", where, got, want)
			}
			if p.Options.TextMode != "value_and_name" {
				t.Errorf("%s: textMode %q: the two values need their names beside them (value_and_name)", where, p.Options.TextMode)
			}
			// The panel's unit is seconds; the replica count needs its own.
			countUnit := p.FieldConfig.Defaults.Unit
			for _, o := range p.FieldConfig.Overrides {
				if o.Matcher.ID == "byFrameRefID" && o.Matcher.Options == "B" {
					for _, prop := range o.Properties {
						if prop.ID == "unit" {
							countUnit = fmt.Sprint(prop.Value)
						}
					}
				}
			}
			if countUnit != "none" && countUnit != "short" {
				t.Errorf("%s: the replica count (B) is shown in unit %q; override it with none", where, countUnit)
			}
		}
	}
	for _, f := range []string{"overview.json", "runtime.json"} {
		if !uptimePanels[f+": Uptime"] {
			t.Errorf("%s: no Uptime panel", f)
		}
	}
	for _, e := range dashboardExprs(t) {
		if strings.Contains(e.expr, "process_start_time_seconds") && !uptimePanels[e.owner] {
			t.Errorf("%s reads process_start_time_seconds outside an Uptime panel: %s", e.where, e.expr)
		}
	}
}

// routeMetric reports whether name is one of the per-request series labelled by route: they
// count Prometheus's scrapes of /metrics and health probes of /health like any other request.
func routeMetric(name string) bool {
	return name == "mockgateway_http_requests_total" || strings.HasPrefix(name, "mockgateway_http_request_duration_seconds")
}

// probeRoutes are the routes of scrapes and probes: requests, but not API traffic.
var probeRoutes = []string{"/metrics", "/health"}

// scrapePanels are the panels that show scrapes and probes on purpose, and say so in their
// descriptions; every other query on the request series leaves them out, or a Prometheus
// scraping every 5 s (and a probe beside it) would inflate an idle service's request rate,
// dilute its error ratio and pull its latency quantiles towards a scrape's.
var scrapePanels = map[string]bool{
	"overview.json: Scrapes and probes": true,
}

// routeSelected reports whether a selector's route matchers let route through.
func routeSelected(vs *parser.VectorSelector, route string) bool {
	for _, m := range vs.LabelMatchers {
		if m.Name == "route" && !m.Matches(route) {
			return false
		}
	}
	return true
}

// TestDashboardsLeaveOutScrapesAndProbes: as a dashboard opens (every variable at its default),
// no query on the request series counts /metrics or /health, but for the panels that show them on
// purpose, which read nothing else.
func TestDashboardsLeaveOutScrapesAndProbes(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, e := range dashboardExprs(t) {
		q := interpolate(e.expr, "1m", func(name, _ string) string { return e.defaults[name] })
		expr, err := promqlParser.ParseExpr(q)
		if err != nil {
			t.Errorf("%s: PromQL does not parse: %v\n%s", e.where, err, q)
			continue
		}
		onPurpose := scrapePanels[e.owner]
		parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
			vs, ok := node.(*parser.VectorSelector)
			if !ok || !routeMetric(vs.Name) {
				return nil
			}
			for _, r := range probeRoutes {
				switch reads := routeSelected(vs, r); {
				case reads && !onPurpose:
					t.Errorf(`%s: %s counts %s, which is not API traffic: add route!~"/metrics|/health"`, e.where, vs, r)
				case !reads && onPurpose:
					t.Errorf("%s: %s leaves out %s, which this panel is for", e.where, vs, r)
				}
			}
			if onPurpose && routeSelected(vs, "/v1/chat/completions") {
				t.Errorf("%s: %s mixes API traffic into the scrapes and probes", e.where, vs)
			}
			return nil
		})
		if onPurpose {
			seen[e.owner] = true
			for _, r := range probeRoutes {
				if !strings.Contains(e.description, r) {
					t.Errorf("%s: the description does not say the panel shows %s", e.where, r)
				}
			}
		}
	}
	for p := range scrapePanels {
		if !seen[p] {
			t.Errorf("no panel %s", p)
		}
	}
}

// TestDashboardLinksKeepTheSelection: the links between the dashboards carry the time range and
// the variables, so moving from one to another keeps the job (and datasource) chosen.
func TestDashboardLinksKeepTheSelection(t *testing.T) {
	for _, d := range loadDashboards(t) {
		found := false
		for _, l := range d.Links {
			if l.Type != "dashboards" || !slices.Contains(l.Tags, "mockgateway") {
				continue
			}
			found = true
			if !l.IncludeVars || !l.KeepTime {
				t.Errorf("%s: the link to the mockgateway dashboards drops the selection (includeVars %v, keepTime %v)", d.file, l.IncludeVars, l.KeepTime)
			}
		}
		if !found {
			t.Errorf("%s: no link to the other mockgateway dashboards", d.file)
		}
	}
}
