package main

import (
	"encoding/json"
	"flag"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/catalog"
)

func figures(units, cpu []float64) []scaleFigure {
	var fs []scaleFigure
	for i := range units {
		fs = append(fs, scaleFigure{Label: "p", Units: units[i], CPUus: cpu[i]})
	}
	return fs
}

func TestJudge(t *testing.T) {
	units := []float64{1, 8, 32, 128}
	cases := []struct {
		name   string
		cpu    func(u float64) float64
		linear bool
		ratio  float64 // NaN: no growth beyond noise
	}{
		{"linear", func(u float64) float64 { return 50 + 2*u }, true, 1},
		{"sublinear", func(u float64) float64 { return 50 + 20*math.Sqrt(u) }, true, 0.5},
		{"quadratic", func(u float64) float64 { return 50 + 0.1*u*u }, false, 3.9},
		{"n log n", func(u float64) float64 { return 50 + u*math.Log2(u) }, true, 1.4},
		{"flat", func(float64) float64 { return 50 }, true, math.NaN()},
	}
	for _, c := range cases {
		var cpu []float64
		for _, u := range units {
			cpu = append(cpu, c.cpu(u))
		}
		d := &scaleDimResult{Points: figures(units, cpu)}
		judge(d)
		if d.Linear == nil || *d.Linear != c.linear {
			t.Errorf("%s: linear %v, want %v (%s)", c.name, d.Linear, c.linear, d.Verdict)
		}
		if math.IsNaN(c.ratio) != math.IsNaN(d.Ratio) || (!math.IsNaN(c.ratio) && math.Abs(d.Ratio-c.ratio) > 0.15) {
			t.Errorf("%s: ratio %v, want about %v", c.name, d.Ratio, c.ratio)
		}
		if !math.IsNaN(d.Points[0].Marginal) {
			t.Errorf("%s: the first point has a marginal cost %v", c.name, d.Points[0].Marginal)
		}
	}

	// Linear: every marginal cost is the slope.
	d := &scaleDimResult{Points: figures(units, []float64{52, 66, 114, 306})}
	judge(d)
	for _, p := range d.Points[1:] {
		if math.Abs(p.Marginal-2) > 1e-9 {
			t.Errorf("marginal %v, want 2", p.Marginal)
		}
	}

	// A growth within noise before the largest point is taken at the noise floor, so a real growth
	// at the largest is judged against that, not against zero.
	d = &scaleDimResult{Points: figures([]float64{0, 100, 1000, 10000}, []float64{60, 60, 61, 90})}
	judge(d)
	if !d.BeforeNoise || d.Linear == nil || !*d.Linear {
		t.Errorf("fixtures-like growth: %+v", d)
	}
	d = &scaleDimResult{Points: figures([]float64{0, 100, 1000, 10000}, []float64{60, 60, 61, 2000})}
	judge(d)
	if d.Linear == nil || *d.Linear {
		t.Errorf("growth far beyond the noise floor at the largest point not flagged: %+v", d)
	}

	d = &scaleDimResult{Points: figures([]float64{1, 2}, []float64{1, 2})}
	judge(d)
	if d.Linear != nil {
		t.Errorf("two points judged: %+v", d)
	}
}

func TestRequestsFor(t *testing.T) {
	if got := requestsFor(100, time.Second, 500*time.Millisecond); got != 50 {
		t.Errorf("requestsFor(100/s, 0.5s) = %d, want 50", got)
	}
	if got := requestsFor(3, 3*time.Second, 500*time.Millisecond); got != 10 {
		t.Errorf("a slow point: %d requests, want the floor of 10", got)
	}
	if got := requestsFor(0, 0, time.Second); got != 10 {
		t.Errorf("no warm-up: %d", got)
	}
}

func TestPromptText(t *testing.T) {
	for _, n := range []int{1, 1024, 16 << 10} {
		s := promptText(n)
		if len(s) != n {
			t.Errorf("promptText(%d) is %d bytes", n, len(s))
		}
		if b, _ := json.Marshal(s); len(b) != n+2 {
			t.Errorf("promptText(%d) has characters JSON escapes", n)
		}
	}
}

