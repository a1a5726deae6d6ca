package traffic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// logLine is the part of a summary line the tests read.
type logLine struct {
	Msg             string         `json:"msg"`
	Level           string         `json:"level"`
	Calls           int            `json:"calls"`
	Requests        int            `json:"requests"`
	Skipped         int            `json:"skipped"`
	Disconnects     int            `json:"disconnects"`
	TransportErrors int            `json:"transport_errors"`
	Status          map[string]int `json:"status"`
	Scenarios       map[string]int `json:"scenarios"`
	Unexpected      map[string]int `json:"unexpected"`
	LastUnexpected  string         `json:"last_unexpected"`
	Seed            uint64         `json:"seed"`
}

// parseLines requires every stderr line to be one JSON object and returns them.
func parseLines(t *testing.T, out string) []logLine {
	t.Helper()
	var lines []logLine
	for _, raw := range strings.Split(strings.TrimSpace(out), "\n") {
		var l logLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("stderr line is not JSON: %q", raw)
		}
		lines = append(lines, l)
	}
	return lines
}

func noEnv(string) string { return "" }

func runTraffic(t *testing.T, ctx context.Context, args ...string) ([]logLine, error) {
	t.Helper()
	var stderr testutil.SyncBuffer
	err := Run(ctx, args, noEnv, io.Discard, &stderr)
	return parseLines(t, stderr.String()), err
}

func TestRunExercisesEveryPath(t *testing.T) {
	t.Parallel()
	fake := newFakeService()
	srv := fake.start(t)

	lines, err := runTraffic(t, context.Background(), "--target", srv.URL, "--rate", "200", "--duration", "1500ms",
		"--seed", "42", "--concurrency", "16", "--report-interval", "400ms")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if lines[0].Msg != "traffic started" || lines[0].Seed != 42 {
		t.Errorf("first line = %+v, want traffic started with seed 42", lines[0])
	}
	last := lines[len(lines)-1]
	if last.Msg != "traffic stopped" {
		t.Fatalf("last line = %q, want traffic stopped", last.Msg)
	}
	summaries := 0
	for _, l := range lines {
		if l.Msg == "traffic summary" {
			summaries++
		}
	}
	if summaries < 3 {
		t.Errorf("%d summary lines in 1.5 s at a 400 ms interval, want at least 3", summaries)
	}

	for _, s := range allScenarios() {
		if last.Scenarios[s.name] == 0 {
			t.Errorf("scenario %s never ran", s.name)
		}
	}
	if len(last.Unexpected) > 0 {
		t.Errorf("unexpected answers: %v (last: %s)", last.Unexpected, last.LastUnexpected)
	}
	if last.TransportErrors > 0 {
		t.Errorf("%d transport errors", last.TransportErrors)
	}
	if last.Disconnects == 0 {
		t.Error("no deliberate client disconnect")
	}
	for _, code := range []string{"200", "400", "404", "405", "429", "500", "503"} {
		if last.Status[code] == 0 {
			t.Errorf("no %s answer: %v", code, last.Status)
		}
	}

	fake.mu.Lock()
	defer fake.mu.Unlock()
	for _, kind := range []string{"rate_limit", "server_error", "unavailable", "stream_error", "stream_cut"} {
		if fake.faults[kind] == 0 {
			t.Errorf("no x-mock-fault %s sent", kind)
		}
	}
	if len(fake.latencies) < 2 {
		t.Errorf("x-mock-latency values sent: %v, want several", fake.latencies)
	}
	if fake.toolResults == 0 || fake.choicesN == 0 || fake.usage == 0 || fake.badJSON == 0 {
		t.Errorf("tool results %d, n>1 %d, include_usage %d, bad JSON %d: want each > 0", fake.toolResults, fake.choicesN, fake.usage, fake.badJSON)
	}
	if fake.methods["GET /v1/chat/completions"] == 0 || fake.methods["GET /health"] == 0 || fake.methods["GET /v1/lorem-ipsum"] == 0 {
		t.Errorf("paths seen: %v", fake.methods)
	}

	// Only fixed filler text ever leaves the generator.
	allowed := append(slices.Clone(lorem), `{"result":"`+lorem[1]+`"}`)
	for _, c := range fake.contents {
		if !slices.Contains(allowed, c) {
			t.Errorf("message content %q is not fixed lorem text", c)
		}
	}
	idPattern := regexp.MustCompile(`^traffic-[0-9a-f]+-[0-9]+-[0-9]+$`)
	seen := map[string]bool{}
	for _, id := range fake.requestIDs {
		if !idPattern.MatchString(id) || len(id) > 128 {
			t.Errorf("request id %q does not match the service's pattern", id)
		}
		if seen[id] {
			t.Errorf("request id %q sent twice", id)
		}
		seen[id] = true
	}
	if len(fake.userAgents) != 1 || fake.userAgents["mockgateway-traffic"] == 0 {
		t.Errorf("user agents %v", fake.userAgents)
	}
}

