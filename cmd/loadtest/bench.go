package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

type benchConfig struct {
	Threads     int           `json:"threads"`
	Connections int           `json:"connections"`
	Duration    time.Duration `json:"-"`
	Warmup      time.Duration `json:"-"`
	Rounds      int           `json:"rounds"`
	Count       int           `json:"go_bench_count"`
	Pattern     string        `json:"go_bench_pattern"`
	Benchtime   string        `json:"go_benchtime,omitempty"`
	Streams     int           `json:"streams"`
	Batch       int           `json:"stream_batch"`

	DurationS string `json:"duration"`
	WarmupS   string `json:"warmup"`

	Kinds []string `json:"load_kinds"`

	Scaling scalingConfig `json:"scaling"`

	wrk, src, jsonOut, kinds          string
	keep, strict                      bool
	skipGoBench, skipLoad, skipMemory bool
	skipScaling                       bool
}

// report is everything a bench run measured; the Markdown table and --json-out come from it.
type report struct {
	Machine    machine        `json:"machine"`
	Command    string         `json:"command"`
	Config     benchConfig    `json:"settings"`
	Started    time.Time      `json:"started"`
	GoBench    []goBench      `json:"go_benchmarks,omitempty"`
	GoBenchCmd string         `json:"go_bench_command,omitempty"`
	Load       *loadResult    `json:"load,omitempty"`
	Memory     *memResult     `json:"memory,omitempty"`
	Scaling    *scalingResult `json:"scaling,omitempty"`
	Targets    []target       `json:"targets"`
	Problems   []string       `json:"problems,omitempty"`
}

