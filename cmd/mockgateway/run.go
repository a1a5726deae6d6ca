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
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"mockgateway/internal/audit"
	"mockgateway/internal/catalog"
	"mockgateway/internal/config"
	"mockgateway/internal/gcfloor"
	"mockgateway/internal/server"
	"mockgateway/internal/simulation"
	"mockgateway/internal/traffic"
	"mockgateway/observability"
)

// version is the interface version the mock implements; a release build may stamp it with
// -ldflags "-X main.version=…".
var version = "4.2.0"

const release = "Gateway Foundation"

// run dispatches the subcommands; without one it builds every part of the service from args and
// getenv, serves until ctx ends, then shuts down gracefully. Tests call it on port 0 with a fake
// getenv.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return healthcheck(ctx, args[1:], getenv, stderr)
		case "traffic":
			return traffic.Run(ctx, args[1:], getenv, stdout, stderr)
		case "audit":
			return audit.Run(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	return serve(ctx, args, getenv, stdout, stderr)
}

// serve is the service itself: the default command.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
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

	logOut := stderr
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("log-file: %w", err)
		}
		defer f.Close()
		logOut = io.MultiWriter(stderr, f)
	}
	// Requests hand their log lines to one writer goroutine instead of each making the write
	// calls under slog's lock; Close (deferred first, so it runs last) writes the final lines.
	logWriter := observability.NewLogWriter(logOut)
	defer logWriter.Close()
	logger, err := observability.NewLogger(logWriter, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
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
	drain := server.NewDrain()
	handler := server.New(server.Deps{
		Config:     cfg,
		Catalog:    cat,
		Logger:     logger,
		Tracer:     tracing.Provider.Tracer("mockgateway"),
		Propagator: observability.Propagator(),
		Metrics:    metrics,
		Spans:      tracing.Buffer,
		Drain:      drain,
		Version:    version,
		Release:    release,
		Started:    time.Now(),
	})

	// Listen first, so that port 0 works and the chosen address can be logged.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.IdleTimeout,
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

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, drain, cfg.DrainTimeout, logger, serveErr)
}

// shutdown stops accepting, lets in-flight JSON requests finish, and after the drain deadline
// ends open streams with a shutting_down error frame and [DONE].
func shutdown(srv *http.Server, drain *server.Drain, drainTimeout time.Duration, logger *slog.Logger, serveErr <-chan error) error {
	logger.Info("shutting down", slog.String("drain_timeout", drainTimeout.String()))
	drain.Begin()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()

	abort := time.NewTimer(drainTimeout)
	defer abort.Stop()
	select {
	case err := <-done:
		<-serveErr
		logger.Info("stopped")
		return err
	case <-abort.C:
	}
	logger.Info("drain deadline passed; ending open streams")
	drain.AbortStreams()
	select {
	case err := <-done:
		<-serveErr
		logger.Info("stopped")
		return err
	case <-time.After(10 * time.Second):
		logger.Warn("connections still open after the drain; closing them")
		err := srv.Close()
		<-serveErr
		return err
	}
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
