package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Grafana dashboard JSON, the parts the tests read.
type dashboard struct {
	file   string
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	ID     *int    `json:"id"`
	Panels []panel `json:"panels"`
	Links  []struct {
		Type        string   `json:"type"`
		Tags        []string `json:"tags"`
		IncludeVars bool     `json:"includeVars"`
		KeepTime    bool     `json:"keepTime"`
	} `json:"links"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type variable struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	Datasource *datasourceRef  `json:"datasource"`
	IncludeAll bool            `json:"includeAll"`
	Multi      bool            `json:"multi"`
	AllValue   string          `json:"allValue"`
	Current    struct {
		Value json.RawMessage `json:"value"`
	} `json:"current"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Datasource  *datasourceRef `json:"datasource"`
	GridPos     *struct {
		H, W, X, Y int
	} `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
		Overrides []struct {
			Matcher struct {
				ID      string `json:"id"`
				Options any    `json:"options"`
			} `json:"matcher"`
			Properties []struct {
				ID    string `json:"id"`
				Value any    `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
	Options struct {
		TextMode string `json:"textMode"`
	} `json:"options"`
	Targets []target `json:"targets"`
	Panels  []panel  `json:"panels"` // collapsed rows hold their panels
}

type target struct {
	RefID        string         `json:"refId"`
	Expr         string         `json:"expr"`
	LegendFormat string         `json:"legendFormat"`
	Exemplar     bool           `json:"exemplar"`
	Datasource   *datasourceRef `json:"datasource"`
}

// dashboardExpr is one PromQL expression of a dashboard, with where it comes from.
type dashboardExpr struct {
	where       string // "overview.json: Latency by route (p50, p90, p99) / B"
	expr        string
	exemplar    bool
	panel       string // panel type; "variable" for template variable queries
	owner       string // "overview.json: Latency by route (p50, p90, p99)", or "overview.json: variable route"
	description string // the panel's description
	// defaults are the dashboard's variables as a fresh dashboard sets them, formatted as in a
	// regex matcher.
	defaults map[string]string
	// variables are the dashboard's query variables by name.
	variables map[string]variable
}

func loadDashboards(t *testing.T) []dashboard {
	t.Helper()
	files, _ := filepath.Glob(repoPath("dashboards", "*.json"))
	if len(files) == 0 {
		t.Fatal("no dashboards in dashboards/")
	}
	var out []dashboard
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s does not parse: %v", f, err)
		}
		d.file = filepath.Base(f)
		out = append(out, d)
	}
	return out
}

// allPanels flattens rows.
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// dashboardExprs returns every PromQL expression of every dashboard: panel targets and the
// label_values(metric, label) queries of template variables (as their metric selector).
func dashboardExprs(t *testing.T) []dashboardExpr {
	t.Helper()
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	var out []dashboardExpr
	for _, d := range loadDashboards(t) {
		defaults := variableDefaults(t, d)
		variables := map[string]variable{}
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				variables[v.Name] = v
			}
		}
		for _, p := range allPanels(d.Panels) {
			owner := d.file + ": " + p.Title
			for _, tg := range p.Targets {
				out = append(out, dashboardExpr{where: owner + " / " + tg.RefID, expr: tg.Expr, exemplar: tg.Exemplar,
					panel: p.Type, owner: owner, description: p.Description, defaults: defaults, variables: variables})
			}
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			owner := d.file + ": variable " + v.Name
			m := labelValues.FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("%s: query %q is not label_values(metric, label)", owner, v.Definition)
				continue
			}
			out = append(out, dashboardExpr{where: owner, expr: m[1], panel: "variable", owner: owner, defaults: defaults, variables: variables})
		}
	}
	return out
}

// variableDefaults returns the value each query variable of d has when the dashboard opens, as
// Grafana puts it in a regex matcher (see grafanaRegexValue). All without an allValue is every
// option of the variable, which only a Prometheus knows: here it is .*, at most what it matches.
func variableDefaults(t *testing.T, d dashboard) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		values := currentValues(t, d.file, v)
		if isAll(values) && v.AllValue == "" {
			out[v.Name] = ".*"
			continue
		}
		out[v.Name] = grafanaRegexValue(v, values, nil)
	}
	return out
}

// currentValues returns the values v is set to as the dashboard opens: ["$__all"] for All.
func currentValues(t *testing.T, file string, v variable) []string {
	t.Helper()
	var values []string
	if err := json.Unmarshal(v.Current.Value, &values); err != nil {
		var one string
		if json.Unmarshal(v.Current.Value, &one) != nil {
			t.Errorf("%s: variable %s: current value %s is neither a string nor a list", file, v.Name, v.Current.Value)
		}
		values = []string{one}
	}
	return values
}

// isAll reports whether values select All.
func isAll(values []string) bool {
	return len(values) == 0 || len(values) == 1 && values[0] == "$__all"
}

// grafanaRegexValue is what Grafana's Prometheus data source puts for a multi-value variable v
// set to values in a regex matcher (job=~"$job"), options being the values its query returned.
// All is v's allValue, as written, if it has one; without one, All is every option. The values
// are regex-escaped, one as itself and several as the alternation (a|b).
func grafanaRegexValue(v variable, values, options []string) string {
	if isAll(values) {
		if v.AllValue != "" {
			return v.AllValue
		}
		values = options
	}
	quoted := make([]string, len(values))
	for i, x := range values {
		quoted[i] = regexp.QuoteMeta(x)
	}
	if len(quoted) == 1 {
		return quoted[0]
	}
	return "(" + strings.Join(quoted, "|") + ")"
}

