package test

import (
	"fmt"
	"testing"
)

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
