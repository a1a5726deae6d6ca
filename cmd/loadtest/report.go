package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// target is one of the performance targets and whether this run shows it holding.
type target struct {
	Name  string  `json:"name"`
	Want  string  `json:"want"`
	Got   string  `json:"got"`
	Value float64 `json:"value"`
	Holds *bool   `json:"holds"` // nil: not measured in this run
}

// The targets of issue 16 ("faster than the closest peer with everything on").
const (
	minJSONRatio       = 0.65 // JSON chat requests/s against the bare baseline's
	minStreamRatio     = 0.9  // 16-token stream chunks/s against the baseline's
	minDialectRatio    = 0.9  // every other dialect within 10% of chat on the same answer
	maxOverheadNs      = 5_000
	maxOverheadAllocs  = 20
	maxFixtureMatchNs  = 5_000       // fixture matching with 1,000 loaded, over none
	maxStreamsRSS      = 400_000_000 // 400 MB (10^6 bytes)
	maxStreamBytes     = 25_000      // RSS per open stream above idle (25 KB)
	targetStreams      = 10_000
	telemetryOnSuffix  = "/telemetry=on"
	telemetryOffSuffix = "/telemetry=off"
)

func holds(b bool) *bool { return &b }

func findBench(bs []goBench, name string) *goBench {
	for i := range bs {
		if bs[i].Name == name || bs[i].Name == "Benchmark"+name {
			return &bs[i]
		}
	}
	return nil
}

