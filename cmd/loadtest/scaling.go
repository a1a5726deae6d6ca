package main

// The scaling table: the server's CPU per request as one dimension of the work grows (the prompt,
// the output tokens, n, the tools offered, the file fixtures loaded), against the built binary
// with full telemetry, and whether the cost per unit of work stays flat.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mockgateway/internal/chatclient"
)

// scalingConfig is how the scaling part runs.
type scalingConfig struct {
	Dims        []string      `json:"dimensions"`
	Window      time.Duration `json:"-"`
	Warmup      time.Duration `json:"-"`
	Reps        int           `json:"windows_per_point"`
	Concurrency int           `json:"concurrency"`
	WindowS     string        `json:"window"`
	WarmupS     string        `json:"warmup"`

	dims string
}

// scalingDimKeys are the --dims (--scaling-dims) names, in the order they run.
var scalingDimKeys = []string{"prompt", "tokens", "n", "tools", "fixtures"}

// addScalingFlags declares the scaling flags on fs, each name prefixed (bench: "scaling-").
func addScalingFlags(fs *flag.FlagSet, c *scalingConfig, prefix string) {
	fs.StringVar(&c.dims, prefix+"dims", strings.Join(scalingDimKeys, ","), "comma-separated scaling dimensions: "+strings.Join(scalingDimKeys, ", "))
	fs.DurationVar(&c.Window, prefix+"window", 500*time.Millisecond, "scaling: wall time each measured window of a point aims at (its request count is fixed from the warm-up's rate)")
	fs.DurationVar(&c.Warmup, prefix+"warmup", 300*time.Millisecond, "scaling: discarded requests before each point")
	fs.IntVar(&c.Reps, prefix+"reps", 3, "scaling: measured windows per point (the median is reported)")
	fs.IntVar(&c.Concurrency, prefix+"concurrency", 4, "scaling: requests in flight at once (1: sequential, which adds the cost of waking an idle server to every request)")
}

// finish checks the scaling flags once parsed.
func (c *scalingConfig) finish(prefix string) error {
	c.Dims = nil
	for k := range strings.SplitSeq(c.dims, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if !slices.Contains(scalingDimKeys, k) {
			return fmt.Errorf("--%sdims: unknown dimension %q (%s)", prefix, k, strings.Join(scalingDimKeys, ", "))
		}
		if !slices.Contains(c.Dims, k) {
			c.Dims = append(c.Dims, k)
		}
	}
	if len(c.Dims) == 0 {
		return fmt.Errorf("--%sdims: none given", prefix)
	}
	if c.Window <= 0 || c.Warmup < 0 || c.Reps < 1 || c.Concurrency < 1 {
		return fmt.Errorf("--%swindow > 0, --%swarmup ≥ 0, --%sreps ≥ 1, --%sconcurrency ≥ 1", prefix, prefix, prefix, prefix)
	}
	c.WindowS, c.WarmupS = c.Window.String(), c.Warmup.String()
	return nil
}

// scaleFigure is one point of a dimension, measured.
type scaleFigure struct {
	Label     string    `json:"point"`
	Units     float64   `json:"units"`
	Requests  int       `json:"requests_per_window"`
	Windows   []float64 `json:"cpu_us_per_request_windows"`
	CPUus     float64   `json:"server_cpu_us_per_request"`  // median of the windows
	PerUnit   float64   `json:"cpu_us_per_unit"`            // CPUus / Units
	Marginal  float64   `json:"marginal_cpu_us_per_unit"`   // (CPUus − first point's) / (Units − first's)
	RespBytes int       `json:"response_bytes"`             // the probe's answer
	ReqBytes  int       `json:"request_bytes"`              // the body sent
	WallUS    float64   `json:"client_wall_us_per_request"` // informational
}

// scaleDimResult is one dimension: its points and the verdict.
type scaleDimResult struct {
	Key     string        `json:"key"`
	Name    string        `json:"name"`
	Unit    string        `json:"unit"`
	Request string        `json:"request"`
	Points  []scaleFigure `json:"points"`
	// The marginal costs per unit the verdict compares: at the point before the largest (at
	// least the noise floor's worth: BeforeNoise) and at the largest.
	Before      float64 `json:"marginal_before_largest"`
	BeforeNoise bool    `json:"marginal_before_largest_is_noise_floor,omitempty"`
	Largest     float64 `json:"marginal_largest"`
	Ratio       float64 `json:"marginal_ratio_largest_vs_before"`
	Verdict     string  `json:"verdict"`
	Linear      *bool   `json:"linear_or_better"` // nil: not judged
	Note        string  `json:"note,omitempty"`
}

