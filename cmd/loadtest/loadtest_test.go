package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/catalog"
)

const wrkOutput = `Running 10s test @ http://127.0.0.1:41103/v1/chat/completions
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.90ms    5.16ms  69.58ms   92.55%
    Req/Sec     5.04k     1.98k   10.10k    75.00%
  Latency Distribution
     50%    1.47ms
     75%    3.78ms
     90%    6.96ms
     99%   22.63ms
  20236 requests in 2.04s, 13.55MB read
  Non-2xx or 3xx responses: 12
Requests/sec:   9941.72
Transfer/sec:      6.66MB
WRKJSON {"requests":20236,"duration_us":2035462,"bytes":14205675,"errors":{"connect":0,"read":1,"write":0,"status":12,"timeout":2},"latency_us":{"mean":2897.6,"stdev":5158.1,"max":69578,"p50":1474,"p90":6962,"p99":22633,"p999":61528}}
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkOutput)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 20236 || r.DurationUS != 2035462 || r.Bytes != 14205675 {
		t.Errorf("counts: %+v", r)
	}
	if r.Errors.Status != 12 || r.Errors.Read != 1 || r.Errors.Timeout != 2 || r.Errors.total() != 15 {
		t.Errorf("errors: %+v", r.Errors)
	}
	if r.Latency.P50 != 1474 || r.Latency.P99 != 22633 || r.Latency.Max != 69578 {
		t.Errorf("latency: %+v", r.Latency)
	}
	if r.TextRPS != 9941.72 || r.TextNon2xx != 12 {
		t.Errorf("text figures: %v %v", r.TextRPS, r.TextNon2xx)
	}
	if got := r.RPS(); got < 9941 || got > 9942 {
		t.Errorf("RPS = %v, want 20236/2.035462 s", got)
	}
	if _, err := parseWrk("Requests/sec: 10\n"); err == nil {
		t.Error("output without the summary line was accepted")
	}
}

func TestWrkScript(t *testing.T) {
	s := wrkScript(jsonRequest, map[string]string{"x-mock-latency": "fast"})
	for _, want := range []string{`wrk.method = "POST"`, `wrk.headers["Content-Type"] = "application/json"`, `wrk.headers["x-mock-latency"] = "fast"`, "[==[" + jsonRequest + "]==]", "latency:percentile(99)", wrkSummaryPrefix} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if got := wrkSeconds(1500 * time.Millisecond); got != "2s" {
		t.Errorf("wrkSeconds(1.5s) = %q", got)
	}
	if got := wrkSeconds(0); got != "1s" {
		t.Errorf("wrkSeconds(0) = %q", got)
	}
}

const benchOutput = `goos: linux
goarch: amd64
pkg: mockgateway/internal/server
cpu: AMD EPYC
BenchmarkChatJSON/telemetry=on-2         	   23404	     51000 ns/op	   25746 B/op	     180 allocs/op
BenchmarkChatJSON/telemetry=on-2         	   23404	     53000 ns/op	   25750 B/op	     181 allocs/op
BenchmarkChatJSON/telemetry=on-2         	   23404	     52000 ns/op	   25748 B/op	     180 allocs/op
BenchmarkChatJSON/telemetry=off-2        	   40000	     29562 ns/op	   18758 B/op	     147 allocs/op
BenchmarkModels-2                        	  100000	     10000 ns/op	    5000 B/op	      40 allocs/op
BenchmarkChatStream64/telemetry=on
    bench_test.go:10: a log line
