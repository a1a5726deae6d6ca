package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mockgateway/internal/chatclient"
	"mockgateway/internal/traffic"
)

// expectKind is how a soak request must end for it to count as served as intended.
type expectKind int

const (
	expJSON        expectKind = iota // the status (and, for errors, the code)
	expStream                        // 200, SSE, ends with [DONE], no error frame
	expStreamError                   // 200, an error frame with the code, then [DONE]
	expStreamCut                     // 200, then the connection drops: no [DONE]
	expJSONCut                       // 200, then the connection drops mid-body
	expDisconnect                    // 200; the client reads three frames and goes away
)

type scenario struct {
	name   string
	weight int
	method string
	path   string
	body   string // "{N}" is replaced by the request's sequence number
	ctype  string
	header map[string]string
	status int
	code   string // the error code an error response must carry
	kind   expectKind
}

const toolsJSON = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}]`

func msg(model, extra string) string {
	b := `{"model":"` + model + `","messages":[{"role":"user","content":"soak request {N} says hello to the world"}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// soakScenarios is the traffic mix: mostly successful JSON and streams, tools, clients that
// disconnect, then the client errors and simulated faults of the contract table the traffic
// generator sends too (traffic.Cases).
func soakScenarios() []scenario {
	out := []scenario{
		{name: "json echo", weight: 18, body: msg("mock-echo", ""), status: 200},
		{name: "json chat", weight: 10, body: msg("mock-chat", `"max_tokens":48,"seed":{N}`), status: 200},
		{name: "stream echo", weight: 12, body: msg("mock-echo", `"stream":true`), status: 200, kind: expStream},
		{name: "stream chat fast+usage", weight: 8, body: msg("mock-chat", `"stream":true,"stream_options":{"include_usage":true}`), header: map[string]string{"x-mock-latency": "fast"}, status: 200, kind: expStream},
		{name: "tools json", weight: 6, body: msg("mock-tools", toolsJSON), status: 200},
		{name: "tools stream", weight: 4, body: msg("mock-tools", `"stream":true,`+toolsJSON), status: 200, kind: expStream},
		{name: "json_schema", weight: 2, body: msg("mock-chat", `"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":"string"}}},"required":["a","b"]}}}`), status: 200},
		{name: "models", weight: 3, method: http.MethodGet, path: "/v1/models", status: 200},
		{name: "health", weight: 1, method: http.MethodGet, path: "/health", status: 200},
		{name: "client disconnects mid-stream", weight: 4, body: msg("mock-chat", `"stream":true`), header: map[string]string{"x-mock-latency": "ttfc=0s;between=20ms"}, status: 200, kind: expDisconnect},
		{name: "mock-flaky retried", weight: 1, body: msg("mock-flaky", ""), header: map[string]string{"x-stainless-retry-count": "1"}, status: 200},
		{name: "mock-gateway fallback", weight: 1, body: msg("mock-gateway", ""), status: 200},
	}
	kinds := map[traffic.Answer]expectKind{traffic.AnswerJSON: expJSON, traffic.AnswerStreamError: expStreamError,
		traffic.AnswerStreamCut: expStreamCut, traffic.AnswerJSONCut: expJSONCut}
	messages := []map[string]any{{"role": "user", "content": "soak request {N} says hello to the world"}}
	for _, k := range traffic.Cases() {
		if k.SoakWeight == 0 {
			continue
		}
		r := k.Request("", messages)
		out = append(out, scenario{name: k.Name, weight: k.SoakWeight, method: r.Method, path: k.Path, body: string(r.Body),
			ctype: k.ContentType, header: k.Header, status: k.Status, code: k.Code, kind: kinds[k.Answer]})
	}
	return out
}

// soakStats are the client's counters, read by the sampler.
type soakStats struct {
	total      atomic.Int64
	unexpected atomic.Int64
	skipped    atomic.Int64 // ticks with --max-in-flight requests already in flight
	mu         sync.Mutex
	byStatus   map[string]int64 // "200", "429", …, "conn-cut" (expected), "transport" (unexpected)
	samples    []string         // the first unexpected outcomes
}

func (s *soakStats) status(k string) {
	s.mu.Lock()
	s.byStatus[k]++
	s.mu.Unlock()
}

func (s *soakStats) fail(sc scenario, why string) {
	if s.unexpected.Add(1) <= 20 {
		s.mu.Lock()
		s.samples = append(s.samples, sc.name+": "+why)
		s.mu.Unlock()
	}
}

func (s *soakStats) snapshot() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.byStatus))
	for k, v := range s.byStatus {
		out[k] = v
	}
	return out
}