type scalingResult struct {
	Config  scalingConfig     `json:"settings"`
	Server  string            `json:"server_flags"`
	Dims    []*scaleDimResult `json:"dimensions"`
	Seconds float64           `json:"seconds"`
}

// --- the work ---

// scalePoint is one request of a dimension: its body, headers and what its answer must show.
type scalePoint struct {
	label  string
	units  float64
	server string // "main", or "fixtures-N"
	body   []byte
	header map[string]string
	check  func(resp *http.Response, body []byte) error
	dim    *scaleDimResult
}

// --- measuring ---

// scaleClient sends one point's request over kept-alive connections.
type scaleClient struct {
	http *http.Client
}

func newScaleClient(conc int) *scaleClient {
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true}
	return &scaleClient{http: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

// send posts body and discards the answer; a status other than 200 is an error.
func (c *scaleClient) send(ctx context.Context, url string, p *scalePoint) error {
	resp, err := chatclient.Request{URL: url, Body: p.body, Header: p.header}.Send(ctx, c.http)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

// burst sends count requests, conc at a time, and returns the wall time.
func (c *scaleClient) burst(ctx context.Context, url string, p *scalePoint, count, conc int) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	start := time.Now()
	for range min(conc, count) {
		wg.Go(func() {
			for next.Add(1) <= int64(count) && ctx.Err() == nil {
				if err := c.send(ctx, url, p); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return time.Since(start), first
}

// requestsFor is the fixed request count of a point's windows: what the warm-up's rate does in
// one window, within bounds.
func requestsFor(warmReqs int, warmTime, window time.Duration) int {
	const lo, hi = 10, 200_000
	if warmReqs <= 0 || warmTime <= 0 {
		return lo
	}
	n := int(math.Ceil(float64(warmReqs) / warmTime.Seconds() * window.Seconds()))
	return min(max(n, lo), hi)
}

// measurePoint probes the point once (its answer must show the work), warms up, then runs reps
// windows of the same number of requests, reading the server's CPU time around each.
func measurePoint(ctx context.Context, cfg scalingConfig, c *scaleClient, s *server, p *scalePoint) (scaleFigure, error) {
	f := scaleFigure{Label: p.label, Units: p.units, ReqBytes: len(p.body)}
	url := s.url(chatclient.ChatPath)
	resp, b, err := chatclient.Request{URL: url, Body: p.body, Header: p.header}.Do(ctx, c.http, maxAnswer)
	if err != nil {
		return f, fmt.Errorf("probe: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return f, fmt.Errorf("probe: status %d: %.200s", resp.StatusCode, b)
	}
	if err := p.check(resp, b); err != nil {
		return f, fmt.Errorf("probe: %v", err)
	}
	f.RespBytes = len(b)

	// Warm-up: at least three requests and cfg.Warmup; its rate fixes the windows' count.
	warmReqs, warmStart := 0, time.Now()
	for warmReqs < 3 || time.Since(warmStart) < cfg.Warmup {
		if _, err := c.burst(ctx, url, p, cfg.Concurrency, cfg.Concurrency); err != nil {
			return f, fmt.Errorf("warm-up: %v", err)
		}
		warmReqs += cfg.Concurrency
	}
	f.Requests = requestsFor(warmReqs, time.Since(warmStart), cfg.Window)

	var wall time.Duration
	for range cfg.Reps {
		cpu0, err0 := cpuSeconds(s.pid())
		d, err := c.burst(ctx, url, p, f.Requests, cfg.Concurrency)
		cpu1, err1 := cpuSeconds(s.pid())
		if err != nil {
			return f, err
		}
		if err0 != nil || err1 != nil {
			return f, fmt.Errorf("reading /proc/%d/stat: %v %v", s.pid(), err0, err1)
		}
		wall += d
		f.Windows = append(f.Windows, (cpu1-cpu0)/float64(f.Requests)*1e6)
	}
	f.CPUus = median(f.Windows)
	f.WallUS = wall.Seconds() * 1e6 / float64(cfg.Reps*f.Requests)
	if p.units > 0 {
		f.PerUnit = f.CPUus / p.units
	} else {
		f.PerUnit = math.NaN()
	}
	return f, nil
}

// scaleServerFlags are the flags of every scaling server beyond bench's (full telemetry).
func scaleServerFlags(catalog string) []string {
	return []string{"--catalog", catalog, "--max-body-bytes", strconv.Itoa(scaleBodyLimit)}
}

// runScaling measures the dimensions cfg names: one server for every dimension but fixtures, and
// one per fixture count (loaded from its own directory, reload polling made rare so that only
// requests are measured).
func runScaling(ctx context.Context, ws *workspace, cfg scalingConfig) (*scalingResult, error) {
	start := time.Now()
	res := &scalingResult{Config: cfg}
	defer func() { res.Seconds = time.Since(start).Seconds() }()
	catalog := filepath.Join(ws.dir, "scaling-catalog.yaml")
	if err := os.WriteFile(catalog, []byte(scaleCatalog()), 0o644); err != nil {
		return res, err
	}
	res.Server = strings.Join(scaleServerFlags("FILE"), " ") + "; fixtures: --fixtures DIR --fixtures-reload 1h"
	res.Dims = scalingPlan(cfg.Dims)
	points := scalingPoints(res.Dims)

	// Group the points by server, in first-use order.
	var order []string
	by := map[string][]*scalePoint{}
	for _, p := range points {
		if _, ok := by[p.server]; !ok {
			order = append(order, p.server)
		}
		by[p.server] = append(by[p.server], p)
	}
	client := newScaleClient(cfg.Concurrency)
	defer client.http.CloseIdleConnections()
	var problems []string
	for _, key := range order {
		if ctx.Err() != nil {
			break
		}
		s, err := startScaleServer(ctx, ws, key, catalog)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", key, err))
			continue
		}
		for _, p := range by[key] {
			if ctx.Err() != nil {
				break
			}
			f, err := measurePoint(ctx, cfg, client, s, p)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s, %s: %v", p.dim.Name, p.label, err))
				continue
			}
			ws.logf("scaling %-32s %-14s %9s µs/request  %s µs/%s  (%d windows of %d requests, %s B answer)",
				p.dim.Name, p.label, num(f.CPUus), sig(f.PerUnit), p.dim.Unit, cfg.Reps, f.Requests, num(float64(f.RespBytes)))
			p.dim.Points = append(p.dim.Points, f)
		}
		client.http.CloseIdleConnections()
		s.stop()
	}
	for _, d := range res.Dims {
		judge(d)
	}
	if len(problems) > 0 {
		return res, errors.New(strings.Join(problems, "; "))
	}
	return res, ctx.Err()
}

// startScaleServer starts the main scaling server, or one with n file fixtures written to a
// fresh directory.
func startScaleServer(ctx context.Context, ws *workspace, key, catalog string) (*server, error) {
	flags := scaleServerFlags(catalog)
	if nstr, ok := strings.CutPrefix(key, "fixtures-"); ok {
		n, err := strconv.Atoi(nstr)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(ws.dir, "scaling-"+key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for name, b := range fixtureFiles(n) {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				return nil, err
			}
		}
		flags = append(flags, "--fixtures", dir, "--fixtures-reload", "1h")
	}
	return ws.startMockgateway(ctx, "scaling-"+key, flags...)
}

// --- the `scaling` subcommand ---

func runScalingCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg scalingConfig
	var src, jsonOut string
	var keep bool
	fs := flag.NewFlagSet("loadtest scaling", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addScalingFlags(fs, &cfg, "")
	fs.StringVar(&src, "src", "", "module root to build (default: from go env GOMOD)")
	fs.StringVar(&jsonOut, "json-out", "", "also write every figure as JSON to this file")
	fs.BoolVar(&keep, "keep", false, "keep the temporary directory (binary, fixtures, access logs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := cfg.finish(""); err != nil {
		return err
	}
	ws, err := newWorkspace(ctx, src, keep, stderr)
	if err != nil {
		return err
	}
	defer ws.close()
	m := describeMachine(ws.nofile)
	fmt.Fprintf(stdout, "\n## mockgateway scaling\n\n")
	fmt.Fprintf(stdout, "- Machine: %d cores (nproc), %s; %s; Linux %s\n", m.NProc, m.CPUModel, m.GoVersion, m.Kernel)
	fmt.Fprintf(stdout, "- Command: `go run ./cmd/loadtest scaling%s` (run %s)\n", argString(args), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	res, runErr := runScaling(ctx, ws, cfg)
	writeScaling(stdout, res, false)
	if jsonOut != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return fmt.Errorf("json-out: %w", err)
		}
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
		ws.logf("wrote %s", jsonOut)
	}
	return runErr
}
