package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// trafficDuration is how long the end-to-end test drives traffic: long enough for every
// scenario to run several times and for Prometheus (scraping every second) to see rates.
const trafficDuration = 25 * time.Second

// sample is one element of an instant query's result.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) float() float64 {
	str, _ := s.Value[1].(string)
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// api calls a Prometheus HTTP API path and decodes its data.
func (p *prometheusServer) api(path string, params url.Values, into any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	status, body, err := httpGet(ctx, p.url+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	var envelope struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("%s: status %d, body %.200s", path, status, body)
	}
	if envelope.Status != "success" {
		return fmt.Errorf("%s: %s", path, envelope.Error)
	}
	return json.Unmarshal(envelope.Data, into)
}

// query runs an instant query and returns its samples (a scalar result is one sample).
func (p *prometheusServer) query(q string) ([]sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.api("/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var out []sample
		err := json.Unmarshal(data.Result, &out)
		return out, err
	case "scalar":
		var v [2]any
		err := json.Unmarshal(data.Result, &v)
		return []sample{{Value: v}}, err
	}
	return nil, fmt.Errorf("result type %s", data.ResultType)
}

// hasData reports whether a result has a sample with a number (not NaN: a ratio or quantile of
// nothing is NaN, which a panel shows as empty).
func hasData(samples []sample) bool {
	for _, s := range samples {
		if !math.IsNaN(s.float()) {
			return true
		}
	}
	return false
}

// allowedEmpty lists the dashboard queries that may return no data after the traffic run, each
// with its reason. Keep it short: every entry is a panel a user may find blank.
var allowedEmpty = []struct {
	where  string // substring of dashboardExpr.where
	reason string
}{
	{"runtime.json: GC pause (mean)", "the mean of nothing is NaN when no GC cycle finished in the window; the service may not need one during a short run"},
}

// TestEndToEnd is the stack in miniature: the real service exporting OTLP to a receiver the
// test runs, Prometheus v3 (the release the stack runs, with its flags) scraping it with the repository's configuration and rules,
// and the real traffic generator. Then every dashboard query and recording rule must return
// data through Prometheus's API, and a latency exemplar must lead to a trace the service
// exported and to the log line of the same request.
func TestEndToEnd(t *testing.T) {
	endToEnd(t)
	t.Parallel()
	recv := startOTLPReceiver(t)
	svc := startService(t, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.url,
		"OTEL_BSP_SCHEDULE_DELAY=250", // export spans quickly: the test waits for them
		"OTEL_SERVICE_NAME=mockgateway",
	})
	requireSimulation(t, svc.url)

	cfgPath := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(cfgPath, derivedPrometheusConfig(t, []string{svc.addr}, "1s"), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, cfgPath)
	waitFor(t, 30*time.Second, "Prometheus's first scrape of the service", func() bool {
		s, err := prom.query(`up{job="mockgateway"} == 1`)
		return err == nil && len(s) > 0
	})

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), trafficDuration+30*time.Second)
	defer cancel()
	gen := exec.CommandContext(ctx, serviceBinary(t), "traffic", "--target", svc.url, "--rate", "8",
		"--duration", trafficDuration.String(), "--seed", "2026", "--concurrency", "16", "--report-interval", "5s")
	gen.Env = []string{}
	out, err := gen.CombinedOutput()
	if err != nil {
		t.Fatalf("mockgateway traffic: %v\n%s", err, tail(string(out), 3000))
	}
	checkTrafficSummary(t, string(out))

	// Let Prometheus scrape the end of the run and evaluate the rules on it.
	time.Sleep(3 * time.Second)

	t.Run("dashboard queries return data", func(t *testing.T) {
		for _, e := range dashboardExprs(t) {
			q := substituteGrafanaVars(e.expr, "1m")
			samples, err := prom.query(q)
			if err != nil {
				t.Errorf("%s: %v\n%s", e.where, err, q)
				continue
			}
			if hasData(samples) {
				continue
			}
			if reason := emptyReason(e); reason != "" {
				t.Logf("%s: no data, allowed: %s", e.where, reason)
				continue
			}
			t.Errorf("%s: no data\n%s", e.where, q)
		}
	})

	t.Run("recording rules return data", func(t *testing.T) {
		for name := range recordingRules(t) {
			samples, err := prom.query(name)
			if err != nil || !hasData(samples) {
				t.Errorf("recording rule %s: no data (%v)", name, err)
			}
		}
		var rules struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		}
		if err := prom.api("/api/v1/rules", nil, &rules); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health != "ok" {
					t.Errorf("rule %s/%s: health %q %s", g.Name, r.Name, r.Health, r.LastError)
				}
			}
		}
		if want := len(recordingRules(t)) + len(alertNames(t)); n != want {
			t.Errorf("Prometheus loaded %d rules, the rule files have %d", n, want)
		}
	})

	t.Run("build info carries the stamped version", func(t *testing.T) {
		s, err := prom.query(fmt.Sprintf(`mockgateway_build_info{version=%q}`, testVersion))
		if err != nil || len(s) == 0 {
			t.Errorf("mockgateway_build_info{version=%q} not in Prometheus (%v): the Dockerfile's -X main.version no longer reaches the binary", testVersion, err)
		}
	})

	t.Run("exemplar leads to trace and log line", func(t *testing.T) {
		var traceID, requestID string
		var exemplarIDs int
		waitFor(t, 20*time.Second, "an exemplar trace id that the OTLP receiver also has", func() bool {
			ids, err := exemplarTraceIDs(prom, start.Add(-time.Minute), time.Now())
			if err != nil {
				t.Logf("query_exemplars: %v", err)
				return false
			}
			exemplarIDs = len(ids)
			for _, id := range ids {
				if rid, ok := recv.has(id); ok && rid != "" {
					traceID, requestID = id, rid
					return true
				}
			}
			return false
		})
		exports, spans, traces := recv.counts()
		t.Logf("%d exemplar trace ids; the receiver got %d exports, %d spans, %d traces; trace %s is request %s",
			exemplarIDs, exports, spans, traces, traceID, requestID)
		// The walk-through of the README: the request id from the trace finds the log line.
		if !logHas(t, svc.logFile, traceID, requestID) {
			t.Errorf("no log line with trace_id %s and request_id %s in %s", traceID, requestID, svc.logFile)
		}
	})
}