// evaluate decides each target from the figures; a target whose figures are missing stays
// "not measured".
func evaluate(r *report) []target {
	var ts []target
	ratioTarget := func(name string, mg, base *loadFigures, chunks bool, minimum float64) target {
		t := target{Name: name, Want: fmt.Sprintf("≥ %.2g× baseline", minimum), Got: "not measured"}
		if mg == nil || base == nil {
			return t
		}
		m, b, unit := mg.RPS, base.RPS, "req/s"
		if chunks {
			m, b, unit = mg.ChunksPS, base.ChunksPS, "chunks/s"
		}
		if b > 0 && m > 0 {
			t.Value = m / b
			t.Got = fmt.Sprintf("%.2f× (%s vs %s %s)", t.Value, num(m), num(b), unit)
			t.Holds = holds(t.Value >= minimum)
		}
		return t
	}
	var jm, jb, sm, sb, fj *loadFigures
	if l := r.Load; l != nil {
		jm, jb, sm, sb, fj = l.JSON["mockgateway"], l.JSON["baseline"], l.Stream["mockgateway"], l.Stream["baseline"], l.FixtureJSON
	}
	ts = append(ts,
		ratioTarget("JSON chat req/s, full telemetry, 1,000 fixtures loaded, none matching", jm, jb, false, minJSONRatio),
		ratioTarget("JSON chat req/s, full telemetry, answered by the 1,000th fixture", fj, jb, false, minJSONRatio),
		ratioTarget("16-token stream chunks/s, full telemetry", sm, sb, true, minStreamRatio))

	// Every other dialect against chat on the same answer, both on mockgateway in the same
	// rounds. Streams are compared per stream (each carries the same 16 tokens, so tokens/s has
	// the same ratio), not per event: another dialect's stream sends more events for the same
	// answer.
	dialectTarget := func(name string, d, chat *loadFigures, unit string) target {
		t := target{Name: name, Want: fmt.Sprintf("≥ %.1f× chat", minDialectRatio), Got: "not measured"}
		if d != nil && chat != nil && d.RPS > 0 && chat.RPS > 0 {
			t.Value = d.RPS / chat.RPS
			t.Got = fmt.Sprintf("%.2f× (%s vs %s %s)", t.Value, num(d.RPS), num(chat.RPS), unit)
			t.Holds = holds(t.Value >= minDialectRatio)
		}
		return t
	}
	var cj, cs *loadFigures
	if l := r.Load; l != nil {
		cj, cs = l.JSON["mockgateway"], l.Stream["mockgateway"]
	}
	for _, d := range loadDialects() {
		var dj, ds *loadFigures
		if l := r.Load; l != nil && l.Dialects[d.kind] != nil {
			dj, ds = l.Dialects[d.kind].JSON, l.Dialects[d.kind].StreamRun
		}
		ts = append(ts,
			dialectTarget(d.name+" JSON req/s vs chat, same answer", dj, cj, "req/s"),
			dialectTarget(d.name+" 16-token streams/s vs chat, same answer", ds, cs, "streams/s"))
	}

	// Issue 35: the shared state store costs a request that needs none at most a fifth.
	if l := r.Load; l != nil {
		ts = append(ts, storeTargets(l)...)
	}

	on, off := findBench(r.GoBench, "ChatJSON"+telemetryOnSuffix), findBench(r.GoBench, "ChatJSON"+telemetryOffSuffix)
	ns := target{Name: "telemetry overhead per JSON request (time)", Want: fmt.Sprintf("≤ %d µs", maxOverheadNs/1000), Got: "not measured"}
	allocs := target{Name: "telemetry overhead per JSON request (allocs)", Want: fmt.Sprintf("≤ %d allocs", maxOverheadAllocs), Got: "not measured"}
	if on != nil && off != nil {
		ns.Value = on.NsOp - off.NsOp
		ns.Got = fmt.Sprintf("%.1f µs (%s − %s ns/op)", ns.Value/1000, num(on.NsOp), num(off.NsOp))
		ns.Holds = holds(ns.Value <= maxOverheadNs)
		allocs.Value = on.AllocsOp - off.AllocsOp
		allocs.Got = fmt.Sprintf("%s allocs (%s − %s allocs/op)", num(allocs.Value), num(on.AllocsOp), num(off.AllocsOp))
		allocs.Holds = holds(allocs.Value <= maxOverheadAllocs)
	}
	ts = append(ts, ns, allocs)

	// Fixture matching: a request matching none of 1,000 fixtures, or the 1,000th, against the
	// same request with none loaded (BenchmarkMatch, internal/fixtures).
	none := findBench(r.GoBench, "Match/fixtures=0/none")
	for _, c := range []string{"none", "last"} {
		t := target{Name: "fixture matching, 1,000 fixtures loaded, matching " + map[string]string{"none": "none of them", "last": "the 1,000th"}[c], Want: "≤ 5 µs over none loaded", Got: "not measured"}
		if m := findBench(r.GoBench, "Match/fixtures=1000/"+c); m != nil && none != nil {
			t.Value = m.NsOp - none.NsOp
			t.Got = fmt.Sprintf("+%.2f µs (%s − %s ns/op, %s allocs/op)", t.Value/1000, num(m.NsOp), num(none.NsOp), num(m.AllocsOp))
			t.Holds = holds(t.Value <= maxFixtureMatchNs)
		}
		ts = append(ts, t)
	}

	mrss := target{Name: "10,000 concurrent streams: RSS", Want: "≤ 400 MB", Got: "not measured"}
	mper := target{Name: "10,000 concurrent streams: RSS per stream above idle", Want: "≤ 25 KB", Got: "not measured"}
	merr := target{Name: "10,000 concurrent streams: errors", Want: "0", Got: "not measured"}
	if m := r.Memory; m != nil && m.RSSOpen > 0 {
		mrss.Value = float64(m.RSSOpen)
		mrss.Got = fmt.Sprintf("%s MB with %s open", mb(m.RSSOpen), num(float64(m.Opened)))
		mper.Value = m.PerStreamBytes
		mper.Got = fmt.Sprintf("%s KB", num(m.PerStreamBytes/1000))
		if b := m.Baseline; b != nil && b.Opened > 0 {
			mper.Got += fmt.Sprintf(" (a bare net/http handler holding the same streams: %s KB)", num(b.PerStreamBytes/1000))
		}
		merr.Value = float64(m.Errors)
		merr.Got = fmt.Sprintf("%d of %s", m.Errors, num(float64(m.Streams)))
		if m.Streams >= targetStreams {
			mrss.Holds = holds(m.RSSOpen <= maxStreamsRSS && m.Opened == m.Streams)
			mper.Holds = holds(m.PerStreamBytes <= maxStreamBytes && m.Opened == m.Streams)
			merr.Holds = holds(m.Errors == 0 && m.Opened == m.Streams)
		} else {
			mrss.Got += fmt.Sprintf(" (only %d streams asked for: not judged)", m.Streams)
			mper.Got += " (not judged)"
			merr.Got += " (not judged)"
		}
	}
	return append(ts, mrss, mper, merr)
}

