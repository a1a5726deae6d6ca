package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"mockgateway/internal/audit"
	"mockgateway/internal/catalog"
	"mockgateway/internal/config"
	"mockgateway/internal/gcfloor"
	"mockgateway/internal/quota"
	"mockgateway/internal/server"
	"mockgateway/internal/simulation"
	"mockgateway/internal/state"
	"mockgateway/internal/traffic"
	"mockgateway/observability"
)

// version is the interface version the mock implements; a release build may stamp it with
// -ldflags "-X main.version=…".
var version = "4.2.0"

const release = "Gateway Foundation"

// run dispatches the subcommands; without one it builds every part of the service from args and
// getenv, serves until ctx ends, then shuts down gracefully. Tests call it, or serve on port 0
// with a fake getenv.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return healthcheck(ctx, args[1:], getenv, stderr)
		case "traffic":
			return traffic.Run(ctx, args[1:], getenv, stdout, stderr)
		case "audit":
			return audit.Run(ctx, args[1:], getenv, stdout, stderr)
		case "fixtures":
			return fixturesCommand(args[1:], stdout, stderr)
		}
	}
	return serve(ctx, args, getenv, stdout, stderr, nil)
}

// serve is the service itself: the default command. listening, when not nil, is told the address
// once the service listens: tests on port 0 learn their port from it rather than from the log.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, listening func(net.Addr)) error {
	cfg, err := config.Parse(args, getenv, stderr)
	switch {
	case errors.Is(err, config.ErrHelp):
		return nil
	case errors.Is(err, config.ErrVersion):
		fmt.Fprintf(stdout, "mockgateway %s (%s)\n", version, release)
		return nil
	case err != nil:
		return err
	}

	// The log goes to the file, rotated, when there is one, and stderr keeps the lines a person
	// watching it needs (the listening address among them). Requests hand their lines to one
	// writer goroutine; Close (deferred first, so it runs last) writes the final lines.
	logs, err := observability.OpenLog(observability.LogSettings{
		Level: cfg.LogLevel, Format: cfg.LogFormat,
		File: cfg.LogFile, FileMaxBytes: int64(cfg.LogMaxSizeMB) << 20, FileBackups: cfg.LogMaxBackups, AccessToStderr: cfg.LogStderr,
		Access: cfg.AccessLog, AccessSample: cfg.AccessLogSample,
	}, stderr)
	if err != nil {
		return err
	}
	defer logs.Close()
	logger := logs.Logger
	cat := catalog.Builtin()
	if cfg.CatalogPath != "" {
		if cat, err = catalog.Load(cfg.CatalogPath); err != nil {
			return err
		}
	}

	// GOGC in the environment is the operator tuning the collector: the floor steps aside.
	if getenv("GOGC") != "" {
		cfg.GCFloorMB = 0
	}
	defer gcfloor.Start(uint64(cfg.GCFloorMB) << 20)()

	tracing, err := observability.NewTracing(ctx, getenv, observability.TracingConfig{
		ServiceVersion: version, Release: release, BufferSize: cfg.TraceBuffer,
	})
	if err != nil {
		return err
	}
	defer func() {
		// A fresh context: ctx has ended by now, and the last spans must still be flushed.
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(flushCtx); err != nil {
			logger.Warn("trace export did not flush", "exporter", tracing.Exporter)
		}
	}()

	metrics := observability.NewMetrics(prometheus.NewRegistry(), cat.IDs(), cat.ExecutableIDs(),
		observability.BuildInfo{Version: version, Release: release, FaultKinds: simulation.Kinds()})
	metrics.Registry().MustRegister(logs.Collector())
	store, err := loadFixtures(ctx, cfg, logger, metrics)
	if err != nil {
		return err
	}
	// The shared state store, when --state-store names one, lives until run returns: past ctx,
	// so that requests finishing during the drain still reach it.
	stateCtx, stopState := context.WithCancel(context.WithoutCancel(ctx))
	shared, err := server.NewSharedState(stateCtx, cfg, store, metrics.Registry(), logger)
	if err != nil {
		stopState()
		return err
	}
	// The runtime state: shared by the replicas, or in this process.
	var runtime state.Store
	if shared != nil {
		runtime = shared
		state.RouteClientLogs(logger)
	} else {
		runtime = &state.Memory{Fixtures: store, Calls: server.NewJournal(cfg), Quotas: quota.NewBuckets(cfg.QuotaKeys, time.Now),
			Attempts: simulation.NewAttemptCounter(cfg.AttemptKeys, cfg.AttemptTTL, time.Now)}
	}
	defer func() {
		stopState()
		if shared != nil {
			shared.Wait()
		}
	}()
	drain := server.NewDrain()
	handler := server.New(server.Deps{
		Config:     cfg,
		Catalog:    cat,
		Logger:     logger,
		Tracer:     tracing.Tracer,
		Propagator: observability.Propagator(),
		Metrics:    metrics,
		Spans:      tracing.Buffer,
		Drain:      drain,
		State:      runtime,
		Sealer:     server.NewSealer(cfg),
		Version:    version,
		Release:    release,
		Started:    time.Now(),
	})

	// Listen first, so that port 0 works and the chosen address can be logged.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	conns := newConnWatch()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		// What net/http writes before a handler answers (a 100 Continue) gets the write timeout
		// too; the middleware restarts it as a response begins, and a stream on every write, so
		// simulated latency never counts against it.
		WriteTimeout: cfg.WriteTimeout,
		IdleTimeout:  cfg.IdleTimeout,
		// "OPTIONS *" goes through the handler chain like any request — request id, access
		// log, metrics — instead of net/http's bare 200: no route matches "*", so it is 404
		// not_found.
		DisableGeneralOptionsHandler: true,
		ConnState:                    conns.track,
		// net/http's own messages (TLS noise, accept errors) may quote what a client sent; they
		// are reduced to a fixed line.
		ErrorLog: log.New(fixedLine{logger}, "", 0),
	}
	exec, meta := cat.Counts()
	logger.Info("listening",
		slog.String("addr", ln.Addr().String()),
		slog.String("version", version),
		slog.String("release", release),
		slog.String("exporter", tracing.Exporter),
		slog.String("models", fmt.Sprintf("%d executable, %d metadata only", exec, meta)),
		slog.Any("config", cfg))
	if listening != nil {
		listening(ln.Addr())
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, ln, conns, drain, cfg.DrainTimeout, cfg.DrainQuiet, logger, serveErr)
}

