package config

import (
	"bytes"
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