// num prints a figure with thousands separators and no more precision than it deserves.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var s string
	switch {
	case v >= 100 || v == math.Trunc(v):
		s = group(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case v >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if neg {
		return "−" + s
	}
	return s
}

func group(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func mb(bytes int64) string { return strconv.FormatFloat(float64(bytes)/1e6, 'f', 1, 64) }

func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// roundRatios is ratio(a's median, b's median) followed by each round's own ratio of the two,
// a's round i against b's round i (run beside it): the headline is the ratio of the medians,
// and the rounds show how far the machine moved it.
func roundRatios(a, b *loadFigures) string {
	out := ratio(a.RPS, b.RPS)
	if len(a.Rounds) < 2 || len(a.Rounds) != len(b.Rounds) {
		return out
	}
	rounds := make([]string, len(a.Rounds))
	for i := range a.Rounds {
		rounds[i] = strings.TrimSuffix(ratio(a.Rounds[i].RPS(), b.Rounds[i].RPS()), "×")
	}
	return out + " (rounds " + strings.Join(rounds, ", ") + ")"
}

func yesNo(h *bool) string {
	switch {
	case h == nil:
		return "not measured"
	case *h:
		return "**yes**"
	default:
		return "**no**"
	}
}

// writeMarkdown prints the one table of every figure, with the machine and the command.
func writeMarkdown(w io.Writer, r *report) {
	c := r.Config
	m := r.Machine
	fmt.Fprintf(w, "\n## mockgateway performance\n\n")
	fmt.Fprintf(w, "- Machine: %d cores (nproc), %s; %s; Linux %s; RLIMIT_NOFILE %d\n", m.NProc, m.CPUModel, m.GoVersion, m.Kernel, m.NoFile)
	fmt.Fprintf(w, "- Command: `%s` (run %s)\n", r.Command, r.Started.UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "- Load: wrk -t%d -c%d -d%s after a %s warm-up, median of %d rounds, servers alternating; mockgateway with full telemetry (OTEL_TRACES_SAMPLER=always_on into the embedded span buffer, metrics, `--log-level info --log-file`, stderr to /dev/null); baseline: cmd/baseline, a bare net/http handler with fixed bytes\n",
		c.Threads, c.Connections, c.DurationS, c.WarmupS, c.Rounds)
	fmt.Fprintf(w, "- Requests: mock-echo with a 15-word user message (\"echo:\" + 15 words = 16 content tokens); the stream is a role chunk, 16 content chunks, a finish chunk, then [DONE]\n")
	for _, d := range loadDialects() {
		if l := r.Load; l != nil && l.Dialects[d.kind] != nil {
			fmt.Fprintf(w, "- %s: the same message to POST %s, the same answer (text and 16 output tokens, checked before the load), on mockgateway in the same rounds; its stream is %d events (16 text deltas), so streams are compared per stream (= per 16 tokens), not per event\n",
				d.name, d.json.path, l.Dialects[d.kind].Stream.Events)
		}
	}
	if l := r.Load; l != nil && (l.QuotaJSON != nil || l.QuotaStream != nil) {
		fmt.Fprintf(w, "- With a quota: the same requests to the same mockgateway in the same rounds with `%s: %s` (limits no load reaches: every request draws on its buckets and settles them, none is refused)\n", quotaHeader, benchQuota)
	}
	if l := r.Load; l != nil && (l.CapacityJSON != nil || l.CapacityStream != nil) {
		fmt.Fprintf(w, "- With a capacity: the same requests in the same rounds to a mockgateway started as the first but whose catalog is mock-echo with `capacity: %d` (no load fills it: every request takes a place in the gate and gives it back, none waits)\n", benchCapacity)
	}
	if r.GoBenchCmd != "" {
		fmt.Fprintf(w, "- Go benchmarks: `%s` (medians)\n", r.GoBenchCmd)
	}
	fmt.Fprintf(w, "\n| figure | mockgateway | baseline / telemetry off | ratio / difference | target | holds |\n|---|---:|---:|---:|---|---|\n")
	row := func(fig, a, b, rat, want, ok string) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", fig, a, b, rat, want, ok)
	}
	tgt := func(name string) (string, string) {
		for _, t := range r.Targets {
			if t.Name == name {
				return t.Want, yesNo(t.Holds)
			}
		}
		return "", ""
	}

	if l := r.Load; l != nil {
		pm, pb := l.Probe["mockgateway"], l.Probe["baseline"]
		row("response size: JSON body / whole stream (bytes)", fmt.Sprintf("%d / %d", pm.JSONBytes, pm.Stream.Bytes), fmt.Sprintf("%d / %d", pb.JSONBytes, pb.Stream.Bytes), "", "", "")
		jm, jb := l.JSON["mockgateway"], l.JSON["baseline"]
		sm, sb := l.Stream["mockgateway"], l.Stream["baseline"]
		if jm != nil && jb != nil && len(jm.Rounds) > 0 {
			want, ok := tgt("JSON chat req/s, full telemetry, 1,000 fixtures loaded, none matching")
			row("**JSON chat requests/s** (1,000 fixtures loaded, none matching)", num(jm.RPS), num(jb.RPS), roundRatios(jm, jb), want, ok)
			if fj := l.FixtureJSON; fj != nil && len(fj.Rounds) > 0 {
				want, ok := tgt("JSON chat req/s, full telemetry, answered by the 1,000th fixture")
				row("**JSON chat requests/s answered by the 1,000th fixture**", num(fj.RPS), num(jb.RPS), roundRatios(fj, jb), want, ok)
				row("server CPU per fixture-answered JSON request (µs, user+sys)", num(fj.CPUus), num(jb.CPUus), ratio(fj.CPUus, jb.CPUus), "", "")
			}
			row("server CPU per JSON request (µs, user+sys)", num(jm.CPUus), num(jb.CPUus), ratio(jm.CPUus, jb.CPUus), "", "")
			row("server preemptions per JSON request (involuntary context switches)", num(jm.Preempt), num(jb.Preempt), ratio(jm.Preempt, jb.Preempt), "", "")
			row("JSON chat latency p50 (ms)", num(jm.P50ms), num(jb.P50ms), ratio(jm.P50ms, jb.P50ms), "", "")
			row("JSON chat latency p99 (ms)", num(jm.P99ms), num(jb.P99ms), ratio(jm.P99ms, jb.P99ms), "", "")
			row("JSON chat wrk errors (all rounds)", strconv.FormatInt(jm.Errors, 10), strconv.FormatInt(jb.Errors, 10), "", "", "")
		}
		if sm != nil && sb != nil && len(sm.Rounds) > 0 {
			row("16-token stream requests/s", num(sm.RPS), num(sb.RPS), ratio(sm.RPS, sb.RPS), "", "")
			want, ok := tgt("16-token stream chunks/s, full telemetry")
			row(fmt.Sprintf("**16-token stream chunks/s** (%d chunks per stream)", l.ChunksPerStream), num(sm.ChunksPS), num(sb.ChunksPS), roundRatios(sm, sb), want, ok)
			row("server CPU per stream (µs, user+sys)", num(sm.CPUus), num(sb.CPUus), ratio(sm.CPUus, sb.CPUus), "", "")
			row("server preemptions per stream (involuntary context switches)", num(sm.Preempt), num(sb.Preempt), ratio(sm.Preempt, sb.Preempt), "", "")
			row("stream latency p50 (ms, whole stream)", num(sm.P50ms), num(sb.P50ms), ratio(sm.P50ms, sb.P50ms), "", "")
			row("stream latency p99 (ms, whole stream)", num(sm.P99ms), num(sb.P99ms), ratio(sm.P99ms, sb.P99ms), "", "")
			row("stream wrk errors (all rounds)", strconv.FormatInt(sm.Errors, 10), strconv.FormatInt(sb.Errors, 10), "", "", "")
		}
		writeStoreRows(row, tgt, l)
		writeQuotaRows(row, l)
		for _, d := range loadDialects() {
			if p := l.Dialects[d.kind]; p != nil {
				writeDialectRows(row, tgt, l, d.name, p)
			}
		}
		row("mockgateway after the load: RSS (MB) / access-log lines / spans in buffer", fmt.Sprintf("%s / %s / %d", mb(l.RSSAfterLoad), num(float64(l.AccessLogLines)), l.SpansBuffered), "", "", "", "")
	}

	for _, b := range r.GoBench {
		if !strings.HasSuffix(b.Name, telemetryOnSuffix) {
			if !strings.HasSuffix(b.Name, telemetryOffSuffix) {
				row(fmt.Sprintf("Go %s: ns/op · B/op · allocs/op", b.Name), fmt.Sprintf("%s · %s · %s", num(b.NsOp), num(b.BOp), num(b.AllocsOp)), "", "", "", "")
			}
			continue
		}
		base := strings.TrimSuffix(b.Name, telemetryOnSuffix)
		off := findBench(r.GoBench, base+telemetryOffSuffix)
		label := strings.TrimPrefix(base, "Benchmark")
		if off == nil {
			row(fmt.Sprintf("Go %s (telemetry on): ns/op · B/op · allocs/op", label), fmt.Sprintf("%s · %s · %s", num(b.NsOp), num(b.BOp), num(b.AllocsOp)), "", "", "", "")
			continue
		}
		nsWant, nsOK, alWant, alOK := "", "", "", ""
		if label == "ChatJSON" {
			nsWant, nsOK = tgt("telemetry overhead per JSON request (time)")
			alWant, alOK = tgt("telemetry overhead per JSON request (allocs)")
		}
		row(fmt.Sprintf("Go %s ns/op (on · off)", label), num(b.NsOp), num(off.NsOp), fmt.Sprintf("+%s µs", num((b.NsOp-off.NsOp)/1000)), nsWant, nsOK)
		row(fmt.Sprintf("Go %s B/op", label), num(b.BOp), num(off.BOp), "+"+num(b.BOp-off.BOp)+" B", "", "")
		row(fmt.Sprintf("Go %s allocs/op", label), num(b.AllocsOp), num(off.AllocsOp), "+"+num(b.AllocsOp-off.AllocsOp), alWant, alOK)
	}

	if mm := r.Memory; mm != nil {
		row("RSS idle, before the streams (MB)", mb(mm.RSSBefore), "", "", "", "")
		want, ok := tgt("10,000 concurrent streams: RSS")
		row(fmt.Sprintf("**RSS with %s concurrent open streams (MB)** (x-mock-latency: %s)", num(float64(mm.Opened)), mm.Latency), mb(mm.RSSOpen), "", "", want, ok)
		want, ok = tgt("10,000 concurrent streams: RSS per stream above idle")
		base, ratioTo := "", ""
		if b := mm.Baseline; b != nil && b.Opened > 0 {
			base, ratioTo = num(b.PerStreamBytes), ratio(mm.PerStreamBytes, b.PerStreamBytes)
		}
		row("**per open stream (bytes of RSS above idle)**; baseline: the bare handler holding the same streams", num(mm.PerStreamBytes), base, ratioTo, want, ok)
		want, ok = tgt("10,000 concurrent streams: errors")
		row("**stream errors while opening**", fmt.Sprintf("%d (of %s; %s active by the gauge)", mm.Errors, num(float64(mm.Streams)), num(mm.StreamsActive)), "", "", want, ok)
		row("time to open them (s)", num(mm.OpenSeconds), "", "", "", "")
		row("goroutines: idle / with the streams open / after closing", fmt.Sprintf("%s / %s / %s", num(mm.GoroutinesBefore), num(mm.GoroutinesOpen), num(mm.GoroutinesAfter)), "", "", "", "")
		row("RSS after closing them (MB)", mb(mm.RSSAfter), "", "", "", "")
	}

	fmt.Fprintf(w, "\nTargets:\n\n")
	for _, t := range r.Targets {
		fmt.Fprintf(w, "- %s %s: %s — %s\n", t.Name, t.Want, t.Got, strings.Trim(yesNo(t.Holds), "*"))
	}
	var notes []string
	if r.Load != nil {
		notes = append(notes, r.Load.Notes...)
	}
	if r.Memory != nil {
		for _, e := range r.Memory.ErrorSamples {
			notes = append(notes, "stream error: "+e)
		}
	}
	notes = append(notes, r.Problems...)
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nProblems and notes:\n\n")
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", strings.ReplaceAll(strings.TrimSpace(n), "\n", "\n  "))
		}
	}
}