// shutdown drains the service so that every request a client has sent gets an answer:
//
//   - At once: the listener closes (a new connection is refused before the client sends
//     anything), then /health answers 503 draining, /v1 503 shutting_down, and every response
//     begun from now on carries Connection: close.
//   - Requests in flight finish; streams still open at the drain deadline end with a
//     shutting_down error frame and [DONE].
//   - Only when no connection is serving a request and none has started one for quiet
//     (--drain-quiet, 1 s: a client looping on a keep-alive connection sends its next request
//     well within it, gets its answer with Connection: close, and leaves; a quarter second was
//     not enough for a client on a loaded machine) are the idle keep-alive connections closed
//     (http.Server.Shutdown). Closing them earlier — as Shutdown alone, or
//     SetKeepAlivesEnabled(false), does at once — resets a request that a client had just sent
//     on one, which it cannot tell from a failure and SDKs do not retry. A drain whose clients
//     have all left does not wait for it.
//
// Past the drain deadline, connections still serving get 10 seconds (and the quiet) more, then
// are closed.
func shutdown(srv *http.Server, ln net.Listener, conns *connWatch, drain *server.Drain, drainTimeout, quiet time.Duration, logger *slog.Logger, serveErr <-chan error) error {
	logger.Info("shutting down", slog.String("drain_timeout", drainTimeout.String()), slog.String("drain_quiet", quiet.String()))
	// The listener closes before the drain begins: a client told Connection: close dials again,
	// and a connection the kernel had queued but Serve not yet accepted when the listener closed
	// is reset — after the client wrote its request on it.
	_ = ln.Close()
	drain.Begin()
	<-serveErr // Serve returns once the listener is closed; that is the point, not a failure

	abort := time.NewTimer(drainTimeout)
	defer abort.Stop()
	if !conns.waitQuiet(quiet, abort.C) {
		// Streams may still be open, or every connection idle but changed within the quiet.
		logger.Info("drain deadline passed; ending open streams", slog.Int("busy_connections", conns.busyNow()))
		drain.AbortStreams()
		// Ten seconds more, and the quiet on top: a quiet longer than the wait could never be
		// seen, and every drain with an idle client would end in closing connections at once.
		giveUp := time.NewTimer(10*time.Second + quiet)
		defer giveUp.Stop()
		if !conns.waitQuiet(quiet, giveUp.C) {
			logger.Warn("connections still open after the drain; closing them")
			return srv.Close()
		}
	}
	// Every connection left is idle: Shutdown closes them and returns at once.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("connections still open after the drain; closing them")
		return srv.Close()
	}
	// Shutdown does not wait for the handlers of hijacked connections (a simulated stream cut):
	// their access lines are still to come, and the log closes when run returns.
	if err := drain.Wait(ctx); err != nil {
		logger.Warn("requests still in a handler after the drain", slog.Int64("requests", drain.Handling()))
	}
	logger.Info("stopped")
	return nil
}

