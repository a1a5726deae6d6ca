package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"mockgateway/internal/config"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/server"
	"mockgateway/observability"
)

// loadFixtures builds the fixture store and, with --fixtures, loads the files — a bad file stops
// start-up, naming the file, the fixture and the problem — then keeps them fresh: a change is
// reloaded, a bad one logged and counted while the last good set stays (docs/fixtures.md).
func loadFixtures(ctx context.Context, cfg config.Config, logger *slog.Logger, metrics *observability.Metrics) (*fixtures.Store, error) {
	store := server.NewFixtureStore(cfg)
	metrics.WatchFixtureScopes(store.Scopes)
	if cfg.FixturesPath == "" {
		return store, nil
	}
	set, err := fixtures.Load(cfg.FixturesPath, server.FixtureLimits(cfg))
	if err != nil {
		return nil, err
	}
	store.SetFiles(set)
	logger.Info("fixtures loaded", slog.String("fixtures", cfg.FixturesPath), slog.Int("loaded", set.Len()))
	go fixtures.Watch(ctx, cfg.FixturesPath, cfg.FixturesReload, server.FixtureLimits(cfg),
		func(set *fixtures.Set) {
			store.SetFiles(set)
			metrics.ObserveFixtureReload("ok")
			logger.Info("fixtures reloaded", slog.String("fixtures", cfg.FixturesPath), slog.Int("loaded", set.Len()))
		},
		func(err error) {
			metrics.ObserveFixtureReload("error")
			// The problem names files, fixtures and fields of the operator's own files, never
			// request text.
			logger.Warn("fixtures not reloaded; the last good set stays", slog.String("fixtures", cfg.FixturesPath), slog.String("problem", err.Error()))
		})
	return store, nil
}

// fixturesCommand is "mockgateway fixtures lint PATH": the problems of a fixture file or
// directory, one a line, without starting the service. It fails when there are any. Regexes are
// held to the default bounds (docs/fixtures.md).
func fixturesCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "lint" {
		fmt.Fprintln(stderr, "usage: mockgateway fixtures lint PATH")
		return errors.New("fixtures: expected lint PATH")
	}
	findings := fixtures.Lint(args[1], fixtures.Limits{})
	for _, f := range findings {
		fmt.Fprintln(stdout, f.String())
	}
	if len(findings) > 0 {
		return fmt.Errorf("fixtures lint: %d problem(s)", len(findings))
	}
	fmt.Fprintln(stdout, "no problems")
	return nil
}
