package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"mockgateway/internal/chatclient"
)

// The bench's load runs go to a mockgateway with 1,000 file fixtures loaded, as the issue
// measures it: the plain requests match none of them and are generated; the fixture-json kind's
// requests carry a header that the last of them, and only it, matches. Its reply is the text
// mock-echo generates for the same request, so both answers are the same bytes.
const (
	benchFixtures      = 1000
	benchFixtureHeader = "X-Bench-Fixture"
	benchFixtureMatch  = "f0999"
)

func benchFixtureName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// writeBenchFixtures writes the fixtures, 100 a file, and returns their directory.
func writeBenchFixtures(dir string) (string, error) {
	fdir := filepath.Join(dir, "bench-fixtures")
	if err := os.MkdirAll(fdir, 0o755); err != nil {
		return "", err
	}
	for start := 0; start < benchFixtures; start += 100 {
		var fs []map[string]any
		for i := start; i < start+100; i++ {
			fs = append(fs, map[string]any{
				"name":  benchFixtureName(i),
				"match": map[string]any{"model": "mock-echo", "header": map[string]string{benchFixtureHeader: fmt.Sprintf("f%04d", i)}},
				"reply": map[string]any{"content": "echo: " + userMessage},
			})
		}
		b, err := json.Marshal(map[string]any{"fixtures": fs})
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(fdir, fmt.Sprintf("bench-%02d.json", start/100)), b, 0o644); err != nil {
			return "", err
		}
	}
	return fdir, nil
}

// probeFixture checks, before the load, that the fixture-json request is answered by the
// 1,000th fixture and a plain one by the generator, from the call journal.
func probeFixture(ctx context.Context, s *server) error {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	last := func() (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url("/_mock/journal?limit=1"), nil)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var j struct {
			Data []struct{ Fixture string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&j); err != nil || len(j.Data) == 0 {
			return "", fmt.Errorf("the journal: %v", err)
		}
		return j.Data[0].Fixture, nil
	}
	for _, c := range []struct {
		header map[string]string
		want   string
	}{{map[string]string{benchFixtureHeader: benchFixtureMatch}, benchFixtureName(benchFixtures - 1)}, {nil, "generated"}} {
		resp, _, err := chatclient.Request{URL: s.url(chatclient.ChatPath), Body: []byte(jsonRequest), Header: c.header}.Do(ctx, client, maxAnswer)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("fixture probe: status %d", resp.StatusCode)
		}
		if got, err := last(); err != nil || got != c.want {
			return fmt.Errorf("fixture probe: answered by %q, want %q (%v)", got, c.want, err)
		}
	}
	return nil
}
