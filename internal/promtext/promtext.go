// Package promtext owns reading a service's /metrics as the repository's tools do: one fetch in
// the Prometheus text format, parsed by expfmt, and the value of a metric summed over its
// series. The exposition itself (observability) is tested against its own golden text, not this.
package promtext

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Accept asks for the classic text format: the one format expfmt parses in full. OpenMetrics
// (with exemplars) is for readers that search the raw text, not for this package.
const Accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Families are the metric families of one exposition, by name.
type Families map[string]*dto.MetricFamily

// Parse reads an exposition in the text format. On a malformed line it returns the families
// parsed up to that line together with the error, so a caller may still use what it got.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(r)
	return Families(mf), err
}

// Sum is the sum of name's samples over all its series (counters, gauges and untyped
// metrics), and whether name had any.
func (f Families) Sum(name string) (float64, bool) {
	fam := f[name]
	if fam == nil || len(fam.GetMetric()) == 0 {
		return 0, false
	}
	var sum float64
	found := false
	for _, m := range fam.GetMetric() {
		if v, ok := Value(m); ok {
			sum += v
			found = true
		}
	}
	return sum, found
}

// Value is one series' value: a counter's, a gauge's or an untyped metric's. A summary or a
// histogram has no single value.
func Value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// Fetch gets url in the text format and parses it; limit bounds the body read. An answer other
// than 200, or a body that is not the text format, is an error; a body that parses only in part
// returns the part with the error.
func Fetch(ctx context.Context, client *http.Client, url string, limit int64) (Families, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", Accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
		return nil, fmt.Errorf("%s answered %d", url, resp.StatusCode)
	}
	f, err := Parse(io.LimitReader(resp.Body, limit))
	if err != nil {
		return f, fmt.Errorf("%s is not the Prometheus text format: %w", url, err)
	}
	return f, nil
}