// do sends one scenario's request and checks how it ended.
func (s *soakStats) do(ctx context.Context, client *http.Client, base string, sc scenario, seq int64) {
	s.total.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	path := sc.path
	if path == "" {
		path = chatclient.ChatPath
	}
	r := chatclient.Request{Method: sc.method, URL: base + path, ContentType: sc.ctype, Header: sc.header}
	if sc.body != "" {
		r.Body = []byte(strings.ReplaceAll(sc.body, "{N}", strconv.FormatInt(seq, 10)))
	}
	resp, err := r.Send(ctx, client)
	if err != nil {
		s.status("transport")
		s.fail(sc, "request: "+err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != sc.status {
		s.status(strconv.Itoa(resp.StatusCode))
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		s.fail(sc, fmt.Sprintf("status %d, want %d: %s", resp.StatusCode, sc.status, strings.TrimSpace(string(b))))
		return
	}
	if sc.kind == expDisconnect {
		s.status(strconv.Itoa(resp.StatusCode))
		st, err := chatclient.Read(resp.Body, 3)
		if err == nil && st.Chunks < 3 {
			if err = st.Ended; err == nil {
				err = io.EOF
			}
		}
		if err != nil {
			s.fail(sc, "stream ended before the client went away: "+err.Error())
			return
		}
		cancel() // the client goes away mid-stream
		return
	}
	b, rerr := io.ReadAll(resp.Body)
	switch sc.kind {
	case expStreamCut, expJSONCut:
		if rerr == nil {
			s.status(strconv.Itoa(resp.StatusCode))
			s.fail(sc, "the connection was not cut")
			return
		}
		s.status("200 cut")
		if strings.Contains(string(b), "[DONE]") {
			s.fail(sc, "a cut stream sent [DONE]")
		}
		return
	}
	s.status(strconv.Itoa(resp.StatusCode))
	if rerr != nil {
		s.fail(sc, "reading the body: "+rerr.Error())
		return
	}
	switch sc.kind {
	case expJSON:
		if sc.code != "" {
			if code, _ := chatclient.ErrorCode(b); code != sc.code {
				s.fail(sc, fmt.Sprintf("error code %q, want %q", code, sc.code))
			}
		} else if !json.Valid(b) {
			s.fail(sc, "the body is not JSON")
		}
	case expStream, expStreamError:
		shape, err := shapeOf(b)
		switch {
		case err != nil:
			s.fail(sc, "stream: "+err.Error())
		case !shape.Done:
			s.fail(sc, "the stream did not end with [DONE]")
		case sc.kind == expStream && shape.ErrorFrames > 0:
			s.fail(sc, "unexpected error frame: "+lastError(b))
		case sc.kind == expStreamError && (shape.ErrorFrames != 1 || !strings.Contains(string(b), `"code":"`+sc.code+`"`)):
			s.fail(sc, "no "+sc.code+" error frame")
		}
	}
}

// lastError is the data of a stream's last error frame.
func lastError(b []byte) string {
	st, _ := chatclient.Read(bytes.NewReader(b), 0)
	if n := len(st.ErrorFrames); n > 0 {
		return string(st.ErrorFrames[n-1])
	}
	return ""
}

// soakSample is one row of the table over time.
type soakSample struct {
	At            time.Duration    `json:"-"`
	AtS           float64          `json:"t_seconds"`
	Requests      int64            `json:"requests_total"`
	Interval      int64            `json:"requests_interval"`
	ByStatus      map[string]int64 `json:"by_status_interval"`
	Unexpected    int64            `json:"unexpected_total"`
	RSS           int64            `json:"rss_bytes"`
	Goroutines    float64          `json:"goroutines"`
	StreamsActive float64          `json:"streams_active"`
	Label         string           `json:"label,omitempty"`
}

type soakReport struct {
	Machine    machine      `json:"machine"`
	Command    string       `json:"command"`
	Duration   string       `json:"duration"`
	Rate       float64      `json:"rate"`
	Samples    []soakSample `json:"samples"`
	Unexpected []string     `json:"unexpected_samples,omitempty"`
	Skipped    int64        `json:"skipped"`
	Verdicts   []string     `json:"verdicts"`
	Failed     bool         `json:"failed"`
}

func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 10*time.Minute, "how long to send traffic")
	rate := fs.Float64("rate", 50, "requests per second")
	interval := fs.Duration("interval", 10*time.Second, "sampling interval")
	maxInFlight := fs.Int("max-in-flight", 1000, "client-side cap on requests in flight")
	seed := fs.Uint64("seed", 1, "seed of the traffic mix")
	src := fs.String("src", "", "module root to build (default: from go env GOMOD)")
	keep := fs.Bool("keep", false, "keep the temporary directory")
	jsonOut := fs.String("json-out", "", "also write the samples and verdicts as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate <= 0 || *duration <= 0 || *interval <= 0 || *maxInFlight < 1 {
		return errors.New("duration, rate and interval must be positive")
	}
	ws, err := newWorkspace(ctx, *src, *keep, stderr)
	if err != nil {
		return err
	}
	defer ws.close()
	mg, err := ws.startMockgateway(ctx, "soak")
	if err != nil {
		return err
	}
	defer mg.stop()

	rep := &soakReport{Machine: describeMachine(ws.nofile), Command: "go run ./cmd/loadtest soak" + argString(args), Duration: duration.String(), Rate: *rate}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	client := &http.Client{Transport: tr}
	probeClient := &http.Client{Timeout: 10 * time.Second}
	stats := &soakStats{byStatus: map[string]int64{}}
	sample := func(at time.Duration, prev map[string]int64, prevTotal int64, label string) (soakSample, map[string]int64) {
		snap := stats.snapshot()
		diff := map[string]int64{}
		for k, v := range snap {
			if d := v - prev[k]; d > 0 {
				diff[k] = d
			}
		}
		smp := soakSample{At: at, AtS: at.Seconds(), Requests: stats.total.Load(), ByStatus: diff, Unexpected: stats.unexpected.Load(), Label: label}
		smp.Interval = smp.Requests - prevTotal
		smp.RSS, _ = rss(mg.pid())
		if g, err := scrape(ctx, probeClient, mg.url("/metrics"), "go_goroutines", "mockgateway_streams_active"); err == nil {
			smp.Goroutines, smp.StreamsActive = g["go_goroutines"], g["mockgateway_streams_active"]
		}
		probeClient.CloseIdleConnections()
		return smp, snap
	}

	idle, prev := sample(0, nil, 0, "idle, before")
	rep.Samples = append(rep.Samples, idle)
	ws.logf("soak: %s at %.0f req/s against %s; samples every %s", duration, *rate, mg.addr, interval)
	fmt.Fprintf(stderr, "%s\n", sampleHeader())
	fmt.Fprintf(stderr, "%s\n", sampleRow(idle))

	scenarios := soakScenarios()
	totalWeight := 0
	for _, sc := range scenarios {
		totalWeight += sc.weight
	}
	rng := rand.New(rand.NewPCG(*seed, 0x5eed))
	pick := func() scenario {
		n := rng.IntN(totalWeight)
		for _, sc := range scenarios {
			if n < sc.weight {
				return sc
			}
			n -= sc.weight
		}
		return scenarios[0]
	}

	trafficCtx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	var wg sync.WaitGroup
	sem := make(chan struct{}, *maxInFlight)
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	sampleTick := time.NewTicker(*interval)
	defer sampleTick.Stop()
	end := time.After(*duration)
	var seq int64
	prevTotal := int64(0)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-mg.exited:
			rep.Verdicts = append(rep.Verdicts, "FAIL: mockgateway exited during the soak")
			rep.Failed = true
			break loop
		case <-sampleTick.C:
			smp, snap := sample(time.Since(start), prev, prevTotal, "")
			prev, prevTotal = snap, smp.Requests
			rep.Samples = append(rep.Samples, smp)
			fmt.Fprintf(stderr, "%s\n", sampleRow(smp))
		case <-tick.C:
			select {
			case sem <- struct{}{}:
			default:
				stats.skipped.Add(1)
				continue
			}
			seq++
			sc, n := pick(), seq
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				stats.do(trafficCtx, client, "http://"+mg.addr, sc, n)
			}()
		}
	}
	trafficTime := time.Since(start)
	// Traffic stops; requests in flight finish (the longest scenario lasts well under 30s).
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(45 * time.Second):
		stopTraffic()
		<-waited
	}
	smp, snap := sample(trafficTime, prev, prevTotal, "traffic stopped")
	prev, prevTotal = snap, smp.Requests
	rep.Samples = append(rep.Samples, smp)
	fmt.Fprintf(stderr, "%s\n", sampleRow(smp))
	// Idle again: the client's keep-alive connections are closed, so the server's connection
	// goroutines must go; wait up to 30s for the count to come back.
	tr.CloseIdleConnections()
	var after soakSample
	for deadline := time.Now().Add(30 * time.Second); ; {
		after, _ = sample(time.Since(start), prev, prevTotal, "idle, after")
		if after.Goroutines <= idle.Goroutines+goroutineSlack || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	rep.Samples = append(rep.Samples, after)
	rep.Skipped = stats.skipped.Load()
	stats.mu.Lock()
	rep.Unexpected = append(rep.Unexpected, stats.samples...)
	stats.mu.Unlock()

	verdicts, failed := judgeSoak(rep.Samples, idle, after, stats.unexpected.Load(), *duration)
	rep.Verdicts = append(rep.Verdicts, verdicts...)
	rep.Failed = rep.Failed || failed || ctx.Err() != nil
	if ctx.Err() != nil {
		rep.Verdicts = append(rep.Verdicts, "FAIL: interrupted")
	}
	writeSoak(stdout, rep)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if rep.Failed {
		return errors.New("soak failed (see the verdicts)")
	}
	return nil
}