BenchmarkChatStream64/telemetry=on-2     	    8000	    137177 ns/op	   76485 B/op	     276 allocs/op
PASS
ok  	mockgateway/internal/server	12.3s
`

func TestParseBenchOutput(t *testing.T) {
	lines, cpu, err := parseBenchOutput(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if cpu != "AMD EPYC" {
		t.Errorf("cpu = %q", cpu)
	}
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6: %+v", len(lines), lines)
	}
	s := summarize(lines)
	if len(s) != 4 {
		t.Fatalf("%d benchmarks, want 4: %+v", len(s), s)
	}
	on := findBench(s, "ChatJSON/telemetry=on")
	if on == nil || on.Runs != 3 || on.NsOp != 52000 || on.BOp != 25748 || on.AllocsOp != 180 {
		t.Errorf("ChatJSON on (medians): %+v", on)
	}
	if m := findBench(s, "Models"); m == nil || m.NsOp != 10000 {
		t.Errorf("Models: %+v", m)
	}
	if trimProcs("BenchmarkX/n=64-16") != "BenchmarkX/n=64" || trimProcs("BenchmarkX/mode-a") != "BenchmarkX/mode-a" {
		t.Error("trimProcs")
	}
}

func TestEvaluateTargets(t *testing.T) {
	r := &report{
		GoBench: []goBench{
			{Name: "BenchmarkChatJSON/telemetry=on", NsOp: 34000, AllocsOp: 165},
			{Name: "BenchmarkChatJSON/telemetry=off", NsOp: 30000, AllocsOp: 147},
		},
		Load: &loadResult{
			JSON:        map[string]*loadFigures{"mockgateway": {RPS: 34000}, "baseline": {RPS: 50000}},
			FixtureJSON: &loadFigures{RPS: 30000},
			Stream:      map[string]*loadFigures{"mockgateway": {ChunksPS: 95000}, "baseline": {ChunksPS: 100000}},
		},
		Memory: &memResult{Streams: 10000, Opened: 10000, RSSOpen: 450_000_000, PerStreamBytes: 24_000},
	}
	got := map[string]*bool{}
	for _, tg := range evaluate(r) {
		got[tg.Name] = tg.Holds
	}
	want := map[string]bool{
		"JSON chat req/s, full telemetry, 1,000 fixtures loaded, none matching": true,  // 0.68×
		"JSON chat req/s, full telemetry, answered by the 1,000th fixture":      false, // 0.6×
		"16-token stream chunks/s, full telemetry":                              true,  // 0.95×
		"telemetry overhead per JSON request (time)":                            true,  // 4 µs
		"telemetry overhead per JSON request (allocs)":                          true,  // 18
		"10,000 concurrent streams: RSS":                                        false, // 450 MB
		"10,000 concurrent streams: RSS per stream above idle":                  true,  // 24 KB
		"10,000 concurrent streams: errors":                                     true,
	}
	for name, w := range want {
		if got[name] == nil || *got[name] != w {
			t.Errorf("%s: holds = %v, want %v", name, got[name], w)
		}
	}
	if h := evaluate(&report{})[2].Holds; h != nil {
		t.Error("a target without figures was judged")
	}
}

const procStatus = `Name:	mockgateway
Umask:	0022
State:	S (sleeping)
VmPeak:	 1267340 kB
VmRSS:	   17964 kB
RssAnon:	    8560 kB
Threads:	7
`

func TestParseProcStatus(t *testing.T) {
	v, err := parseProcStatus(procStatus, "VmRSS")
	if err != nil || v != 17964*1024 {
		t.Errorf("VmRSS = %d, %v", v, err)
	}
	if v, err := parseProcStatus(procStatus, "Threads"); err != nil || v != 7 {
		t.Errorf("Threads = %d, %v", v, err)
	}
	cpu, err := parseProcStat("4242 (mock gateway) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 10 0 123 1300000000 4500 18446744073709551615\n")
	if err != nil || cpu != 3.25 {
		t.Errorf("parseProcStat = %v, %v; want 3.25 s (250+75 ticks)", cpu, err)
	}
	if _, err := parseProcStatus(procStatus, "VmSwap"); err == nil {
		t.Error("a missing key was found")
	}
	if m := cpuModel("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"); m != "AMD EPYC 7B13" {
		t.Errorf("cpuModel = %q", m)
	}
}

// TestPreemptions reads this process's own threads: a count, and one that never goes down.
func TestPreemptions(t *testing.T) {
	a, err := preemptions(os.Getpid())
	if err != nil || a < 0 {
		t.Fatalf("preemptions = %d, %v", a, err)
	}
	if b, err := preemptions(os.Getpid()); err != nil || b < a {
		t.Errorf("preemptions went from %d to %d (%v)", a, b, err)
	}
	if _, err := preemptions(1 << 30); err == nil {
		t.Error("a pid that does not exist was read")
	}
}

func TestShapeOf(t *testing.T) {
	body := "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"echo:\"}}]}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\" hi\"}}]}\n\n" +
		"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	s, err := shapeOf([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if s.DataFrames != 5 || s.Chunks != 4 || s.ContentTokens != 2 || !s.Done || s.ErrorFrames != 0 || s.Bytes != len(body) {
		t.Errorf("shape: %+v", s)
	}
	s, err = shapeOf([]byte("data: {\"error\":{\"code\":\"x\"}}\n\ndata: [DONE]\n\n"))
	if err != nil || s.ErrorFrames != 1 || !s.Done {
		t.Errorf("error frame: %+v %v", s, err)
	}
	if _, err := shapeOf([]byte("event: x\ndata: {}\n\n")); err == nil {
		t.Error("a non-data frame was accepted")
	}
}

func TestJudgeSoak(t *testing.T) {
	mk := func(rss []int64, gor float64) []soakSample {
		var ss []soakSample
		for i, r := range rss {
			at := time.Duration(i+1) * 10 * time.Second
			ss = append(ss, soakSample{At: at, RSS: r, Goroutines: gor})
		}
		return ss
	}
	idle := soakSample{Goroutines: 9, Label: "idle, before"}
	after := soakSample{Goroutines: 12, Label: "idle, after"}
	flat := mk([]int64{40e6, 50e6, 52e6, 53e6, 52e6, 53e6, 52e6, 53e6, 52e6, 53e6}, 40)
	if v, failed := judgeSoak(flat, idle, after, 0, 100*time.Second); failed {
		t.Errorf("a plateau failed: %v", v)
	}
	climbing := mk([]int64{40e6, 60e6, 80e6, 100e6, 120e6, 140e6, 160e6, 180e6, 200e6, 220e6}, 40)
	if v, failed := judgeSoak(climbing, idle, after, 0, 100*time.Second); !failed {
		t.Errorf("a climbing RSS passed: %v", v)
	}
	if v, failed := judgeSoak(flat, idle, soakSample{Goroutines: 200}, 0, 100*time.Second); !failed {
		t.Errorf("leaked goroutines passed: %v", v)
	}
	if v, failed := judgeSoak(flat, idle, after, 1, 100*time.Second); !failed {
		t.Errorf("an unexpected outcome passed: %v", v)
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{12931.4: "12,931", 9: "9", 2.5: "2.50", 15.22: "15.2", -33: "−33", 1234567: "1,234,567"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestRoundRatios: the ratio of the medians, then each round's own ratio, round against round.
func TestRoundRatios(t *testing.T) {
	figures := func(rps ...float64) *loadFigures {
		f := &loadFigures{}
		for _, r := range rps {
			f.Rounds = append(f.Rounds, wrkResult{Requests: int64(r * 10), DurationUS: 10_000_000})
		}
		f.finish(18)
		return f
	}
	for _, c := range []struct {
		a, b *loadFigures
		want string
	}{
		{figures(47357, 41593, 42937), figures(68869, 57577, 68113), "0.63× (rounds 0.69, 0.72, 0.63)"},
		{figures(9000), figures(10000), "0.90×"},                     // one round: nothing to add
		{figures(9000, 9400), figures(10000, 10000, 10000), "0.92×"}, // a round missing: not paired
	} {
		if got := roundRatios(c.a, c.b); got != c.want {
			t.Errorf("roundRatios = %q, want %q", got, c.want)
		}
	}
}

// TestStoreTargets: the store's figures against the in-memory mockgateway's of the same run —
// requests/s store ÷ memory, CPU per request memory ÷ store — judged at 0.8×, shown in the table
// with redis-server's own CPU, and the kinds parse.
func TestStoreTargets(t *testing.T) {
	l := &loadResult{
		JSON:        map[string]*loadFigures{"mockgateway": {RPS: 30000, CPUus: 24, Rounds: []wrkResult{{}}}},
		Stream:      map[string]*loadFigures{"mockgateway": {RPS: 8000, CPUus: 100, Rounds: []wrkResult{{}}}},
		StoreJSON:   &loadFigures{RPS: 25000, CPUus: 28, StoreCPUus: 1.6, Rounds: []wrkResult{{}}}, // 0.83×, 0.86×
		StoreStream: &loadFigures{RPS: 6000, CPUus: 130, Rounds: []wrkResult{{}}},                  // 0.75×, 0.77×
	}
	got := map[string]target{}
	for _, tg := range evaluate(&report{Load: l}) {
		got[tg.Name] = tg
	}
	for name, want := range map[string]bool{
		"JSON chat req/s with --state-store vs in memory":                          true,
		"JSON chat requests per server CPU second with --state-store vs in memory": true,
		"16-token streams/s with --state-store vs in memory":                       false,
		"16-token streams per server CPU second with --state-store vs in memory":   false,
	} {
		if tg, ok := got[name]; !ok || tg.Holds == nil || *tg.Holds != want {
			t.Errorf("%s: %+v, want holds %v", name, tg, want)
		}
	}
	if _, ok := got["JSON chat req/s with --state-store vs in memory"]; !ok {
		t.Fatal("no store target")
	}
	if ts := storeTargets(&loadResult{JSON: l.JSON, Stream: l.Stream}); len(ts) != 0 {
		t.Errorf("store targets without store kinds: %+v", ts)
	}
	var b strings.Builder
	writeMarkdown(&b, &report{Load: l, Targets: evaluate(&report{Load: l})})
	for _, want := range []string{"**JSON chat requests/s with `--state-store`**", "| 25,000 | 30,000 | 0.83× | ≥ 0.8× in memory | **yes** |",
		"| 28 | 24 | 0.86× | ≥ 0.8× in memory | **yes** |", "redis-server CPU per request (µs) | 1.60 |", "**16-token streams/s with `--state-store`**"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	c, err := parseBenchFlags([]string{"--load-kinds", "json,json-store,stream-store"}, io.Discard)
	if err != nil || !slices.Equal(c.Kinds, []string{"json", "json-store", "stream-store"}) {
		t.Errorf("kinds %v, %v", c.Kinds, err)
	}
}

// TestQuotaCost: the quota kinds' figures against the plain kinds of the same rounds —
// requests/s quota ÷ none (and per round), CPU per request none ÷ quota — in the table and the
// JSON, and the kinds parse.
func TestQuotaCost(t *testing.T) {
	figures := func(cpu float64, rps ...float64) *loadFigures {
		f := &loadFigures{}
		for _, r := range rps {
			f.Rounds = append(f.Rounds, wrkResult{Requests: int64(r * 10), DurationUS: 10_000_000})
		}
		f.finish(18)
		f.CPUus = cpu
		return f
	}
	l := &loadResult{
		JSON:           map[string]*loadFigures{"mockgateway": figures(25, 40000, 30000)},
		Stream:         map[string]*loadFigures{"mockgateway": figures(100, 8000, 8000)},
		QuotaJSON:      figures(27.5, 36000, 28500), // 0.93× (rounds 0.90, 0.95), CPU 0.91×
		CapacityStream: figures(110, 7200, 8000),    // 0.95× (rounds 0.90, 1.00), CPU 0.91×
		QuotaRefusals:  0,
	}
	l.QuotaCost = quotaCosts(l)
	if len(l.QuotaCost) != 2 || l.QuotaCost[1].Kind != "stream" || l.QuotaCost[1].Limit != "capacity" || math.Abs(l.QuotaCost[1].RPSRatio-0.95) > 1e-9 {
		t.Fatalf("quota costs %+v, want the JSON quota kind's and the stream capacity kind's", l.QuotaCost)
	}
	qc := l.QuotaCost[0]
	if qc.Kind != "json" || qc.Limit != "quota" || math.Abs(qc.RPSRatio-32250.0/35000) > 1e-9 || math.Abs(qc.CPURatio-25/27.5) > 1e-9 ||
		len(qc.RoundRatios) != 2 || math.Abs(qc.RoundRatios[0]-0.9) > 1e-9 || math.Abs(qc.RoundRatios[1]-0.95) > 1e-9 {
		t.Errorf("quota cost %+v", qc)
	}
	b, err := json.Marshal(l)
	if err != nil || !strings.Contains(string(b), `"quota_cost":[{"kind":"json","limit":"quota","rps_limits_over_none":0.92`) {
		t.Errorf("the JSON lacks the ratio: %v %s", err, b)
	}
	var md strings.Builder
	writeMarkdown(&md, &report{Load: l})
	for _, want := range []string{"**JSON chat requests/s with a quota**", "| 32,250 | 35,000 | 0.92× (rounds 0.90, 0.95) |",
		"| 27.5 | 25 | 0.91× |", "quota refusals (mockgateway_quota_refusals_total, whole load) | 0 |", "`X-Mock-Quota: " + benchQuota + "`",
		"**16-token streams/s with a capacity** (1024, never filled; another mockgateway; vs no limits, same rounds) | 7,600 | 8,000 | 0.95× (rounds 0.90, 1.00) |",
		"**server CPU per request with a capacity** (µs; ratio: no limits ÷ capacity) | 110 | 100 | 0.91× |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "16-token streams/s with a quota") || strings.Contains(md.String(), "JSON chat requests/s with a capacity") {
		t.Errorf("a stream row without the stream-quota kind:\n%s", md.String())
	}
	c, err := parseBenchFlags([]string{"--load-kinds", "json,json-quota,json-capacity,stream,stream-quota,stream-capacity"}, io.Discard)
	if err != nil || !slices.Equal(c.Kinds, []string{"json", "json-quota", "json-capacity", "stream", "stream-quota", "stream-capacity"}) {
		t.Errorf("kinds %v, %v", c.Kinds, err)
	}
	cat, err := catalog.Parse([]byte(capacityCatalog()))
	if err != nil {
		t.Fatal(err)
	}
	builtin, _ := catalog.Builtin().Lookup("mock-echo")
	if m, ok := cat.Lookup("mock-echo"); !ok || m.Capacity != benchCapacity || m.Behavior != builtin.Behavior ||
		m.ContextWindow != builtin.ContextWindow || m.MaxOutputTokens != builtin.MaxOutputTokens || m.Capabilities != builtin.Capabilities {
		t.Errorf("the capacity's mock-echo %+v, built in %+v", m, builtin)
	}
}
