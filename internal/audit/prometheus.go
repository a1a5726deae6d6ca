package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// prometheusSource searches what a Prometheus server stored: every metric name, label name and
// label value, the series of mockgateway_* metrics, and their exemplars.
type prometheusSource struct {
	base     string
	client   *http.Client
	baseline float64
	since    time.Time
}

func (s *prometheusSource) name() string     { return "prometheus" }
func (s *prometheusSource) kind() string     { return "prometheus" }
func (s *prometheusSource) location() string { return s.base }
func (s *prometheusSource) close()           {}

// apiResponse is the envelope of every Prometheus HTTP API answer.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

func (s *prometheusSource) api(ctx context.Context, path string, q url.Values) (json.RawMessage, int64, error) {
	u := s.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	body, _, err := fetch(ctx, s.client, u, "application/json", 256<<20)
	var r apiResponse
	if jerr := json.Unmarshal(body, &r); jerr != nil || r.Status == "" {
		if err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("%s did not answer with the Prometheus API's JSON", u)
	}
	if r.Status != "success" {
		return nil, 0, fmt.Errorf("%s: %s: %s", u, r.ErrorType, r.Error)
	}
	return r.Data, int64(len(body)), nil
}

// requestsTotal is sum(mockgateway_http_requests_total), and whether the series exists.
func (s *prometheusSource) requestsTotal(ctx context.Context) (float64, bool, error) {
	data, _, err := s.api(ctx, "/api/v1/query", url.Values{"query": {"sum(mockgateway_http_requests_total)"}})
	if err != nil {
		return 0, false, err
	}
	var v struct {
		Result []struct {
			Value []any `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return 0, false, fmt.Errorf("the query result is not a vector")
	}
	if len(v.Result) == 0 || len(v.Result[0].Value) != 2 {
		return 0, false, nil
	}
	str, _ := v.Result[0].Value[1].(string)
	f, err := strconv.ParseFloat(str, 64)
	return f, err == nil, nil
}

func (s *prometheusSource) start(ctx context.Context) error {
	s.since = time.Now().Add(-5 * time.Minute)
	total, _, err := s.requestsTotal(ctx)
	s.baseline = total
	return err
}

func (s *prometheusSource) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	var total float64
	var ok bool
	for {
		var err error
		total, ok, err = s.requestsTotal(ctx)
		if err != nil {
			return nil, err
		}
		if (ok && total-s.baseline >= float64(exp.reached)) || time.Now().After(deadline) || !sleepCtx(ctx, 500*time.Millisecond) {
			break
		}
	}
	c := &collection{}
	delta := total - s.baseline
	switch {
	case !ok:
		c.capturedBy = "Prometheus has no mockgateway_http_requests_total: it does not scrape the target"
	case delta < 1:
		c.capturedBy = "sum(mockgateway_http_requests_total) did not grow during the wait: Prometheus has not scraped the audit's traffic (raise --wait above the scrape interval)"
	default:
		c.capturedOK = true
		c.capturedBy = fmt.Sprintf("sum(mockgateway_http_requests_total) grew by %.0f during the audit", delta)
		if delta < float64(exp.reached) {
			c.notes = append(c.notes, fmt.Sprintf("Prometheus had scraped %.0f of the audit's %d requests when the wait ended; series made by the rest may be missing", delta, exp.reached))
		}
	}

	var size int64
	addRecord := func(id, where, text string) {
		c.records = append(c.records, record{id: id, key: id, parts: []part{{where, text}}})
	}
	strList := func(path string) ([]string, error) {
		data, n, err := s.api(ctx, path, nil)
		if err != nil {
			return nil, err
		}
		size += n
		var out []string
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, fmt.Errorf("%s%s: not a list of strings", s.base, path)
		}
		return out, nil
	}
	names, err := strList("/api/v1/labels")
	if err != nil {
		return nil, err
	}
	c.add("label_names", int64(len(names)))
	c.add("label_values", 0)
	for _, n := range names {
		addRecord("label name", "label name", n)
	}
	if !contains(names, "__name__") {
		names = append(names, "__name__")
	}
	for _, n := range names {
		values, err := strList("/api/v1/label/" + url.PathEscape(n) + "/values")
		if err != nil {
			return nil, err
		}
		if n == "__name__" {
			c.add("metric_names", int64(len(values)))
		}
		c.add("label_values", int64(len(values)))
		for _, v := range values {
			addRecord("label "+n+" value", "label "+n+" value", v)
		}
	}

	window := url.Values{
		"match[]": {`{__name__=~"mockgateway_.+"}`},
		"start":   {strconv.FormatInt(s.since.Unix(), 10)},
		"end":     {strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10)},
	}
	data, n, err := s.api(ctx, "/api/v1/series", window)
	if err != nil {
		return nil, err
	}
	size += n
	var series []map[string]string
	if err := json.Unmarshal(data, &series); err != nil {
		return nil, fmt.Errorf("%s/api/v1/series: not a list of label sets", s.base)
	}
	c.add("series", int64(len(series)))
	for _, ls := range series {
		addRecord("series "+labelsText(ls, true), "series", labelsText(ls, false))
	}

	exq := url.Values{"query": {`{__name__=~"mockgateway_.+"}`}, "start": window["start"], "end": window["end"]}
	c.add("exemplars", 0)
	if data, n, err := s.api(ctx, "/api/v1/query_exemplars", exq); err == nil {
		size += n
		var ex []struct {
			SeriesLabels map[string]string `json:"seriesLabels"`
			Exemplars    []struct {
				Labels map[string]string `json:"labels"`
			} `json:"exemplars"`
		}
		if json.Unmarshal(data, &ex) == nil {
			for _, e := range ex {
				for _, x := range e.Exemplars {
					c.add("exemplars", 1)
					addRecord("exemplar on "+labelsText(e.SeriesLabels, true), "exemplar labels", labelsText(x.Labels, false))
				}
			}
		}
	} else {
		c.notes = append(c.notes, "exemplars were not searched: "+err.Error())
	}
	c.add("bytes", size)
	c.correlate(exp.corr)
	return c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// labelsText is {a="x",b="y"}; brief keeps only the metric name, for record ids.
func labelsText(ls map[string]string, brief bool) string {
	if brief {
		if n := ls["__name__"]; n != "" {
			return n
		}
	}
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%s=%q", k, ls[k])
	}
	b.WriteString("}")
	return b.String()
}