var grafanaVar = regexp.MustCompile(`\$\{?(\w+)(?::\w+)?\}?`)

// substituteGrafanaVars turns a dashboard expression into plain PromQL: interval variables
// become rateWindow, every other variable (a multi-value label matcher) matches anything.
func substituteGrafanaVars(expr, rateWindow string) string {
	return interpolate(expr, rateWindow, func(string, string) string { return ".*" })
}

// keepLabelVars is for interpolate: a label variable stays as written ("$job" in a matcher is a
// valid regex to the parser), so a test can see which matchers use which variable.
func keepLabelVars(_, raw string) string { return raw }

// interpolate turns a dashboard expression into PromQL: interval variables become rateWindow,
// $datasource nothing, and every other variable value(name, raw), raw being its text in expr.
func interpolate(expr, rateWindow string, value func(name, raw string) string) string {
	return grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		name := grafanaVar.FindStringSubmatch(v)[1]
		switch name {
		case "__rate_interval", "__interval", "__range":
			return rateWindow
		case "__rate_interval_ms", "__interval_ms", "__range_ms", "__range_s":
			// Grafana's numeric forms: a number in an expression, not a matcher.
			d, err := time.ParseDuration(rateWindow)
			if err != nil {
				return rateWindow
			}
			if name == "__range_s" {
				return strconv.FormatInt(int64(d/time.Second), 10)
			}
			return strconv.FormatInt(d.Milliseconds(), 10)
		case "datasource":
			return ""
		}
		return value(name, v)
	})
}

var promqlParser = parser.NewParser(parser.Options{})

// selectorNames returns the metric names an expression reads, and fails for selectors
// without a literal name (they could read anything).
func selectorNames(t *testing.T, where string, expr parser.Expr) []string {
	t.Helper()
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			t.Errorf("%s: selector %s has no metric name", where, vs)
			return nil
		}
		names = append(names, name)
		return nil
	})
	return names
}

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

// promSynthetic are series Prometheus writes itself for every target; dashboards may read them
// although the service does not expose them.
var promSynthetic = map[string]string{
	"up": "written by Prometheus for every scrape target (runtime dashboard: Target up)",
}

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

// requireSimulation asks the service for a simulated server error: simulation is built in and on
// by default, so a service that does not answer it is broken, and the simulation panels and
// rules would otherwise be checked against metrics that never appear.
func requireSimulation(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := newChatRequest(ctx, url, `{"model":"mock-chat","messages":[{"role":"user","content":"Lorem ipsum"}]}`)
	req.Header.Set("X-Mock-Fault", "server_error")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("simulation probe: %v", err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 500 || e.Error.Code != "simulated_server_error" {
		t.Fatalf("simulation probe answered %d %q: x-mock-fault is not live", resp.StatusCode, e.Error.Code)
	}
}

func TestSubstituteGrafanaVars(t *testing.T) {
	for in, want := range map[string]string{
		`rate(x{route=~"$route"}[$__rate_interval])`:      `rate(x{route=~".*"}[1m])`,
		`rate(x{model=~"${model}"}[${__interval}])`:       `rate(x{model=~".*"}[1m])`,
		`sum(x{job=~"${job:regex}"}) / $__range_s`:        `sum(x{job=~".*"}) / 60`,
		`sum(rate(x[$__rate_interval])) * $__interval_ms`: `sum(rate(x[1m])) * 60000`,
		`histogram_quantile(0.99, sum by (le) (y))`:       `histogram_quantile(0.99, sum by (le) (y))`,
		fmt.Sprintf(`x{a="%s"}`, "$datasource"):           `x{a=""}`,
		`max by (version) (go_info{job=~"$job"}) > 0`:     `max by (version) (go_info{job=~".*"}) > 0`,
	} {
		got := substituteGrafanaVars(in, "1m")
		if got != want {
			t.Errorf("substitute(%q) = %q, want %q", in, got, want)
		}
		if _, err := promqlParser.ParseExpr(got); err != nil {
			t.Errorf("substitute(%q) = %q, not PromQL: %v", in, got, err)
		}
	}
}

func TestGrafanaRegexValue(t *testing.T) {
	job := variable{Name: "job", IncludeAll: true, Multi: true}
	route := variable{Name: "route", IncludeAll: true, Multi: true, AllValue: ".*"}
	for _, c := range []struct {
		v               variable
		values, options []string
		want            string
	}{
		{job, []string{"$__all"}, []string{"mockgateway", "gw.eu"}, `(mockgateway|gw\.eu)`},
		{job, []string{"$__all"}, []string{"mockgateway"}, `mockgateway`},
		{job, []string{"a", "b"}, nil, `(a|b)`},
		{job, []string{"a+b"}, nil, `a\+b`},
		{route, []string{"$__all"}, []string{"/v1/models"}, `.*`},
	} {
		if got := grafanaRegexValue(c.v, c.values, c.options); got != c.want {
			t.Errorf("%s = %v of %v: got %q, want %q", c.v.Name, c.values, c.options, got, c.want)
		}
	}
}