// emptyReason says why a query may be empty, or "" when it must have data.
func emptyReason(e dashboardExpr) string {
	for _, a := range allowedEmpty {
		if strings.Contains(e.where, a.where) {
			return a.reason
		}
	}
	return ""
}

// checkTrafficSummary reads the generator's last line: every scenario ran and none saw an
// answer that breaks the contract.
func checkTrafficSummary(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct {
		Msg            string         `json:"msg"`
		Calls          int            `json:"calls"`
		Scenarios      map[string]int `json:"scenarios"`
		Unexpected     map[string]int `json:"unexpected"`
		LastUnexpected string         `json:"last_unexpected"`
		Status         map[string]int `json:"status"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Msg != "traffic stopped" {
		t.Fatalf("traffic's last line is not its JSON stop summary: %q", lines[len(lines)-1])
	}
	t.Logf("traffic: %d calls, status %v", last.Calls, last.Status)
	if len(last.Scenarios) < 20 {
		t.Errorf("traffic ran only %d scenarios: %v", len(last.Scenarios), last.Scenarios)
	}
	if len(last.Unexpected) > 0 {
		t.Errorf("traffic saw answers that break the contract: %v (last: %s)", last.Unexpected, last.LastUnexpected)
	}
}

// exemplarTraceIDs returns the trace ids of every exemplar of the service's series.
func exemplarTraceIDs(p *prometheusServer, from, to time.Time) ([]string, error) {
	var data []struct {
		Exemplars []struct {
			Labels map[string]string `json:"labels"`
		} `json:"exemplars"`
	}
	params := url.Values{
		"query": {`{__name__=~"mockgateway_.+"}`},
		"start": {strconv.FormatInt(from.Unix(), 10)},
		"end":   {strconv.FormatInt(to.Unix()+1, 10)},
	}
	if err := p.api("/api/v1/query_exemplars", params, &data); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, series := range data {
		for _, ex := range series.Exemplars {
			if id := ex.Labels["trace_id"]; id != "" {
				seen[id] = true
			}
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// logHas reports whether the service's log file has an access line for the request.
func logHas(t *testing.T, path, traceID, requestID string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var line struct {
			TraceID   string `json:"trace_id"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.TraceID == traceID && line.RequestID == requestID {
			return true
		}
	}
	return false
}
