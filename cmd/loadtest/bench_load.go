package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"mockgateway/internal/chatclient"
)

// loadKinds are the wrk runs of a round, in the order they run: each dialect's beside chat's.
func loadKinds() []string {
	kinds := []string{"json", "fixture-json"}
	for _, d := range loadDialects() {
		kinds = append(kinds, d.kind+"-json")
	}
	kinds = append(kinds, "json-store", "json"+quotaKindSuffix, "json"+capacityKindSuffix, "stream")
	for _, d := range loadDialects() {
		kinds = append(kinds, d.kind+"-stream")
	}
	return append(kinds, "stream-store", "stream"+quotaKindSuffix, "stream"+capacityKindSuffix)
}

// loadFigures is one kind of request (JSON or stream) against one server, over all rounds.
type loadFigures struct {
	Rounds   []wrkResult `json:"rounds"`
	RPS      float64     `json:"rps"`                       // median over rounds
	P50ms    float64     `json:"p50_ms"`                    // median over rounds
	P99ms    float64     `json:"p99_ms"`                    // median over rounds
	ChunksPS float64     `json:"chunks_ps"`                 // streams: RPS × chunks per stream
	CPUus    float64     `json:"server_cpu_us_per_request"` // median over rounds
	// StoreCPUus is redis-server's CPU per request (median over rounds), for the store kinds.
	StoreCPUus float64 `json:"store_cpu_us_per_request,omitempty"`
	Preempt    float64 `json:"server_preemptions_per_request"` // median over rounds
	Errors     int64   `json:"errors"`                         // summed over rounds
	RespB      float64 `json:"bytes_per_response"`
}

func (f *loadFigures) finish(chunksPerStream int) {
	var rps, p50, p99, cpu, pre, storeCPU []float64
	var bytes, reqs int64
	for _, r := range f.Rounds {
		rps = append(rps, r.RPS())
		p50 = append(p50, r.Latency.P50/1000)
		p99 = append(p99, r.Latency.P99/1000)
		cpu = append(cpu, r.CPUPerRequestUS())
		pre = append(pre, r.PreemptionsPerRequest())
		if r.Requests > 0 {
			storeCPU = append(storeCPU, r.StoreCPUSeconds/float64(r.Requests)*1e6)
		}
		f.Errors += r.Errors.total()
		bytes += r.Bytes
		reqs += r.Requests
	}
	f.RPS, f.P50ms, f.P99ms, f.CPUus, f.Preempt = median(rps), median(p50), median(p99), median(cpu), median(pre)
	f.StoreCPUus = median(storeCPU)
	f.ChunksPS = f.RPS * float64(chunksPerStream)
	if reqs > 0 {
		f.RespB = float64(bytes) / float64(reqs)
	}
}

type loadResult struct {
	Probe           map[string]probeResult  `json:"probe"` // by server
	ChunksPerStream int                     `json:"chunks_per_stream"`
	JSON            map[string]*loadFigures `json:"json"`   // "mockgateway", "baseline"
	Stream          map[string]*loadFigures `json:"stream"` // "mockgateway", "baseline"
	// The other dialects on mockgateway (dialects.go), by kind: the same answer as the chat
	// requests, measured in the same rounds with the same wrk settings.
	Dialects map[string]*dialectLoad `json:"dialects,omitempty"`
	// JSON chat answered by a fixture: the 1,000th of the 1,000 loaded (the others never match).
	FixtureJSON *loadFigures `json:"fixture_json,omitempty"`
	// The chat JSON and stream requests against a mockgateway with --state-store on a
	// redis-server of this run (bench_store.go), and what it counted over the load.
	StoreJSON           *loadFigures `json:"store_json,omitempty"`
	StoreStream         *loadFigures `json:"store_stream,omitempty"`
	StoreJournalDropped float64      `json:"store_journal_dropped"`
	StoreErrors         float64      `json:"store_errors"`
	// The chat JSON and stream requests with a quota never reached (bench_quota.go), on the
	// mockgateway of the plain kinds, in the same rounds: their cost against no limits, and the
	// refusals counted over the load (0 unless the limits were reached).
	QuotaJSON     *loadFigures `json:"quota_json,omitempty"`
	QuotaStream   *loadFigures `json:"quota_stream,omitempty"`
	QuotaCost     []quotaCost  `json:"quota_cost,omitempty"`
	QuotaRefusals float64      `json:"quota_refusals"`
	// The same requests against a mockgateway whose mock-echo has a capacity never filled
	// (bench_quota.go), in the same rounds; their ratios are in QuotaCost too.
	CapacityJSON   *loadFigures `json:"capacity_json,omitempty"`
	CapacityStream *loadFigures `json:"capacity_stream,omitempty"`
	RSSAfterLoad   int64        `json:"mockgateway_rss_after_load_bytes"`
	AccessLogLines int64        `json:"access_log_lines"`
	SpansBuffered  int          `json:"spans_in_buffer"`
	Notes          []string     `json:"notes,omitempty"`
}

