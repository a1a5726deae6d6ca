package main

import (
	"testing"

	"mockgateway/internal/fixtures"
)

// TestBenchFixturesLoad: the bench's fixture files are what the service loads: 1,000 fixtures.
func TestBenchFixturesLoad(t *testing.T) {
	dir, err := writeBenchFixtures(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	set, err := fixtures.Load(dir, fixtures.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if n := set.Len(); n != benchFixtures {
		t.Errorf("%d fixtures loaded, want %d", n, benchFixtures)
	}
}
