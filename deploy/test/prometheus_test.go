package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func prometheusDir() string { return repoPath("deploy", "prometheus") }

// derivedPrometheusConfig is deploy/prometheus/prometheus.yml for a test's own Prometheus: every
// key as written (the server is the release the stack runs), rule files made absolute (the copy
// lives elsewhere). With targets, the mockgateway job scrapes them instead of the compose
// service, keeping the target labels; with an interval, scrapes and rule evaluations happen that
// often.
func derivedPrometheusConfig(t *testing.T, targets []string, interval string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(prometheusDir(), "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	global, _ := cfg["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
		cfg["global"] = global
	}
	if interval != "" {
		global["scrape_interval"] = interval
		global["scrape_timeout"] = interval
		global["evaluation_interval"] = interval
	}
	rules, _ := cfg["rule_files"].([]any)
	for i, r := range rules {
		if p, ok := r.(string); ok && !filepath.IsAbs(p) {
			rules[i] = filepath.Join(prometheusDir(), p)
		}
	}
	jobs := 0
	scrapes, _ := cfg["scrape_configs"].([]any)
	for _, s := range scrapes {
		sc := s.(map[string]any)
		if sc["job_name"] != "mockgateway" {
			continue
		}
		jobs++
		statics, _ := sc["static_configs"].([]any)
		if len(targets) == 0 || len(statics) != 1 {
			continue
		}
		static := statics[0].(map[string]any)
		list := make([]any, len(targets))
		for i, target := range targets {
			list[i] = target
		}
		static["targets"] = list
	}
	if jobs != 1 {
		t.Fatalf("prometheus.yml: want one mockgateway job, found %d", jobs)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// promConfig mirrors the parts of a Prometheus configuration this stack uses. It is decoded
// strictly, so an unknown or misspelt key fails here.
type promConfig struct {
	Global struct {
		ScrapeInterval     string            `yaml:"scrape_interval"`
		ScrapeTimeout      string            `yaml:"scrape_timeout"`
		EvaluationInterval string            `yaml:"evaluation_interval"`
		ExternalLabels     map[string]string `yaml:"external_labels"`
	} `yaml:"global"`
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName                       string `yaml:"job_name"`
		MetricsPath                   string `yaml:"metrics_path"`
		ScrapeNativeHistograms        *bool  `yaml:"scrape_native_histograms"`
		AlwaysScrapeClassicHistograms *bool  `yaml:"always_scrape_classic_histograms"`
		StaticConfigs                 []struct {
			Targets []string          `yaml:"targets"`
			Labels  map[string]string `yaml:"labels"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

func decodeStrict(t *testing.T, path string, into any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPrometheusConfigV3 checks what the stack relies on in the real prometheus.yml (decoded
// strictly); promtool v3 checks the rest (TestPromtoolCheckConfig).
func TestPrometheusConfigV3(t *testing.T) {
	t.Parallel()
	var cfg promConfig
	decodeStrict(t, filepath.Join(prometheusDir(), "prometheus.yml"), &cfg)

	jobs := 0
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName != "mockgateway" {
			continue
		}
		jobs++
		if sc.ScrapeNativeHistograms == nil || !*sc.ScrapeNativeHistograms {
			t.Error("mockgateway job: scrape_native_histograms is not on")
		}
		if sc.AlwaysScrapeClassicHistograms == nil || !*sc.AlwaysScrapeClassicHistograms {
			t.Error("mockgateway job: always_scrape_classic_histograms is not on; the dashboards and rules read classic buckets")
		}
		if sc.MetricsPath != "/metrics" {
			t.Errorf("metrics_path %q", sc.MetricsPath)
		}
		// The compose service on its container port.
		if len(sc.StaticConfigs) != 1 || !slices.Equal(sc.StaticConfigs[0].Targets, []string{"mockgateway:8080"}) {
			t.Errorf("static_configs %+v, want the one target mockgateway:8080", sc.StaticConfigs)
		}
	}
	if jobs != 1 {
		t.Fatalf("want one mockgateway job, got %d", jobs)
	}

	// Rule files resolve, relative to the configuration as inside the container, to the rules.
	var matched []string
	for _, pattern := range cfg.RuleFiles {
		m, _ := filepath.Glob(filepath.Join(prometheusDir(), pattern))
		matched = append(matched, m...)
	}
	if want := ruleFiles(t); !slices.Equal(matched, want) {
		t.Errorf("rule_files match %v, want %v", matched, want)
	}

}

// ruleDoc mirrors a rule file; decoded strictly.
type ruleDoc struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Record        string            `yaml:"record"`
			Alert         string            `yaml:"alert"`
			Expr          string            `yaml:"expr"`
			For           string            `yaml:"for"`
			KeepFiringFor string            `yaml:"keep_firing_for"`
			Labels        map[string]string `yaml:"labels"`
			Annotations   map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestRulesParseWithPrometheus3 parses every rule expression with the pinned Prometheus module's
// PromQL parser, and every metric a rule reads must be exposed by the service or recorded by
// another rule.
func TestRulesParseWithPrometheus3(t *testing.T) {
	t.Parallel()
	records := recordingRules(t)
	for _, f := range ruleFiles(t) {
		var doc ruleDoc
		decodeStrict(t, f, &doc)
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				name := r.Record + r.Alert
				if (r.Record == "") == (r.Alert == "") {
					t.Errorf("%s: a rule must have exactly one of record and alert", f)
				}
				expr, err := promqlParser.ParseExpr(r.Expr)
				if err != nil {
					t.Errorf("%s: %s: %v", f, name, err)
					continue
				}
				for _, m := range selectorNames(t, name, expr) {
					if _, ok := records[m]; ok {
						continue
					}
					if !strings.HasPrefix(m, "mockgateway_") && promSynthetic[m] == "" {
						t.Errorf("%s: %s reads %s, which neither the service nor a rule provides", f, name, m)
					}
				}
				if r.Alert != "" && (r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "") {
					t.Errorf("%s: alert %s needs a severity label and summary and description annotations", f, name)
				}
			}
		}
	}
}

func ruleFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(prometheusDir(), "rules", "*.yml"))
	if len(files) == 0 {
		t.Fatal("no rule files in deploy/prometheus/rules")
	}
	return files
}

// TestPromtoolCheckConfig is `promtool check config` on prometheus.yml as written (promtool
// also checks the rule files it names), run where the compose stack mounts it from.
func TestPromtoolCheckConfig(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	promtool := prometheusTool(t, "promtool")
	if out, err := run(t, prometheusDir(), nil, promtool, "check", "config", "prometheus.yml"); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	promtool := prometheusTool(t, "promtool")
	if out, err := run(t, prometheusDir(), nil, promtool, append([]string{"check", "rules"}, ruleFiles(t)...)...); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// TestPromtoolTestRules runs the rule unit tests in deploy/prometheus/tests.
func TestPromtoolTestRules(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	promtool := prometheusTool(t, "promtool")
	tests, _ := filepath.Glob(filepath.Join(prometheusDir(), "tests", "*.yml"))
	if len(tests) == 0 {
		t.Fatal("no rule tests in deploy/prometheus/tests")
	}
	out, err := run(t, prometheusDir(), nil, promtool, append([]string{"test", "rules"}, tests...)...)
	if err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
	// Every alert has at least one test in which it fires.
	for _, name := range alertNames(t) {
		fired := false
		for _, f := range tests {
			var doc struct {
				Tests []struct {
					AlertRuleTest []struct {
						Alertname string `yaml:"alertname"`
						ExpAlerts []any  `yaml:"exp_alerts"`
					} `yaml:"alert_rule_test"`
				} `yaml:"tests"`
			}
			readYAML(t, f, &doc)
			for _, tc := range doc.Tests {
				for _, a := range tc.AlertRuleTest {
					fired = fired || (a.Alertname == name && len(a.ExpAlerts) > 0)
				}
			}
		}
		if !fired {
			t.Errorf("alert %s has no rule test in which it fires", name)
		}
	}
}

func alertNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, f := range ruleFiles(t) {
		var doc ruleDoc
		readYAML(t, f, &doc)
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					names = append(names, r.Alert)
				}
			}
		}
	}
	return names
}

// recordingRules returns record name -> expression.
func recordingRules(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range ruleFiles(t) {
		var doc ruleDoc
		readYAML(t, f, &doc)
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					out[r.Record] = r.Expr
				}
			}
		}
	}
	return out
}

// allRuleExprs returns rule name -> expression for every recording and alerting rule.
func allRuleExprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range ruleFiles(t) {
		var doc ruleDoc
		readYAML(t, f, &doc)
		for _, g := range doc.Groups {
			for _, r := range g.Rules {
				out[r.Record+r.Alert] = r.Expr
			}
		}
	}
	return out
}