func parseBenchFlags(args []string, stderr io.Writer) (benchConfig, error) {
	var c benchConfig
	fs := flag.NewFlagSet("loadtest bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.Threads, "threads", 2, "wrk threads (-t)")
	fs.IntVar(&c.Connections, "connections", 64, "wrk connections (-c)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "each measured wrk run (-d)")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "a discarded wrk run before each measured one")
	fs.IntVar(&c.Rounds, "rounds", 3, "wrk rounds per server and request kind (medians are reported)")
	fs.IntVar(&c.Count, "count", 6, "go test -count for the Go benchmarks (medians are reported)")
	fs.StringVar(&c.Pattern, "bench", "ChatJSON|ChatStream64|ResponsesJSON|ResponsesStream64|MessagesJSON|MessagesStream64|Models|ErrorPath|Match|JournalAdd$", "go test -bench pattern")
	fs.StringVar(&c.Benchtime, "benchtime", "", "go test -benchtime (default go test's)")
	fs.IntVar(&c.Streams, "streams", 10000, "concurrent open streams for the memory figure")
	fs.IntVar(&c.Batch, "batch", 500, "streams opened at once")
	fs.StringVar(&c.wrk, "wrk", "", "path of wrk (default: from PATH)")
	fs.StringVar(&c.src, "src", "", "module root to build and benchmark (default: from go env GOMOD)")
	fs.StringVar(&c.jsonOut, "json-out", "", "also write every figure as JSON to this file")
	fs.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binaries, scripts, access logs)")
	fs.BoolVar(&c.strict, "strict", false, "exit non-zero when a target does not hold")
	fs.BoolVar(&c.skipGoBench, "skip-gobench", false, "skip the Go benchmarks")
	fs.BoolVar(&c.skipLoad, "skip-load", false, "skip the wrk load runs")
	fs.BoolVar(&c.skipMemory, "skip-memory", false, "skip the open-streams memory run")
	fs.BoolVar(&c.skipScaling, "skip-scaling", false, "skip the scaling table (go run ./cmd/loadtest scaling runs it alone)")
	addScalingFlags(fs, &c.Scaling, "scaling-")
	fs.StringVar(&c.kinds, "load-kinds", strings.Join(loadKinds(), ","), "comma-separated wrk runs per round: json and stream (chat, mockgateway and baseline), fixture-json (chat answered by the 1,000th of the 1,000 fixtures loaded), "+dialectKindsHelp()+", json-store and stream-store (chat, a mockgateway with --state-store on a redis-server the run starts), json-quota and stream-quota (chat, mockgateway, with an x-mock-quota header whose limits no load reaches: what drawing on a quota costs, against json and stream), json-capacity and stream-capacity (chat, a mockgateway whose mock-echo has a capacity no load fills: what the load gate costs)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Threads < 1 || c.Connections < c.Threads || c.Duration <= 0 || c.Rounds < 1 || c.Count < 1 || c.Streams < 0 || c.Batch < 1 {
		return c, errors.New("threads ≥ 1, connections ≥ threads, duration > 0, rounds ≥ 1, count ≥ 1, batch ≥ 1")
	}
	for k := range strings.SplitSeq(c.kinds, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if !slices.Contains(loadKinds(), k) {
			return c, fmt.Errorf("--load-kinds: unknown kind %q (%s)", k, strings.Join(loadKinds(), ", "))
		}
		if !slices.Contains(c.Kinds, k) {
			c.Kinds = append(c.Kinds, k)
		}
	}
	if len(c.Kinds) == 0 {
		return c, errors.New("--load-kinds: none given")
	}
	if err := c.Scaling.finish("scaling-"); err != nil {
		return c, err
	}
	c.DurationS, c.WarmupS = c.Duration.String(), c.Warmup.String()
	return c, nil
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	wrkBin, redisBin := "", ""
	if !cfg.skipLoad {
		// Before anything is built: a missing tool fails at once with what to install.
		if wrkBin, err = findWrk(cfg.wrk); err != nil {
			return err
		}
		if slices.ContainsFunc(cfg.Kinds, storeKind) {
			if redisBin, err = findRedis(); err != nil {
				return err
			}
		}
	}
	ws, err := newWorkspace(ctx, cfg.src, cfg.keep, stderr)
	if err != nil {
		return err
	}
	defer ws.close()
	rep := &report{
		Machine: describeMachine(ws.nofile), Config: cfg, Started: time.Now(),
		Command: "go run ./cmd/loadtest bench" + argString(args),
	}
	if ws.nofileNote != "" {
		rep.Problems = append(rep.Problems, ws.nofileNote)
	}

	// 1. Go benchmarks first, while nothing else runs.
	if !cfg.skipGoBench {
		res, goArgs, err := runGoBench(ctx, ws, cfg.Pattern, cfg.Count, cfg.Benchtime)
		rep.GoBenchCmd = "go " + strings.Join(goArgs, " ")
		if err != nil {
			rep.Problems = append(rep.Problems, err.Error())
		}
		rep.GoBench = res
	}
	// 2. Load runs, mockgateway and baseline side by side.
	if !cfg.skipLoad && ctx.Err() == nil {
		w := &wrkRunner{bin: wrkBin, threads: cfg.Threads, connections: cfg.Connections, duration: cfg.Duration,
			warmup: cfg.Warmup, timeout: 10 * time.Second, dir: ws.dir}
		load, err := runLoad(ctx, ws, w, cfg.Rounds, cfg.Kinds, redisBin)
		if err != nil {
			rep.Problems = append(rep.Problems, "load: "+err.Error())
		}
		rep.Load = load
	}
	// 3. Memory with many open streams, on a fresh instance.
	if !cfg.skipMemory && cfg.Streams > 0 && ctx.Err() == nil {
		mem, err := runMemory(ctx, ws, cfg.Streams, cfg.Batch)
		if err != nil {
			rep.Problems = append(rep.Problems, "memory: "+err.Error())
		}
		rep.Memory = mem
	}
	// 4. The scaling table: CPU per request as each dimension of the work grows.
	if !cfg.skipScaling && ctx.Err() == nil {
		sc, err := runScaling(ctx, ws, cfg.Scaling)
		if err != nil {
			rep.Problems = append(rep.Problems, "scaling: "+err.Error())
		}
		rep.Scaling = sc
	}
	if ctx.Err() != nil {
		rep.Problems = append(rep.Problems, "interrupted")
	}

	rep.Targets = evaluate(rep)
	writeMarkdown(stdout, rep)
	writeScaling(stdout, rep.Scaling, true)
	if cfg.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("json-out: %w", err)
		}
		if err := os.WriteFile(cfg.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
		ws.logf("wrote %s", cfg.jsonOut)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%d problem(s) during the run (listed under the table)", len(rep.Problems))
	}
	if cfg.strict {
		for _, t := range rep.Targets {
			if t.Holds != nil && !*t.Holds {
				return fmt.Errorf("target not met: %s", t.Name)
			}
		}
	}
	return nil
}

func argString(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " " + strings.Join(args, " ")
}

func runMemory(ctx context.Context, ws *workspace, streams, batch int) (*memResult, error) {
	mg, err := ws.startMockgateway(ctx, "memory", "--max-concurrent", "20000", "--stream-timeout", "15m")
	if err != nil {
		return nil, err
	}
	m, err := holdStreams(ctx, ws, mg, streams, batch)
	mg.stop()
	if err != nil || ctx.Err() != nil {
		return &m, err
	}
	// The same streams on the bare handler: the share of the figure that is net/http's own.
	base, err := ws.startBaseline(ctx)
	if err != nil {
		return &m, err
	}
	defer base.stop()
	b, err := holdStreams(ctx, ws, base, streams, batch)
	m.Baseline = &b
	return &m, err
}
