package main

// The scaling table's verdicts and its Markdown.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// judge fills each point's marginal cost per unit (over the dimension's first point) and the
// dimension's verdict. The marginal cost leaves out what every request costs whatever its size
// (a fixed cost makes the plain per-unit figure fall as the work grows, which would hide growth).
// The verdict compares the marginal cost at the largest point with that at the point before it:
// linear work keeps it flat (ratio 1), quadratic work multiplies it by the step between the two
// points (4× here). Noise: a growth of CPU within noiseFloor of the first point counts as none.
func judge(d *scaleDimResult) {
	d.Ratio, d.Before, d.Largest = math.NaN(), math.NaN(), math.NaN()
	pts := d.Points
	for i := range pts {
		pts[i].Marginal = math.NaN()
		if i > 0 && pts[i].Units > pts[0].Units {
			pts[i].Marginal = (pts[i].CPUus - pts[0].CPUus) / (pts[i].Units - pts[0].Units)
		}
	}
	if len(pts) < 3 {
		d.Verdict = "not judged: fewer than three points measured"
		return
	}
	k, m := len(pts)-1, len(pts)-2
	eps := noiseFloor(pts[0].CPUus)
	dk := pts[k].CPUus - pts[0].CPUus
	if dk <= 2*eps {
		d.Verdict = fmt.Sprintf("linear or better: no growth beyond noise (%s µs at %s against %s µs at %s)",
			num(pts[k].CPUus), pts[k].Label, num(pts[0].CPUus), pts[0].Label)
		d.Linear = holds(true)
		return
	}
	dm := pts[m].CPUus - pts[0].CPUus
	if dm < eps { // a growth within noise before the largest point: the benefit of the doubt
		dm, d.BeforeNoise = eps, true
	}
	d.Largest = dk / (pts[k].Units - pts[0].Units)
	d.Before = dm / (pts[m].Units - pts[0].Units)
	d.Ratio = d.Largest / d.Before
	switch {
	case d.Ratio <= 1.5:
		d.Verdict = "linear or better"
		d.Linear = holds(true)
	case d.Ratio <= 2:
		d.Verdict = "linear within noise (marginal cost up 1.5–2×: watch it)"
		d.Linear = holds(true)
	default:
		d.Verdict = "**superlinear**: the cost per unit grows with the work"
		d.Linear = holds(false)
	}
}

// noiseFloor is the CPU-per-request difference taken for noise: 10% of the first point, plus
// 1 µs.
func noiseFloor(firstUS float64) float64 { return 0.10*firstUS + 1 }

// --- the table ---

// sig prints a small figure with three significant digits (a cost per fixture is nanoseconds).
func sig(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case math.Abs(v) >= 100:
		return num(v)
	case v == 0:
		return "0"
	}
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(v, 'f', 6, 64)
	}
	return strings.Replace(s, "-", "−", 1)
}

func ratioText(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", r)
}

// writeScaling prints the scaling section: one table of every point, then one verdict a
// dimension. heading: print the section's own heading (bench) or not (the subcommand has one).
func writeScaling(w io.Writer, r *scalingResult, heading bool) {
	if r == nil {
		return
	}
	c := r.Config
	if heading {
		fmt.Fprintf(w, "\n## Scaling: server CPU per request as the work grows\n\n")
	}
	fmt.Fprintf(w, "- Server: the built binary with full telemetry (as bench starts it: every span sampled into the buffer, metrics, the access log to a file, the journal on), plus `%s`\n", r.Server)
	fmt.Fprintf(w, "- Each point: a probe whose answer must show the work, %s of warm-up, then %d window(s) of the same number of requests, %d in flight; server CPU is utime+stime from /proc/PID/stat around each window (median reported); %.0f s in all\n",
		c.WarmupS, c.Reps, c.Concurrency, r.Seconds)
	fmt.Fprintf(w, "- µs per unit = CPU per request / units; marginal = (CPU per request − the first point's) / (units − the first point's), the cost the added work adds; the verdict compares the marginal cost at the largest point with the point before it (flat: linear; ×4 per 4× step: quadratic), growth within 10%% + 1 µs of the first point being noise\n\n")
	fmt.Fprintln(w, "| dimension | point | request B | answer B | server CPU µs/request | µs per unit | marginal µs per unit | requests × windows |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, d := range r.Dims {
		for _, p := range d.Points {
			fmt.Fprintf(w, "| %s (per %s) | %s | %s | %s | %s | %s | %s | %d × %d |\n", d.Name, d.Unit, p.Label, num(float64(p.ReqBytes)), num(float64(p.RespBytes)),
				num(p.CPUus), sig(p.PerUnit), sig(p.Marginal), p.Requests, len(p.Windows))
		}
	}
	fmt.Fprintln(w, "\n| dimension | unit | marginal µs per unit: before the largest → largest | ratio | verdict |")
	fmt.Fprintln(w, "|---|---|---:|---:|---|")
	for _, d := range r.Dims {
		span := "—"
		if !math.IsNaN(d.Ratio) {
			before := sig(d.Before)
			if d.BeforeNoise {
				before = "≤ " + before + " (noise floor)"
			}
			span = before + " → " + sig(d.Largest)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", d.Name, d.Unit, span, ratioText(d.Ratio), d.Verdict)
	}
	fmt.Fprintln(w)
	for _, d := range r.Dims {
		fmt.Fprintf(w, "- %s: %s\n", d.Name, d.Request)
	}
}

// A figure not measured (the first point's marginal cost, a verdict not reached) is NaN, which
// the tables show as "—" and JSON cannot hold: --json-out writes it as null. The outer fields
// below take the place of the embedded ones of the same JSON name.

func (f scaleFigure) MarshalJSON() ([]byte, error) {
	type plain scaleFigure
	return json.Marshal(struct {
		plain
		PerUnit  *float64 `json:"cpu_us_per_unit"`
		Marginal *float64 `json:"marginal_cpu_us_per_unit"`
	}{plain(f), finite(f.PerUnit), finite(f.Marginal)})
}

func (d scaleDimResult) MarshalJSON() ([]byte, error) {
	type plain scaleDimResult
	return json.Marshal(struct {
		plain
		Before  *float64 `json:"marginal_before_largest"`
		Largest *float64 `json:"marginal_largest"`
		Ratio   *float64 `json:"marginal_ratio_largest_vs_before"`
	}{plain(d), finite(d.Before), finite(d.Largest), finite(d.Ratio)})
}

// finite is v, or nil (JSON null) when it is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