func TestScaleCatalogLoads(t *testing.T) {
	c, err := catalog.Parse([]byte(scaleCatalog()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range scaleTokens {
		m, ok := c.Lookup(scaleChat(tk))
		if !ok || m.DefaultTokens != tk || m.ContextWindow < 1<<20 {
			t.Errorf("%s: %+v", scaleChat(tk), m)
		}
	}
	if m, ok := c.Lookup(scaleToolModel); !ok || !m.Capabilities.Tools {
		t.Errorf("%s: %+v", scaleToolModel, m)
	}
}

func TestFixtureFiles(t *testing.T) {
	files := fixtureFiles(250)
	if len(files) != 3 {
		t.Fatalf("%d files for 250 fixtures, want 3", len(files))
	}
	var last struct {
		Fixtures []struct {
			Name  string
			Match struct {
				Model    string
				LastUser struct{ Contains string } `json:"last_user"`
			}
			Reply struct{ Content string }
		}
	}
	if err := json.Unmarshal(files["f00002.json"], &last); err != nil {
		t.Fatal(err)
	}
	f := last.Fixtures[len(last.Fixtures)-1]
	if len(last.Fixtures) != 50 || f.Name != "scale-00249" || f.Match.LastUser.Contains != fixtureNeedle(249) ||
		f.Match.Model != scaleChatModel || f.Reply.Content != fixtureReply(249) {
		t.Errorf("last file: %+v", last)
	}
	if len(fixtureFiles(0)) != 0 {
		t.Error("files for no fixtures")
	}
}

func TestScalingPoints(t *testing.T) {
	plan := scalingPlan(scalingDimKeys)
	if len(plan) != 7 {
		t.Fatalf("%d dimensions, want 7", len(plan))
	}
	pts := scalingPoints(plan)
	per := map[*scaleDimResult]int{}
	for _, p := range pts {
		per[p.dim]++
		if !json.Valid(p.body) {
			t.Errorf("%s %s: body is not JSON", p.dim.Name, p.label)
		}
		if len(p.body) > scaleBodyLimit {
			t.Errorf("%s %s: body of %d B over --max-body-bytes", p.dim.Name, p.label, len(p.body))
		}
	}
	for _, d := range plan {
		want := 4
		if d.Name == "file fixtures, the last matches" {
			want = 3 // no fixture to match among none
		}
		if per[d] != want {
			t.Errorf("%s: %d points, want %d", d.Name, per[d], want)
		}
	}
	// The largest prompt holds 1 MiB of text; the tools point offers 128 nested tools.
	var big struct {
		Messages []scaleMsg
		Tools    []json.RawMessage
	}
	for _, p := range pts {
		if p.dim.Name == "prompt size" && p.units == 1024 {
			_ = json.Unmarshal(p.body, &big)
			if len(big.Messages) != 1 || len(big.Messages[0].Content) != 1<<20 {
				t.Errorf("1024 KB prompt: %d messages", len(big.Messages))
			}
		}
		if p.dim.Name == "tools offered" && p.units == 128 {
			_ = json.Unmarshal(p.body, &big)
			if len(big.Tools) != 128 || !strings.Contains(string(big.Tools[127]), `"items"`) {
				t.Errorf("128 tools: %d tools", len(big.Tools))
			}
		}
	}
}

func TestScalingFlags(t *testing.T) {
	parse := func(args ...string) (scalingConfig, error) {
		var c scalingConfig
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		addScalingFlags(fs, &c, "scaling-")
		if err := fs.Parse(args); err != nil {
			return c, err
		}
		return c, c.finish("scaling-")
	}
	c, err := parse()
	if err != nil || strings.Join(c.Dims, ",") != strings.Join(scalingDimKeys, ",") || c.Reps != 3 || c.Concurrency < 1 {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	if c, err = parse("--scaling-dims", "n, tools,n"); err != nil || strings.Join(c.Dims, ",") != "n,tools" {
		t.Errorf("--scaling-dims n,tools: %v %v", c.Dims, err)
	}
	for _, bad := range [][]string{{"--scaling-dims", "latency"}, {"--scaling-dims", ","}, {"--scaling-reps", "0"}, {"--scaling-window", "0s"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := parseBenchFlags([]string{"--skip-scaling", "--scaling-dims", "prompt"}, io.Discard); err != nil {
		t.Errorf("bench flags: %v", err)
	}
}

func TestSig(t *testing.T) {
	for v, want := range map[float64]string{0.00491: "0.00491", 12.63: "12.6", 1234: "1,234", -0.0254: "−0.0254", 0: "0"} {
		if got := sig(v); got != want {
			t.Errorf("sig(%v) = %q, want %q", v, got, want)
		}
	}
	if sig(math.NaN()) != "—" {
		t.Error("NaN")
	}
}

// TestScalingJSON: what the tables show as "—" (a figure not measured: NaN) is null in
// --json-out, and every other figure keeps its name and value. A NaN made the whole marshal fail,
// and the file came out empty.
func TestScalingJSON(t *testing.T) {
	d := &scaleDimResult{Key: "k", Points: figures([]float64{0, 100, 1000, 10000}, []float64{60, 60, 61, 90})}
	judge(d)
	d.Points[0].PerUnit = math.NaN() // as measured: CPU per zero units
	res := &scalingResult{Dims: []*scaleDimResult{d, {Key: "flat", Points: figures([]float64{1, 8, 32}, []float64{50, 50, 50})}}}
	judge(res.Dims[1])
	rep := report{Scaling: res}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back struct {
		Scaling struct {
			Dims []map[string]any `json:"dimensions"`
		} `json:"scaling"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, b)
	}
	first := back.Scaling.Dims[0]["points"].([]any)[0].(map[string]any)
	if v, ok := first["marginal_cpu_us_per_unit"]; !ok || v != nil {
		t.Errorf("first point's marginal: %v (present %v), want null", v, ok)
	}
	if v, ok := first["cpu_us_per_unit"]; !ok || v != nil {
		t.Errorf("per unit of zero units: %v (present %v), want null", v, ok)
	}
	if first["server_cpu_us_per_request"] != 60.0 || first["units"] != 0.0 {
		t.Errorf("first point: %v", first)
	}
	last := back.Scaling.Dims[0]["points"].([]any)[3].(map[string]any)
	if got := last["marginal_cpu_us_per_unit"]; got != d.Points[3].Marginal {
		t.Errorf("last point's marginal: %v, want %v", got, d.Points[3].Marginal)
	}
	if got := back.Scaling.Dims[0]["marginal_ratio_largest_vs_before"]; got != d.Ratio {
		t.Errorf("ratio: %v, want %v", got, d.Ratio)
	}
	if v, ok := back.Scaling.Dims[1]["marginal_ratio_largest_vs_before"]; !ok || v != nil {
		t.Errorf("a flat dimension's ratio: %v (present %v), want null", v, ok)
	}
	if back.Scaling.Dims[0]["key"] != "k" || back.Scaling.Dims[0]["verdict"] != d.Verdict {
		t.Errorf("dimension fields: %v", back.Scaling.Dims[0])
	}
}