func TestRunSkipsScenariosForUnlistedModels(t *testing.T) {
	t.Parallel()
	fake := newFakeService("mock-echo", "mock-chat", "mock-tools")
	srv := fake.start(t)
	lines, err := runTraffic(t, context.Background(), "--target", srv.URL, "--rate", "100", "--duration", "600ms")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	last := lines[len(lines)-1]
	if last.Calls == 0 {
		t.Fatal("no calls made: nothing was skipped, nothing was tested")
	}
	for _, name := range []string{"model_slow", "model_flaky", "model_gateway"} {
		if last.Scenarios[name] != 0 {
			t.Errorf("%s ran although its model is not listed", name)
		}
	}
	if len(last.Unexpected) > 0 {
		t.Errorf("unexpected: %v (%s)", last.Unexpected, last.LastUnexpected)
	}
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	// Every chat request hangs until the client goes away: the stop must not wait for them
	// longer than the grace period.
	fake := newFakeService()
	fake.block = make(chan struct{})
	srv := fake.start(t)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	lines, err := runTraffic(t, ctx, "--target", srv.URL, "--rate", "50", "--concurrency", "4")
	if err != nil {
		t.Fatalf("Run after cancel: %v, want nil (a clean stop)", err)
	}
	if took := time.Since(start); took > stopGrace+2*time.Second {
		t.Errorf("Run took %v to stop", took)
	}
	last := lines[len(lines)-1]
	if last.Msg != "traffic stopped" {
		t.Errorf("last line %q", last.Msg)
	}
	if len(last.Unexpected) > 0 {
		t.Errorf("calls cancelled by the stop were counted as unexpected: %v", last.Unexpected)
	}
}

func TestRunBoundsConcurrency(t *testing.T) {
	t.Parallel()
	fake := newFakeService()
	fake.block = make(chan struct{})
	srv := fake.start(t)
	lines, err := runTraffic(t, context.Background(), "--target", srv.URL, "--rate", "200", "--duration", "400ms", "--concurrency", "3")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	fake.mu.Lock()
	peak := fake.maxInFlight
	fake.mu.Unlock()
	// A metadata call may be between two of its requests; chat calls are blocked, so the
	// server never sees more requests than slots.
	if peak > 3 {
		t.Errorf("%d requests in flight at once, want at most 3", peak)
	}
	if last := lines[len(lines)-1]; last.Skipped == 0 {
		t.Errorf("no tick was skipped although every slot was busy: %+v", last)
	}
}