// runLoad starts both servers and runs wrk against each in alternating order, round after round:
// each kind of chat request against mockgateway and the baseline, and the same answer through
// the Responses API against mockgateway, next to its chat run.
func runLoad(ctx context.Context, ws *workspace, w *wrkRunner, rounds int, kinds []string, redisBin string) (*loadResult, error) {
	res := &loadResult{
		Probe:  map[string]probeResult{},
		JSON:   map[string]*loadFigures{"mockgateway": {}, "baseline": {}},
		Stream: map[string]*loadFigures{"mockgateway": {}, "baseline": {}},
	}
	base, err := ws.startBaseline(ctx)
	if err != nil {
		return nil, err
	}
	defer base.stop()
	// As the issue measures it: 1,000 file fixtures loaded, none of which the bench's requests
	// match (they go to the generator), but for the fixture-json kind's, which the last matches.
	fixtures, err := writeBenchFixtures(ws.dir)
	if err != nil {
		return nil, err
	}
	mg, err := ws.startMockgateway(ctx, "bench", "--fixtures", fixtures)
	if err != nil {
		return nil, err
	}
	defer mg.stop()
	servers := []*server{mg, base}
	var store *storeRun
	if slices.ContainsFunc(kinds, storeKind) {
		if store, err = startStore(ctx, ws, redisBin, "--fixtures", fixtures); err != nil {
			return nil, err
		}
		defer store.stop()
	}

	for _, s := range servers {
		p, err := probe(ctx, s)
		res.Probe[s.name] = p
		if err != nil {
			return res, err
		}
	}
	pm, pb := res.Probe["mockgateway"], res.Probe["baseline"]
	if pm.Stream.Chunks != pb.Stream.Chunks {
		return res, fmt.Errorf("streams differ: mockgateway sends %d chunks, the baseline %d", pm.Stream.Chunks, pb.Stream.Chunks)
	}
	res.ChunksPerStream = pm.Stream.Chunks
	if pm.JSONBytes != pb.JSONBytes {
		res.Notes = append(res.Notes, fmt.Sprintf("JSON bodies differ in size: mockgateway %d B, baseline %d B (update cmd/baseline)", pm.JSONBytes, pb.JSONBytes))
	}
	if pm.Stream.Bytes != pb.Stream.Bytes {
		res.Notes = append(res.Notes, fmt.Sprintf("streams differ in size: mockgateway %d B, baseline %d B (update cmd/baseline)", pm.Stream.Bytes, pb.Stream.Bytes))
	}

	if store != nil {
		// The store changes nothing in the answers: the same bytes as in memory.
		ps, err := probe(ctx, store.mg)
		if err != nil {
			return res, fmt.Errorf("the store's mockgateway: %w", err)
		}
		if ps.JSONBytes != pm.JSONBytes || ps.Stream.Bytes != pm.Stream.Bytes || ps.Stream.Chunks != pm.Stream.Chunks {
			return res, fmt.Errorf("with --state-store the answers differ: JSON %d B, stream %d B in %d chunks; in memory %d B, %d B in %d chunks",
				ps.JSONBytes, ps.Stream.Bytes, ps.Stream.Chunks, pm.JSONBytes, pm.Stream.Bytes, pm.Stream.Chunks)
		}
	}

	if slices.ContainsFunc(kinds, quotaKind) {
		if err := probeQuota(ctx, mg, pm); err != nil {
			return res, err
		}
	}
	var gated *server
	if slices.ContainsFunc(kinds, capacityKind) {
		if gated, err = startCapacity(ctx, ws, pm, "--fixtures", fixtures); err != nil {
			return res, err
		}
		defer gated.stop()
	}
	if slices.Contains(kinds, "fixture-json") {
		if err := probeFixture(ctx, mg); err != nil {
			return res, err
		}
	}
	for _, d := range loadDialects() {
		j, st := slices.Contains(kinds, d.kind+"-json"), slices.Contains(kinds, d.kind+"-stream")
		if !j && !st {
			continue
		}
		p, err := d.probe(ctx, mg)
		if err != nil {
			return res, err
		}
		if j {
			p.JSON = &loadFigures{}
		}
		if st {
			p.StreamRun = &loadFigures{}
		}
		if res.Dialects == nil {
			res.Dialects = map[string]*dialectLoad{}
		}
		res.Dialects[d.kind] = p
	}

	// One run is one server, one route, one body; a round runs each group's runs in turn, and
	// every other round in the opposite order. Another dialect's kind joins its chat kind's
	// group, so the two alternate too.
	type run struct {
		s          *server
		kind, path string
		body       string
		figs       *loadFigures
		headers    map[string]string
		storePID   int // redis-server's, for the store kinds: its CPU is measured too
	}
	var plan [][]run
	group := map[string]int{} // chat kind → its index in plan
	join := func(chat string, r run) {
		if i, ok := group[chat]; ok {
			plan[i] = append(plan[i], r)
		} else {
			plan = append(plan, []run{r})
		}
	}
	for _, k := range kinds {
		switch k {
		case "json", "stream":
			body, figs := jsonRequest, res.JSON
			if k == "stream" {
				body, figs = streamRequest, res.Stream
			}
			group[k] = len(plan)
			plan = append(plan, []run{{mg, k, chatclient.ChatPath, body, figs[mg.name], nil, 0}, {base, k, chatclient.ChatPath, body, figs[base.name], nil, 0}})
		case "fixture-json":
			res.FixtureJSON = &loadFigures{}
			join("json", run{mg, k, chatclient.ChatPath, jsonRequest, res.FixtureJSON, map[string]string{benchFixtureHeader: benchFixtureMatch}, 0})
		case "json-store":
			res.StoreJSON = &loadFigures{}
			join("json", run{store.mg, k, chatclient.ChatPath, jsonRequest, res.StoreJSON, nil, store.redis.pid()})
		case "stream-store":
			res.StoreStream = &loadFigures{}
			join("stream", run{store.mg, k, chatclient.ChatPath, streamRequest, res.StoreStream, nil, store.redis.pid()})
		case "json" + quotaKindSuffix:
			res.QuotaJSON = &loadFigures{}
			join("json", run{mg, k, chatclient.ChatPath, jsonRequest, res.QuotaJSON, map[string]string{quotaHeader: benchQuota}, 0})
		case "stream" + quotaKindSuffix:
			res.QuotaStream = &loadFigures{}
			join("stream", run{mg, k, chatclient.ChatPath, streamRequest, res.QuotaStream, map[string]string{quotaHeader: benchQuota}, 0})
		case "json" + capacityKindSuffix:
			res.CapacityJSON = &loadFigures{}
			join("json", run{gated, k, chatclient.ChatPath, jsonRequest, res.CapacityJSON, nil, 0})
		case "stream" + capacityKindSuffix:
			res.CapacityStream = &loadFigures{}
			join("stream", run{gated, k, chatclient.ChatPath, streamRequest, res.CapacityStream, nil, 0})
		default: // another dialect's kind: it joins chat's of the same kind
			for _, d := range loadDialects() {
				if p := res.Dialects[d.kind]; p != nil && k == d.kind+"-json" {
					join("json", run{mg, k, d.json.path, d.json.body, p.JSON, d.header, 0})
				} else if p != nil && k == d.kind+"-stream" {
					join("stream", run{mg, k, d.stream.path, d.stream.body, p.StreamRun, d.header, 0})
				}
			}
		}
	}
	for round := 0; round < rounds && ctx.Err() == nil; round++ {
		for _, runs := range plan {
			if round%2 == 1 {
				runs = slices.Clone(runs)
				slices.Reverse(runs)
			}
			for _, x := range runs {
				r, err := w.run(ctx, x.s.name+"-"+x.kind, x.s.url(x.path), x.body, x.headers, x.s.pid(), x.storePID)
				if err != nil {
					return res, fmt.Errorf("%s %s: %v", x.s.name, x.kind, err)
				}
				ws.logf("round %d %-16s %-11s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  server CPU %6.1f µs/req  errors %d",
					round+1, x.kind, x.s.name, r.RPS(), r.Latency.P50/1000, r.Latency.P99/1000, r.CPUPerRequestUS(), r.Errors.total())
				x.figs.Rounds = append(x.figs.Rounds, r)
			}
		}
	}
	for _, f := range res.JSON {
		f.finish(0)
	}
	for _, f := range res.Stream {
		f.finish(res.ChunksPerStream)
	}
	if res.FixtureJSON != nil {
		res.FixtureJSON.finish(0)
	}
	for _, p := range res.Dialects {
		if p.JSON != nil {
			p.JSON.finish(0)
		}
		if p.StreamRun != nil {
			p.StreamRun.finish(p.Stream.Events)
		}
	}
	if res.StoreJSON != nil {
		res.StoreJSON.finish(0)
	}
	if res.StoreStream != nil {
		res.StoreStream.finish(res.ChunksPerStream)
	}
	if res.QuotaJSON != nil {
		res.QuotaJSON.finish(0)
	}
	if res.QuotaStream != nil {
		res.QuotaStream.finish(res.ChunksPerStream)
	}
	if res.CapacityJSON != nil {
		res.CapacityJSON.finish(0)
	}
	if res.CapacityStream != nil {
		res.CapacityStream.finish(res.ChunksPerStream)
	}
	finishQuota(ctx, mg, res)
	if store != nil {
		if res.StoreJournalDropped, res.StoreErrors, err = storeCounters(ctx, store.mg); err != nil {
			res.Notes = append(res.Notes, "the store's metrics: "+err.Error())
		}
		if res.StoreJournalDropped > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("the store's journal writer dropped %s entries: it did less work than asked, and the store's figures flatter it", num(res.StoreJournalDropped)))
		}
	}
	res.RSSAfterLoad, _ = rss(mg.pid())
	res.SpansBuffered = spansBuffered(ctx, mg)
	mg.stop() // flushes the access log
	res.AccessLogLines = countLines(mg.log)
	return res, nil
}

// spansBuffered asks /debug/traces how many spans the embedded buffer holds: proof that
// tracing was on during the load.
func spansBuffered(ctx context.Context, s *server) int {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url("/debug/traces?limit=100000"), nil)
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var v struct {
		Count int `json:"count"`
	}
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return -1
	}
	return v.Count
}

func countLines(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		n++
	}
	return n
}
