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

const (
	scaleChatModel = "scale-chat-16" // chat prose of 16 tokens, a very large context window
	scaleToolModel = "mock-tools"
	scaleBodyLimit = 8 << 20 // --max-body-bytes for the main scaling server: 1 MiB of prompt and its JSON
	scaleBaseText  = "Tell me something about the weather by the sea this afternoon"
)

// scaleCatalog replaces the built-in catalog for the scaling servers: chat models whose default
// length is the output of a point (scale-chat-16 … scale-chat-4096), so that no max_tokens is
// sent — a budget below the model's default only cuts the answer, the default length is still
// made (see docs/performance.md) — and whose context window takes a 1 MiB prompt (the built-in
// 128,000 tokens do not); mock-tools as built in.
func scaleCatalog() string {
	var b strings.Builder
	b.WriteString("models:\n")
	for _, t := range scaleTokens {
		fmt.Fprintf(&b, "  - id: %s\n    kind: mock\n    behavior: chat\n    default_tokens: %d\n    context_window: 100000000\n    capabilities: {streaming: true, tools: false}\n", scaleChat(t), t)
	}
	b.WriteString("  - id: mock-tools\n    kind: mock\n    behavior: tools\n    default_tokens: 24\n    capabilities: {streaming: true, tools: true}\n")
	return b.String()
}

// scaleChat is the catalog id of the chat model that answers t tokens.
func scaleChat(t int) string { return "scale-chat-" + strconv.Itoa(t) }

// Points of each dimension.
var (
	scalePromptKB   = []int{1, 16, 256, 1024}
	scaleTokens     = []int{16, 256, 1024, 4096}
	scaleChoices    = []int{1, 8, 32, 128}
	scaleTools      = []int{1, 8, 32, 128}
	scaleFixtures   = []int{0, 100, 1000, 10000}
	scaleFixPerFile = 100
)

// promptText is exactly n bytes of ASCII words (nothing to escape in JSON).
func promptText(n int) string {
	words := []string{"harbor", "lantern", "quiet", "meadow", "copper", "river", "signal", "orchard", "window", "amber", "planet", "thistle"}
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[(i*7+i/len(words))%len(words)])
	}
	return b.String()[:n]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type scaleMsg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// nestedTool is a function tool whose parameters nest an array of objects inside an object.
func nestedTool(i int) map[string]any {
	str := map[string]any{"type": "string"}
	tag := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"name", "weight"},
		"properties": map[string]any{"name": str, "weight": map[string]any{"type": "number", "minimum": 0, "maximum": 1}}}
	filter := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"tags", "limit"},
		"properties": map[string]any{
			"tags":  map[string]any{"type": "array", "items": tag, "maxItems": 3},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 50},
			"sort":  map[string]any{"type": "string", "enum": []string{"asc", "desc"}},
		}}
	return map[string]any{"type": "function", "function": map[string]any{
		"name":        toolName(i),
		"description": "Search catalogue " + strconv.Itoa(i) + " with nested filters",
		"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"query", "filter"},
			"properties": map[string]any{"query": str, "filter": filter}},
	}}
}

func toolName(i int) string { return fmt.Sprintf("search_%03d", i) }

func fixtureNeedle(i int) string { return fmt.Sprintf("needle-%05d", i) }
func fixtureReply(i int) string  { return fmt.Sprintf("fixture answer %05d", i) }

// fixtureFiles are the JSON files of n fixtures, scaleFixPerFile a file, in load order: each
// matches scale-chat requests whose last user message contains its own needle.
func fixtureFiles(n int) map[string][]byte {
	files := map[string][]byte{}
	for start := 0; start < n; start += scaleFixPerFile {
		var fs []map[string]any
		for i := start; i < min(n, start+scaleFixPerFile); i++ {
			fs = append(fs, map[string]any{
				"name":  fmt.Sprintf("scale-%05d", i),
				"match": map[string]any{"model": scaleChatModel, "last_user": map[string]any{"contains": fixtureNeedle(i)}},
				"reply": map[string]any{"content": fixtureReply(i)},
			})
		}
		files[fmt.Sprintf("f%05d.json", start/scaleFixPerFile)] = mustJSON(map[string]any{"fixtures": fs})
	}
	return files
}

