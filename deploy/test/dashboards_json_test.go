package test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// isCounterLike reports whether a series only goes up, so must be read through rate().
func isCounterLike(name string) bool {
	for _, s := range []string{"_total", "_bucket", "_count", "_sum"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// TestDashboardsStructure checks what Grafana and the community dashboard linter expect, and
// what the stack's README promises: stable uids, a datasource variable every query uses, units
// and descriptions on every panel, $__rate_interval in rate(), counters only through rate(),
// exemplars on every latency query, and PromQL that the Prometheus 3.13 parser accepts.
func TestDashboardsStructure(t *testing.T) {
	t.Parallel()
	uids := map[string]string{}
	uidPattern := regexp.MustCompile(`^mockgateway-[a-z-]+$`)
	for _, d := range loadDashboards(t) {
		if !uidPattern.MatchString(d.UID) {
			t.Errorf("%s: uid %q is not a stable mockgateway-… uid", d.file, d.UID)
		}
		if other, dup := uids[d.UID]; dup {
			t.Errorf("%s and %s share uid %s", d.file, other, d.UID)
		}
		uids[d.UID] = d.file
		if d.Title == "" {
			t.Errorf("%s: no title", d.file)
		}
		if d.ID != nil {
			t.Errorf("%s: id %d must be null for a provisioned dashboard", d.file, *d.ID)
		}

		var dsVar bool
		for _, v := range d.Templating.List {
			var q string
			json.Unmarshal(v.Query, &q)
			if v.Type == "datasource" && v.Name == "datasource" && q == "prometheus" {
				dsVar = true
			}
			if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != "${datasource}") {
				t.Errorf("%s: variable %s does not query ${datasource}", d.file, v.Name)
			}
		}
		if !dsVar {
			t.Errorf(`%s: no {type: datasource, name: datasource, query: prometheus} template variable`, d.file)
		}

		ids := map[int]bool{}
		for _, p := range allPanels(d.Panels) {
			where := d.file + ": " + p.Title
			if ids[p.ID] {
				t.Errorf("%s: panel id %d is used twice", where, p.ID)
			}
			ids[p.ID] = true
			if p.Title == "" || p.GridPos == nil {
				t.Errorf("%s: panel %d needs a title and a gridPos", d.file, p.ID)
			}
			if p.Type == "row" {
				continue // a row only groups panels: no query, nothing to measure
			}
			if p.Description == "" {
				t.Errorf("%s: no description", where)
			}
			if p.FieldConfig.Defaults.Unit == "" {
				t.Errorf("%s: no unit", where)
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: panel datasource is not ${datasource}", where)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no queries", where)
			}
			for _, tg := range p.Targets {
				if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
					t.Errorf("%s / %s: target datasource is not ${datasource}", where, tg.RefID)
				}
			}
		}
	}
	for _, want := range []string{"mockgateway-overview", "mockgateway-chat", "mockgateway-simulation", "mockgateway-runtime"} {
		if _, ok := uids[want]; !ok {
			t.Errorf("no dashboard with uid %s", want)
		}
	}

	fixedWindow := regexp.MustCompile(`\[\d+[smhdwy]\]`)
	for _, e := range dashboardExprs(t) {
		if e.panel != "variable" && fixedWindow.MatchString(e.expr) {
			t.Errorf("%s: fixed range window in %q; use [$__rate_interval]", e.where, e.expr)
		}
		if strings.Contains(e.expr, "_seconds_bucket") && !e.exemplar {
			t.Errorf("%s: latency query without exemplar: true", e.where)
		}
		expr, err := promqlParser.ParseExpr(substituteGrafanaVars(e.expr, "1m"))
		if err != nil {
			t.Errorf("%s: PromQL does not parse: %v\n%s", e.where, err, e.expr)
			continue
		}
		// Counters (and histogram/summary parts) only make sense as rates.
		parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
			vs, ok := node.(*parser.VectorSelector)
			if !ok || !isCounterLike(vs.Name) {
				return nil
			}
			for _, anc := range path {
				if call, ok := anc.(*parser.Call); ok && (call.Func.Name == "rate" || call.Func.Name == "increase" || call.Func.Name == "irate") {
					return nil
				}
			}
			if e.panel != "variable" {
				t.Errorf("%s: counter %s is not wrapped in rate()", e.where, vs.Name)
			}
			return nil
		})
		if strings.Contains(e.expr, "rate(") && !strings.Contains(e.expr, "$__rate_interval") {
			t.Errorf("%s: rate() without $__rate_interval", e.where)
		}
	}
}