// writeDialectRows prints one other dialect's figures beside chat's on mockgateway.
func writeDialectRows(row func(fig, a, b, rat, want, ok string), tgt func(string) (string, string), l *loadResult, name string, p *dialectLoad) {
	pm, cj, cs := l.Probe["mockgateway"], l.JSON["mockgateway"], l.Stream["mockgateway"]
	row(name+" response size: JSON body / whole stream (bytes)", fmt.Sprintf("%d / %d", p.JSONBytes, p.Stream.Bytes), fmt.Sprintf("chat: %d / %d", pm.JSONBytes, pm.Stream.Bytes), "", "", "")
	if j := p.JSON; j != nil && len(j.Rounds) > 0 && cj != nil {
		want, ok := tgt(name + " JSON req/s vs chat, same answer")
		row("**"+name+" JSON requests/s** (vs chat on mockgateway)", num(j.RPS), num(cj.RPS), ratio(j.RPS, cj.RPS), want, ok)
		row("server CPU per "+name+" JSON request (µs, vs chat)", num(j.CPUus), num(cj.CPUus), ratio(j.CPUus, cj.CPUus), "", "")
		row(name+" JSON latency p50 / p99 (ms, vs chat)", num(j.P50ms)+" / "+num(j.P99ms), num(cj.P50ms)+" / "+num(cj.P99ms), "", "", "")
		row(name+" JSON wrk errors (all rounds)", strconv.FormatInt(j.Errors, 10), "", "", "", "")
	}
	if st := p.StreamRun; st != nil && len(st.Rounds) > 0 && cs != nil {
		want, ok := tgt(name + " 16-token streams/s vs chat, same answer")
		row("**"+name+" 16-token streams/s** (vs chat on mockgateway; tokens/s is × 16 for both)", num(st.RPS), num(cs.RPS), ratio(st.RPS, cs.RPS), want, ok)
		row(fmt.Sprintf("%s stream events/s (%d events per stream, vs chat's %d chunks)", name, p.Stream.Events, l.ChunksPerStream), num(st.ChunksPS), num(cs.ChunksPS), ratio(st.ChunksPS, cs.ChunksPS), "", "")
		row("server CPU per "+name+" stream (µs, vs chat)", num(st.CPUus), num(cs.CPUus), ratio(st.CPUus, cs.CPUus), "", "")
		row(name+" stream latency p50 / p99 (ms, whole stream, vs chat)", num(st.P50ms)+" / "+num(st.P99ms), num(cs.P50ms)+" / "+num(cs.P99ms), "", "", "")
		row(name+" stream wrk errors (all rounds)", strconv.FormatInt(st.Errors, 10), "", "", "", "")
	}
}