func TestRunFailsWhenTargetNeverAnswers(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = runTraffic(t, context.Background(), "--target", "http://"+addr, "--duration", "1200ms")
	if err == nil || !strings.Contains(err.Error(), "/v1/models") {
		t.Errorf("Run = %v, want an error naming GET /v1/models", err)
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"MOCKGATEWAY_TRAFFIC_TARGET": "http://mockgateway:8080/",
		"MOCKGATEWAY_TRAFFIC_RATE":   "0.5",
		"MOCKGATEWAY_TRAFFIC_SEED":   "9",
	}
	getenv := func(k string) string { return env[k] }

	c, err := parseConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Target: "http://127.0.0.1:8080", Rate: 2, Concurrency: 8, ReportInterval: 10 * time.Second}
	if c != want {
		t.Errorf("defaults = %+v, want %+v", c, want)
	}

	c, err = parseConfig(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Target != "http://mockgateway:8080" || c.Rate != 0.5 || c.Seed != 9 {
		t.Errorf("from env = %+v", c)
	}

	c, err = parseConfig([]string{"--rate", "3", "--duration", "1m", "--target", "http://127.0.0.1:9"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate != 3 || c.Duration != time.Minute || c.Target != "http://127.0.0.1:9" || c.Seed != 9 {
		t.Errorf("flags over env = %+v", c)
	}

	for _, args := range [][]string{
		{"--rate", "0"}, {"--rate", "-1"}, {"--rate", "NaN"}, {"--rate", "x"},
		{"--duration", "soon"}, {"--duration", "-1s"},
		{"--seed", "-3"}, {"--concurrency", "0"}, {"--report-interval", "1ms"},
		{"--target", "mockgateway:8080"}, {"--target", "ftp://x"},
		{"--no-such-flag"}, {"extra"},
	} {
		if _, err := parseConfig(args, noEnv, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) accepted", args)
		}
	}
	// A bad key must not be echoed: it may be a secret.
	_, err = parseConfig(nil, func(k string) string {
		if k == "MOCKGATEWAY_TRAFFIC_RATE" {
			return "fast"
		}
		return ""
	}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "MOCKGATEWAY_TRAFFIC_RATE") {
		t.Errorf("env error %v does not name the variable", err)
	}
}

func TestRunHelp(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, noEnv, io.Discard, &stderr); err != nil {
		t.Errorf("--help: %v", err)
	}
	for _, want := range []string{"--target", "--rate", "--duration", "--seed", "MOCKGATEWAY_TRAFFIC_RATE"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %s", want)
		}
	}
	err := Run(context.Background(), []string{"--rate", "0"}, noEnv, io.Discard, io.Discard)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		t.Errorf("bad flag: %v", err)
	}
}

func TestDeckDealsEveryScenarioEachRound(t *testing.T) {
	t.Parallel()
	all := allScenarios()
	total := 0
	for _, s := range all {
		total += s.weight
	}
	deal := func(seed uint64) []string {
		d := newDeck(all, rand.New(rand.NewPCG(seed, seed)))
		var names []string
		for range 3 * total {
			names = append(names, d.next().name)
		}
		return names
	}
	a, b := deal(1), deal(1)
	if !slices.Equal(a, b) {
		t.Error("the same seed dealt two different orders")
	}
	if slices.Equal(a, deal(2)) {
		t.Error("two seeds dealt the same order")
	}
	for round := range 3 {
		counts := map[string]int{}
		for _, n := range a[round*total : (round+1)*total] {
			counts[n]++
		}
		for _, s := range all {
			if counts[s.name] != s.weight {
				t.Errorf("round %d dealt %s %d times, want %d", round, s.name, counts[s.name], s.weight)
			}
		}
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	if d := retryDelay(h); d != 200*time.Millisecond {
		t.Errorf("no header: %v", d)
	}
	h.Set("Retry-After", "1")
	if d := retryDelay(h); d != time.Second {
		t.Errorf("retry-after 1: %v", d)
	}
	h.Set("Retry-After-Ms", "150")
	if d := retryDelay(h); d != 150*time.Millisecond {
		t.Errorf("retry-after-ms wins: %v", d)
	}
	h.Set("Retry-After-Ms", "60000")
	if d := retryDelay(h); d != 2*time.Second {
		t.Errorf("capped: %v", d)
	}
}
