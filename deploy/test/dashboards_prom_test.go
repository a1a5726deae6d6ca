package test

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTarget serves a /metrics with a process start time, a build info, and request series for
// its routes that grow by one request per scrape.
type fakeTarget struct {
	start   float64 // process_start_time_seconds
	routes  []fakeRoute
	scrapes atomic.Int64
}

type fakeRoute struct{ route, method, status, code string }

func (f *fakeTarget) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := f.scrapes.Add(1)
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n", f.start)
	b.WriteString("# TYPE mockgateway_build_info gauge\nmockgateway_build_info{version=\"fake\"} 1\n")
	b.WriteString("# TYPE mockgateway_http_requests_total counter\n")
	for _, r := range f.routes {
		fmt.Fprintf(&b, "mockgateway_http_requests_total{route=%q,method=%q,status_code=%q,error_code=%q} %d\n", r.route, r.method, r.status, r.code, n)
	}
	b.WriteString("# TYPE mockgateway_http_request_duration_seconds histogram\n")
	for _, r := range f.routes {
		l := fmt.Sprintf("route=%q,method=%q,status_code=%q", r.route, r.method, r.status)
		fmt.Fprintf(&b, "mockgateway_http_request_duration_seconds_bucket{%s,le=\"0.01\"} %d\n", l, n)
		fmt.Fprintf(&b, "mockgateway_http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %d\n", l, n)
		fmt.Fprintf(&b, "mockgateway_http_request_duration_seconds_sum{%s} %g\n", l, float64(n)*0.002)
		fmt.Fprintf(&b, "mockgateway_http_request_duration_seconds_count{%s} %d\n", l, n)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

// fakeGoService serves the /metrics of some other Go service: go_* and process_* (the names the
// runtime dashboard reads), no mockgateway_build_info.
type fakeGoService struct{ start float64 }

func (f fakeGoService) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n", f.start)
	for _, g := range []string{"go_goroutines", "go_threads", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "process_open_fds"} {
		fmt.Fprintf(&b, "# TYPE %s gauge\n%s 42\n", g, g)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

// serveFake starts f on loopback and returns its host:port.
func serveFake(t *testing.T, f http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestDashboardsInPrometheusWithAnotherJob runs every dashboard query in Prometheus v3 against
// fake targets: three replicas of the job the dashboards are set to, started 3000, 2000 and
// 1000 s ago, that have served nothing but scrapes and probes; another job with the same
// metric names, older than all of them, that served API traffic; and, older still, a job of
// another Go service, with go_* and process_* but no mockgateway_build_info. Set to a job nothing
// has, every query is empty (no selector reads the other jobs); set to the replicas' job, the
// Uptime panels show the oldest replica and three replicas, the scrapes-and-probes panel has data
// and every other query on the request series is empty. Set to All, as the dashboards open, the
// job is what Grafana makes of All: the jobs the job variable lists, the two with
// mockgateway_build_info; the Uptime panels show the older of them and four replicas, and no
// query reads the other service.
func TestDashboardsInPrometheusWithAnotherJob(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	now := time.Now()
	probes := []fakeRoute{{"/metrics", "GET", "200", "none"}, {"/health", "GET", "200", "none"}}
	api := []fakeRoute{{"/v1/chat/completions", "POST", "200", "none"}, {"/v1/chat/completions", "POST", "500", "server_error"}}
	startedAgo := func(d time.Duration) float64 { return float64(now.Add(-d).UnixMilli()) / 1000 }

	var replicas []string
	for _, age := range []time.Duration{3000 * time.Second, 2000 * time.Second, 1000 * time.Second} {
		replicas = append(replicas, strconv.Quote(serveFake(t, &fakeTarget{start: startedAgo(age), routes: probes})))
	}
	oldest := startedAgo(3000 * time.Second)
	otherStart := startedAgo(240 * time.Hour)
	other := serveFake(t, &fakeTarget{start: otherStart, routes: append(probes, api...)})
	goService := serveFake(t, fakeGoService{start: startedAgo(480 * time.Hour)})
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: mockgateway
    static_configs: [{targets: [%s]}]
  - job_name: other
    static_configs: [{targets: [%q]}]
  - job_name: go-service
    static_configs: [{targets: [%q]}]
`, strings.Join(replicas, ", "), other, goService)
	cfgPath := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, cfgPath)
	// Three scrapes of every target: rate() then has two samples to work with in every series.
	waitFor(t, 30*time.Second, "three scrapes of each of the five fake targets", func() bool {
		s, err := prom.query(`count(count_over_time(up[1m]) >= 3)`)
		return err == nil && len(s) == 1 && s[0].float() == 5
	})
	at := time.Now()

	run := func(e dashboardExpr, job string) ([]sample, bool) {
		q := interpolate(e.expr, "1m", func(name, _ string) string {
			if name == "job" {
				return job
			}
			return e.defaults[name]
		})
		s, err := prom.queryAt(q, at)
		if err != nil {
			t.Errorf("%s: %v\n%s", e.where, err, q)
			return nil, false
		}
		return s, true
	}

	exprs := dashboardExprs(t)
	// The jobs each dashboard's job variable lists, as Grafana asks for them.
	jobOptions := map[string][]string{}
	for _, e := range exprs {
		if e.panel != "variable" || !strings.HasSuffix(e.owner, ": variable job") {
			continue
		}
		s, _ := run(e, ".*")
		var jobs []string
		for _, x := range s {
			if !slices.Contains(jobs, x.Metric["job"]) {
				jobs = append(jobs, x.Metric["job"])
			}
		}
		slices.Sort(jobs)
		if !slices.Equal(jobs, []string{"mockgateway", "other"}) {
			t.Errorf("%s lists %v, want the two jobs with mockgateway_build_info, mockgateway and other", e.where, jobs)
		}
		jobOptions[strings.TrimSuffix(e.owner, ": variable job")] = jobs
	}
	mockgatewayInstances := map[string]bool{other: true}
	for _, r := range replicas {
		mockgatewayInstances[strings.Trim(r, `"`)] = true
	}

	for _, e := range exprs {
		if e.panel == "variable" && strings.HasSuffix(e.owner, ": variable job") {
			continue
		}

		// All, as Grafana interpolates it: the job variable's allValue if it had one, else
		// every job it lists, (mockgateway|other).
		file, _, _ := strings.Cut(e.owner, ": ")
		all := grafanaRegexValue(e.variables["job"], []string{"$__all"}, jobOptions[file])
		if s, ok := run(e, all); ok {
			for _, x := range s {
				if j, ok := x.Metric["job"]; ok && j != "mockgateway" && j != "other" {
					t.Errorf("%s: set to All (job=~%q), it reads job %s, which has no mockgateway_build_info\n%s", e.where, all, j, e.expr)
				}
				if i, ok := x.Metric["instance"]; ok && !mockgatewayInstances[i] {
					t.Errorf("%s: set to All (job=~%q), it reads instance %s, which is no mockgateway\n%s", e.where, all, i, e.expr)
				}
			}
			switch {
			case strings.HasSuffix(e.where, ": Uptime / A"):
				if want := float64(at.UnixMilli())/1000 - otherStart; len(s) != 1 || math.Abs(s[0].float()-want) > 0.01 {
					t.Errorf("%s set to All (job=~%q) = %v, want the oldest mockgateway's uptime %.3f s, not another service's", e.where, all, s, want)
				}
			case strings.HasSuffix(e.where, ": Uptime / B"):
				if len(s) != 1 || s[0].float() != 4 {
					t.Errorf("%s set to All (job=~%q) = %v, want the 4 mockgateway replicas up, not every target", e.where, all, s)
				}
			}
		}

		if s, ok := run(e, "nobody"); ok && len(s) > 0 {
			t.Errorf("%s: set to a job no target has, it reads %d series of another job, such as %v\n%s", e.where, len(s), s[0].Metric, e.expr)
		}

		s, ok := run(e, "mockgateway")
		if !ok {
			continue
		}
		switch {
		case strings.HasSuffix(e.where, ": Uptime / A"):
			// time() is the query's time: the oldest replica's uptime at that instant.
			if want := float64(at.UnixMilli())/1000 - oldest; len(s) != 1 || math.Abs(s[0].float()-want) > 0.01 {
				t.Errorf("%s = %v, want the oldest replica's uptime %.3f s", e.where, s, want)
			}
			continue
		case strings.HasSuffix(e.where, ": Uptime / B"):
			if len(s) != 1 || s[0].float() != 3 {
				t.Errorf("%s = %v, want 3 replicas up", e.where, s)
			}
			continue
		}
		expr, err := promqlParser.ParseExpr(substituteGrafanaVars(e.expr, "1m"))
		if err != nil {
			continue // reported by TestDashboardsStructure
		}
		readsRequests := false
		for _, n := range selectorNames(t, e.where, expr) {
			readsRequests = readsRequests || routeMetric(n)
		}
		switch {
		case !readsRequests:
		case scrapePanels[e.owner]:
			if !hasData(s) {
				t.Errorf("%s: no data, but the selected job served scrapes and probes\n%s", e.where, e.expr)
			}
		case len(s) > 0:
			t.Errorf("%s: the selected job served only scrapes and probes, yet it shows %v\n%s", e.where, s, e.expr)
		}
	}
}
