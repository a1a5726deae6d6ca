package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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

// promSynthetic are series Prometheus writes itself for every target; dashboards may read them
// although the service does not expose them.
var promSynthetic = map[string]string{
	"up": "written by Prometheus for every scrape target (runtime dashboard: Target up)",
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
