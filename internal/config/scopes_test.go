package config

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestScopeAndFixtureFileSettings: --scope-ttl and --max-fixture-file-bytes have their
// documented defaults, take the environment as fallback, and refuse nonsense.
func TestScopeAndFixtureFileSettings(t *testing.T) {
	c, err := Parse(nil, env(nil), &bytes.Buffer{})
	if err != nil || c.ScopeTTL != 10*time.Minute || c.MaxFixtureFileBytes != 16<<20 {
		t.Fatalf("defaults: %v %v %v", c.ScopeTTL, c.MaxFixtureFileBytes, err)
	}
	c, err = Parse(nil, env(map[string]string{"MOCKGATEWAY_SCOPE_TTL": "90s", "MOCKGATEWAY_MAX_FIXTURE_FILE_BYTES": "4096"}), &bytes.Buffer{})
	if err != nil || c.ScopeTTL != 90*time.Second || c.MaxFixtureFileBytes != 4096 {
		t.Fatalf("environment: %v %v %v", c.ScopeTTL, c.MaxFixtureFileBytes, err)
	}
	for _, args := range [][]string{{"--scope-ttl", "0s"}, {"--max-fixture-file-bytes", "10"}} {
		if _, err := Parse(args, env(nil), &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestStateStoreMasked: --state-store takes redis:// and rediss:// URLs only, and the config's
// log value never carries the URL's password.
func TestStateStoreMasked(t *testing.T) {
	c, err := Parse([]string{"--state-store", "redis://app:s3cr3t-canary@cache:6379/2"}, env(nil), &bytes.Buffer{})
	if err != nil || c.StateStore == "" || c.StateTTL != time.Hour {
		t.Fatalf("parse: %+v %v", c.StateStore, err)
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", slog.Any("config", c))
	if strings.Contains(logs.String(), "s3cr3t-canary") || !strings.Contains(logs.String(), "cache:6379") {
		t.Fatalf("log: %s", logs.String())
	}
	for _, v := range []string{"http://cache:6379", "redis://", "cache:6379"} {
		if _, err := Parse([]string{"--state-store", v}, env(nil), &bytes.Buffer{}); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}
