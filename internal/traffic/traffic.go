// Package traffic owns the traffic generator (mockgateway traffic): gentle, steady client
// traffic over every path of the service so that dashboards are alive on first start.
//
// It is a plain net/http client on purpose: the generator must be light enough to run beside
// the service in the compose stack, and it must be able to do what an SDK would refuse to do
// (send bad JSON, unknown fields, wrong methods, hang up mid-stream).
package traffic

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"mockgateway/internal/flagenv"
)

// Config is every setting of the traffic generator.
type Config struct {
	Target string // base URL of the service, e.g. http://127.0.0.1:8080
	// Rate is client calls started per second. A call is one client action and may take several
	// HTTP requests (a tool round trip, a retried rate limit).
	Rate     float64
	Duration time.Duration // 0: until stopped
	// Seed chooses the order of the calls and their parameters; 0 draws one (and logs it, so
	// a run can be repeated).
	Seed uint64
	// Concurrency bounds the calls in flight: a tick that finds no free slot is skipped and
	// counted, never queued, so a slow or stuck service cannot make the generator pile up work.
	Concurrency    int
	ReportInterval time.Duration // one summary line per interval
	APIKey         string        // local key of a service started with --api-key; never logged
}

// settings are the generator's flags, read like every mockgateway command's (flagenv).
func settings() []flagenv.Setting {
	return []flagenv.Setting{
		{Name: "target", Env: "MOCKGATEWAY_TRAFFIC_TARGET", Default: "http://127.0.0.1:8080", Usage: "base URL of the service"},
		{Name: "rate", Env: "MOCKGATEWAY_TRAFFIC_RATE", Default: "2", Usage: "client calls started per second"},
		{Name: "duration", Env: "MOCKGATEWAY_TRAFFIC_DURATION", Default: "0", Usage: "how long to run (0: until stopped)"},
		{Name: "seed", Env: "MOCKGATEWAY_TRAFFIC_SEED", Default: "0", Usage: "seed of the call order and parameters (0: random, logged at start)"},
		{Name: "concurrency", Env: "MOCKGATEWAY_TRAFFIC_CONCURRENCY", Default: "8", Usage: "most calls in flight; a tick with no free slot is skipped"},
		{Name: "report-interval", Env: "MOCKGATEWAY_TRAFFIC_REPORT_INTERVAL", Default: "10s", Usage: "interval of the JSON summary line on stderr"},
		{Name: "api-key", Env: "MOCKGATEWAY_TRAFFIC_API_KEY", Usage: "the service's local API key, if it requires one"},
	}
}

const about = `Steady client traffic over every path of a running mockgateway: JSON, streams, tools, n>1,
client errors, client disconnects, simulated faults and latency, and the ready-made simulation
models. Only fixed lorem text is sent. One JSON summary line per interval on stderr.`

// parseConfig reads the settings and checks each; errors name the setting's source, never its
// value.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	v, err := flagenv.Parse("mockgateway traffic", about, settings(), args, getenv, stderr)
	if err != nil {
		return Config{}, err
	}
	var c Config
	u, err := url.Parse(v.Get("target"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, v.Errorf("target", "must be an http(s) URL such as http://127.0.0.1:8080")
	}
	c.Target = strings.TrimRight(u.String(), "/")
	if c.Rate, err = strconv.ParseFloat(v.Get("rate"), 64); err != nil || !(c.Rate > 0) || c.Rate > 1000 {
		return c, v.Errorf("rate", "must be a number above 0 and at most 1000")
	}
	if d := v.Get("duration"); d != "0" {
		if c.Duration, err = time.ParseDuration(d); err != nil || c.Duration < 0 {
			return c, v.Errorf("duration", "must be 0 or a duration such as 30s or 10m")
		}
	}
	if c.Seed, err = strconv.ParseUint(v.Get("seed"), 10, 64); err != nil {
		return c, v.Errorf("seed", "must be a whole number, 0 or more")
	}
	if c.Concurrency, err = strconv.Atoi(v.Get("concurrency")); err != nil || c.Concurrency < 1 || c.Concurrency > 1024 {
		return c, v.Errorf("concurrency", "must be a whole number from 1 to 1024")
	}
	if c.ReportInterval, err = time.ParseDuration(v.Get("report-interval")); err != nil || c.ReportInterval < 10*time.Millisecond {
		return c, v.Errorf("report-interval", "must be a duration of at least 10ms")
	}
	c.APIKey = v.Get("api-key")
	return c, nil
}

// Run is the traffic subcommand: it sends calls until ctx ends or --duration has passed, then
// lets the calls in flight finish (briefly) and returns nil. Flag errors are returned.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	return newGenerator(cfg, logger).run(ctx)
}

// stopGrace is how long calls in flight may go on after the run ends before they are
// cancelled (which the service sees as client disconnects).
const stopGrace = 2 * time.Second