// answer is the part of a JSON chat answer the checks read.
type answer struct {
	Choices []struct {
		Message struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func decodeAnswer(body []byte) (answer, error) {
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return a, fmt.Errorf("answer is not JSON: %v", err)
	}
	if len(a.Choices) == 0 {
		return a, errors.New("answer has no choices")
	}
	return a, nil
}

// scalingPlan lays out the dimensions asked for, their points and the checks of their answers.
func scalingPlan(dims []string) []*scaleDimResult {
	var out []*scaleDimResult
	for _, key := range dims {
		switch key {
		case "prompt":
			out = append(out, &scaleDimResult{Key: key, Name: "prompt size", Unit: "KB",
				Request: "scale-chat-16 (chat prose, 16 tokens), JSON, one user message of N KiB of ASCII words (the output stays 16 tokens)"})
		case "tokens":
			out = append(out,
				&scaleDimResult{Key: key, Name: "output tokens, JSON", Unit: "token",
					Request: "scale-chat-N (chat prose whose default length is N tokens; no max_tokens), 12-word prompt"},
				&scaleDimResult{Key: key, Name: "output tokens, stream", Unit: "token",
					Request: "the same with stream: true, x-mock-latency: instant; the whole stream read"})
		case "n":
			out = append(out, &scaleDimResult{Key: key, Name: "choices (n)", Unit: "choice",
				Request: "scale-chat-16, JSON, n choices of 16 tokens each"})
		case "tools":
			out = append(out, &scaleDimResult{Key: key, Name: "tools offered", Unit: "tool",
				Request: "mock-tools, JSON, N tools each with a nested object → array of objects parameter schema, parallel_tool_calls false (one call to the first tool, so the output stays the same)"})
		case "fixtures":
			out = append(out,
				&scaleDimResult{Key: key, Name: "file fixtures, none matches", Unit: "fixture",
					Request: "scale-chat-16, JSON; N file fixtures (100 a file), each model scale-chat-16 and last_user contains its own needle; the message holds none"},
				&scaleDimResult{Key: key, Name: "file fixtures, the last matches", Unit: "fixture",
					Request: "the same message plus the needle of the last fixture loaded (the last one consulted)"})
		}
	}
	return out
}

// scalingPoints builds every point of the plan's dimensions.
func scalingPoints(plan []*scaleDimResult) []*scalePoint {
	var pts []*scalePoint
	add := func(d *scaleDimResult, label string, units float64, server string, body any, header map[string]string, check func(*http.Response, []byte) error) {
		pts = append(pts, &scalePoint{label: label, units: units, server: server, body: mustJSON(body), header: header, check: check, dim: d})
	}
	for _, d := range plan {
		switch d.Name {
		case "prompt size":
			for _, kb := range scalePromptKB {
				text := promptText(kb << 10)
				add(d, fmt.Sprintf("%d KB", kb), float64(kb), "main",
					map[string]any{"model": scaleChatModel, "messages": []scaleMsg{{"user", text}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err == nil && a.Usage.CompletionTokens != 16 {
							err = fmt.Errorf("%d completion tokens, want 16", a.Usage.CompletionTokens)
						}
						return err
					})
			}
		case "output tokens, JSON", "output tokens, stream":
			stream := strings.HasSuffix(d.Name, "stream")
			for _, t := range scaleTokens {
				body := map[string]any{"model": scaleChat(t), "messages": []scaleMsg{{"user", scaleBaseText}}}
				var header map[string]string
				check := func(_ *http.Response, b []byte) error {
					a, err := decodeAnswer(b)
					if err == nil && a.Usage.CompletionTokens != t {
						err = fmt.Errorf("%d completion tokens, want %d", a.Usage.CompletionTokens, t)
					}
					return err
				}
				if stream {
					body["stream"] = true
					header = map[string]string{"x-mock-latency": "instant"}
					check = func(_ *http.Response, b []byte) error {
						st, err := chatclient.Read(strings.NewReader(string(b)), 0)
						switch {
						case err != nil:
							return err
						case !st.Done || st.ContentDeltas != t:
							return fmt.Errorf("stream: %d content deltas, [DONE]=%v; want %d and [DONE]", st.ContentDeltas, st.Done, t)
						}
						return nil
					}
				}
				add(d, fmt.Sprintf("%d tokens", t), float64(t), "main", body, header, check)
			}
		case "choices (n)":
			for _, n := range scaleChoices {
				add(d, fmt.Sprintf("n=%d", n), float64(n), "main",
					map[string]any{"model": scaleChatModel, "n": n, "messages": []scaleMsg{{"user", scaleBaseText}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err == nil && (len(a.Choices) != n || a.Usage.CompletionTokens != 16*n) {
							err = fmt.Errorf("%d choices and %d completion tokens, want %d and %d", len(a.Choices), a.Usage.CompletionTokens, n, 16*n)
						}
						return err
					})
			}
		case "tools offered":
			for _, n := range scaleTools {
				tools := make([]map[string]any, n)
				for i := range tools {
					tools[i] = nestedTool(i)
				}
				add(d, fmt.Sprintf("%d tools", n), float64(n), "main",
					map[string]any{"model": scaleToolModel, "parallel_tool_calls": false, "tools": tools,
						"messages": []scaleMsg{{"user", "Find three lanterns, sorted by weight"}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err != nil {
							return err
						}
						if tc := a.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Name != toolName(0) {
							return fmt.Errorf("want one call to %s, got %d call(s)", toolName(0), len(tc))
						}
						return nil
					})
			}
		case "file fixtures, none matches", "file fixtures, the last matches":
			last := d.Name == "file fixtures, the last matches"
			for _, n := range scaleFixtures {
				if last && n == 0 {
					continue
				}
				text := scaleBaseText
				if last {
					text += " " + fixtureNeedle(n-1)
				}
				add(d, fmt.Sprintf("%d fixtures", n), float64(n), fmt.Sprintf("fixtures-%d", n),
					map[string]any{"model": scaleChatModel, "messages": []scaleMsg{{"user", text}}}, nil,
					func(_ *http.Response, b []byte) error {
						a, err := decodeAnswer(b)
						if err != nil {
							return err
						}
						got := a.Choices[0].Message.Content
						switch {
						case last && got != fixtureReply(n-1):
							return fmt.Errorf("the last fixture did not answer (content %.40q)", got)
						case !last && strings.HasPrefix(got, "fixture answer"):
							return fmt.Errorf("a fixture answered a request none should match (%.40q)", got)
						}
						return nil
					})
			}
		}
	}
	return pts
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
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
		ws.logf("wrote %s", jsonOut)
	}
	return runErr
}

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