const (
	goroutineSlack = 10               // goroutines allowed above the idle count once idle again
	rssSlack       = 16 << 20         // bytes of RSS growth always allowed
	rssGrowth      = 1.20             // and this factor
	minWarmup      = 30 * time.Second // the span buffer (4096 spans) fills in the first minute
	goroutineGrow  = 1.5              // during traffic: second half's max vs first half's max
)

// judgeSoak decides whether RSS or goroutines grow without bound, and whether anything
// unexpected happened.
//
//   - Warm-up: samples before max(30s, 20% of the duration) are not judged: the span buffer and
//     the runtime's heap fill up to their steady state there.
//   - RSS: the median of the second half of the judged samples must stay within 1.2× the
//     median of the first half plus 16 MiB. A bounded process plateaus; a leak keeps climbing,
//     and at 50 req/s over minutes it climbs by far more than that.
//   - Goroutines under traffic: the second half's maximum within 1.5× the first half's plus 50.
//   - Goroutines after traffic, with the client's connections closed: back to the idle count
//     before the soak plus 10, within 30s. This is the sharpest leak check.
//   - Unexpected outcomes (a wrong status or code, a stream without [DONE], a transport error
//     where none was asked for): none.
func judgeSoak(samples []soakSample, idle, after soakSample, unexpected int64, duration time.Duration) ([]string, bool) {
	var v []string
	failed := false
	warm := max(minWarmup, duration/5)
	var judged []soakSample
	for _, s := range samples {
		if s.Label == "" && s.At >= warm {
			judged = append(judged, s)
		}
	}
	if len(judged) >= 4 {
		h := len(judged) / 2
		first, second := judged[:h], judged[len(judged)-h:]
		medRSS := func(ss []soakSample) float64 {
			var x []float64
			for _, s := range ss {
				x = append(x, float64(s.RSS))
			}
			return median(x)
		}
		maxG := func(ss []soakSample) float64 {
			m := 0.0
			for _, s := range ss {
				m = max(m, s.Goroutines)
			}
			return m
		}
		r1, r2 := medRSS(first), medRSS(second)
		limit := r1*rssGrowth + rssSlack
		if r2 > limit {
			failed = true
			v = append(v, fmt.Sprintf("FAIL: RSS grows: median %s MB in the second half vs %s MB in the first (limit %s MB)", mb(int64(r2)), mb(int64(r1)), mb(int64(limit))))
		} else {
			v = append(v, fmt.Sprintf("ok: RSS bounded: median %s MB in the second half vs %s MB in the first (limit %s MB)", mb(int64(r2)), mb(int64(r1)), mb(int64(limit))))
		}
		g1, g2 := maxG(first), maxG(second)
		glimit := g1*goroutineGrow + 50
		if g2 > glimit {
			failed = true
			v = append(v, fmt.Sprintf("FAIL: goroutines grow under traffic: max %.0f in the second half vs %.0f in the first (limit %.0f)", g2, g1, glimit))
		} else {
			v = append(v, fmt.Sprintf("ok: goroutines bounded under traffic: max %.0f in the second half vs %.0f in the first (limit %.0f)", g2, g1, glimit))
		}
	} else {
		v = append(v, fmt.Sprintf("note: growth under traffic not judged: %d samples after the %s warm-up (need 4; run longer)", len(judged), warm))
	}
	if after.Goroutines > idle.Goroutines+goroutineSlack {
		failed = true
		v = append(v, fmt.Sprintf("FAIL: goroutines did not return to idle: %.0f after vs %.0f before (slack %d)", after.Goroutines, idle.Goroutines, goroutineSlack))
	} else {
		v = append(v, fmt.Sprintf("ok: goroutines back to idle: %.0f after vs %.0f before", after.Goroutines, idle.Goroutines))
	}
	if after.StreamsActive != 0 {
		failed = true
		v = append(v, fmt.Sprintf("FAIL: %.0f streams still active after the traffic", after.StreamsActive))
	}
	if unexpected > 0 {
		failed = true
		v = append(v, fmt.Sprintf("FAIL: %d unexpected outcomes", unexpected))
	} else {
		v = append(v, "ok: no unexpected outcome")
	}
	return v, failed
}