// callTimeout bounds one call, retries included: the slowest path (mock-slow, a stream of
// about 5 s) fits many times over, a stuck service does not hold a slot forever.
const callTimeout = 60 * time.Second

type generator struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
	stats  *stats
	runID  string
}

func newGenerator(cfg Config, logger *slog.Logger) *generator {
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()>>1 | 1 // never 0 again, so the logged seed replays this run
	}
	transport := &http.Transport{
		// No proxy from the environment: the target is a local service, and the traffic
		// must reach it and nothing else.
		Proxy:                 nil,
		MaxIdleConns:          cfg.Concurrency,
		MaxIdleConnsPerHost:   cfg.Concurrency,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 40 * time.Second, // above the simulated timeout's 30 s default stall
		DisableCompression:    true,
	}
	return &generator{
		cfg:    cfg,
		log:    logger,
		client: &http.Client{Transport: transport},
		stats:  newStats(),
		// Request ids carry part of the seed (logged at start), so a log line or a span of
		// generated traffic points back at the run that sent it.
		runID: strconv.FormatUint(cfg.Seed%0xffffff, 16),
	}
}

func (g *generator) run(ctx context.Context) error {
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if g.cfg.Duration > 0 {
		runCtx, cancel = context.WithTimeout(ctx, g.cfg.Duration)
	}
	defer cancel()
	defer g.client.CloseIdleConnections()

	models, err := g.discover(runCtx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before the service answered: a clean stop all the same
		}
		return err
	}
	scenarios := available(allScenarios(), models)
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	g.log.Info("traffic started",
		slog.String("target", g.cfg.Target),
		slog.Float64("rate", g.cfg.Rate),
		slog.String("duration", g.cfg.Duration.String()),
		slog.Uint64("seed", g.cfg.Seed),
		slog.Int("concurrency", g.cfg.Concurrency),
		slog.Any("models", models),
		slog.Any("enabled_scenarios", names))

	rng := rand.New(rand.NewPCG(g.cfg.Seed, g.cfg.Seed^0x9e3779b97f4a7c15))
	d := newDeck(scenarios, rng)

	// Calls get their own context: when the run ends they may finish within stopGrace, so
	// a stop does not turn every call in flight into a disconnect.
	callsCtx, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	slots := make(chan struct{}, g.cfg.Concurrency)
	var wg sync.WaitGroup

	tick := time.NewTicker(time.Duration(float64(time.Second) / g.cfg.Rate))
	defer tick.Stop()
	report := time.NewTicker(g.cfg.ReportInterval)
	defer report.Stop()
	started := time.Now()
	last := started
	var seq uint64

loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case now := <-report.C:
			g.summary("traffic summary", now.Sub(last), g.stats.take())
			last = now
		case <-tick.C:
			// A card is dealt only when a slot is free, so skipped ticks never cost a
			// scenario its turn in the round.
			select {
			case slots <- struct{}{}:
			default:
				g.stats.skip()
				continue
			}
			s := d.next()
			seq++
			c := &call{g: g, scenario: s.name, seq: seq, variant: rng.Uint64()}
			wg.Add(1)
			g.stats.begin(s.name)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				cctx, ccancel := context.WithTimeout(callsCtx, callTimeout)
				defer ccancel()
				err := s.run(cctx, c)
				g.stats.end(s.name, err)
			}()
		}
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
		cancelCalls()
		<-done
	}
	now := time.Now()
	g.summary("traffic summary", now.Sub(last), g.stats.take())
	g.summary("traffic stopped", now.Sub(started), g.stats.totals())
	return nil
}

// discover asks the service which mock models it runs, retrying until it answers or ctx
// ends: in the compose stack the generator may start a moment before the service is ready.
func (g *generator) discover(ctx context.Context) ([]string, error) {
	var lastErr error
	for attempt := 0; ; attempt++ {
		c := &call{g: g, scenario: "discover", seq: 0, n: attempt} // ids traffic-<run>-0-<attempt>
		models, err := c.listModels(ctx)
		if err == nil {
			return models, nil
		}
		lastErr = err
		if attempt%10 == 0 {
			g.log.Warn("waiting for the target", slog.String("target", g.cfg.Target), slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("traffic: %s did not answer GET /v1/models: %v", g.cfg.Target, lastErr)
		case <-time.After(time.Second):
		}
	}
}

func (g *generator) summary(msg string, over time.Duration, c counters) {
	g.log.Info(msg,
		slog.String("interval", over.Round(time.Millisecond).String()),
		slog.Int("calls", c.calls),
		slog.Int("requests", c.requests),
		slog.Int("in_flight", g.stats.inFlightNow()),
		slog.Int("skipped", c.skipped),
		slog.Int("disconnects", c.disconnects),
		slog.Int("transport_errors", c.transportErrors),
		slog.Any("status", c.status),
		slog.Any("scenarios", c.scenarios),
		slog.Any("unexpected", c.unexpected),
		slog.String("last_unexpected", c.lastUnexpected))
}