// connWatch follows the server's connections through their states (http.Server.ConnState), so
// that shutdown can tell when the clients have had their last answers.
type connWatch struct {
	mu    sync.Mutex
	state map[net.Conn]http.ConnState // open connections only
	busy  int                         // connections new or serving a request
	// changed is the last change of any connection's state that left none busy, as time since
	// epoch: only then can the quiet begin, so only then is the clock read — not on each of the
	// two changes every request makes while others are in flight.
	epoch   time.Time
	changed time.Duration
}

func newConnWatch() *connWatch {
	return &connWatch{state: map[net.Conn]http.ConnState{}, epoch: time.Now()}
}

func (w *connWatch) track(c net.Conn, s http.ConnState) {
	w.mu.Lock()
	if prev, ok := w.state[c]; ok && (prev == http.StateNew || prev == http.StateActive) {
		w.busy--
	}
	switch s {
	case http.StateNew, http.StateActive:
		w.busy++
		w.state[c] = s
	case http.StateIdle:
		w.state[c] = s
	default: // closed or hijacked: no longer the server's
		delete(w.state, c)
	}
	if w.busy == 0 {
		w.changed = time.Since(w.epoch)
	}
	w.mu.Unlock()
}

// quiet reports whether no connection is open, or none is busy and none has changed state for
// the given time.
func (w *connWatch) quiet(d time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.state) == 0 || (w.busy == 0 && time.Since(w.epoch)-w.changed >= d)
}

// busyNow is how many connections are new or serving a request.
func (w *connWatch) busyNow() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.busy
}

// waitQuiet waits until quiet(d), or returns false when stop fires first.
func (w *connWatch) waitQuiet(d time.Duration, stop <-chan time.Time) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !w.quiet(d) {
		select {
		case <-stop:
			return false
		case <-tick.C:
		}
	}
	return true
}

// fixedLine turns net/http's error log into one fixed record: its text can quote client input.
type fixedLine struct{ logger *slog.Logger }

func (f fixedLine) Write(p []byte) (int, error) {
	f.logger.Debug("http server reported a connection error")
	return len(p), nil
}

// healthcheck asks a running service's /health and succeeds only on 200: the container image's
// HEALTHCHECK uses the binary itself, so the image needs no shell or curl.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(cfg.Addr)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1" // a service listening on all interfaces answers on loopback
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: /health answered %d", resp.StatusCode)
	}
	return nil
}