func statusString(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " ")
}

func sampleHeader() string {
	return "| t | requests (interval) | total | by status (interval) | unexpected | RSS (MB) | goroutines | streams active |\n|---:|---:|---:|---|---:|---:|---:|---:|"
}

func sampleRow(s soakSample) string {
	t := fmt.Sprintf("%.0fs", s.AtS)
	if s.Label != "" {
		t += " (" + s.Label + ")"
	}
	return fmt.Sprintf("| %s | %d | %d | %s | %d | %s | %.0f | %.0f |", t, s.Interval, s.Requests, statusString(s.ByStatus), s.Unexpected, mb(s.RSS), s.Goroutines, s.StreamsActive)
}

func writeSoak(w io.Writer, r *soakReport) {
	fmt.Fprintf(w, "\n## mockgateway soak\n\n- Machine: %d cores (nproc), %s; %s\n- Command: `%s` (%s at %.0f req/s, mixed traffic: JSON, streams, tools, client errors, disconnects, every x-mock-fault; full telemetry)\n\n",
		r.Machine.NProc, r.Machine.CPUModel, r.Machine.GoVersion, r.Command, r.Duration, r.Rate)
	fmt.Fprintln(w, sampleHeader())
	for _, s := range r.Samples {
		fmt.Fprintln(w, sampleRow(s))
	}
	fmt.Fprintf(w, "\n'200 cut' counts the stream_cut faults, whose connection is cut as asked.")
	if r.Skipped > 0 {
		fmt.Fprintf(w, " %d ticks were skipped with --max-in-flight requests already in flight.", r.Skipped)
	}
	fmt.Fprintf(w, "\n\nVerdicts:\n\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "- %s\n", v)
	}
	if len(r.Unexpected) > 0 {
		fmt.Fprintf(w, "\nFirst unexpected outcomes:\n\n")
		for _, u := range r.Unexpected {
			fmt.Fprintf(w, "- %s\n", u)
		}
	}
}
