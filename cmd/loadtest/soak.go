package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"
)

func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 10*time.Minute, "how long to send traffic")
	rate := fs.Float64("rate", 50, "requests per second")
	interval := fs.Duration("interval", 10*time.Second, "sampling interval")
	maxInFlight := fs.Int("max-in-flight", 1000, "client-side cap on requests in flight")
	seed := fs.Uint64("seed", 1, "seed of the traffic mix")
	src := fs.String("src", "", "module root to build (default: from go env GOMOD)")
	keep := fs.Bool("keep", false, "keep the temporary directory")
	jsonOut := fs.String("json-out", "", "also write the samples and verdicts as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate <= 0 || *duration <= 0 || *interval <= 0 || *maxInFlight < 1 {
		return errors.New("duration, rate and interval must be positive")
	}
	ws, err := newWorkspace(ctx, *src, *keep, stderr)
	if err != nil {
		return err
	}
	defer ws.close()
	mg, err := ws.startMockgateway(ctx, "soak")
	if err != nil {
		return err
	}
	defer mg.stop()

	rep := &soakReport{Machine: describeMachine(ws.nofile), Command: "go run ./cmd/loadtest soak" + argString(args), Duration: duration.String(), Rate: *rate}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	client := &http.Client{Transport: tr}
	probeClient := &http.Client{Timeout: 10 * time.Second}
	stats := &soakStats{byStatus: map[string]int64{}}
	sample := func(at time.Duration, prev map[string]int64, prevTotal int64, label string) (soakSample, map[string]int64) {
		snap := stats.snapshot()
		diff := map[string]int64{}
		for k, v := range snap {
			if d := v - prev[k]; d > 0 {
				diff[k] = d
			}
		}
		smp := soakSample{At: at, AtS: at.Seconds(), Requests: stats.total.Load(), ByStatus: diff, Unexpected: stats.unexpected.Load(), Label: label}
		smp.Interval = smp.Requests - prevTotal
		smp.RSS, _ = rss(mg.pid())
		if g, err := scrape(ctx, probeClient, mg.url("/metrics"), "go_goroutines", "mockgateway_streams_active"); err == nil {
			smp.Goroutines, smp.StreamsActive = g["go_goroutines"], g["mockgateway_streams_active"]
		}
		probeClient.CloseIdleConnections()
		return smp, snap
	}

	idle, prev := sample(0, nil, 0, "idle, before")
	rep.Samples = append(rep.Samples, idle)
	ws.logf("soak: %s at %.0f req/s against %s; samples every %s", duration, *rate, mg.addr, interval)
	fmt.Fprintf(stderr, "%s\n", sampleHeader())
	fmt.Fprintf(stderr, "%s\n", sampleRow(idle))

	scenarios := soakScenarios()
	totalWeight := 0
	for _, sc := range scenarios {
		totalWeight += sc.weight
	}
	rng := rand.New(rand.NewPCG(*seed, 0x5eed))
	pick := func() scenario {
		n := rng.IntN(totalWeight)
		for _, sc := range scenarios {
			if n < sc.weight {
				return sc
			}
			n -= sc.weight
		}
		return scenarios[0]
	}

	trafficCtx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	var wg sync.WaitGroup
	sem := make(chan struct{}, *maxInFlight)
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	sampleTick := time.NewTicker(*interval)
	defer sampleTick.Stop()
	end := time.After(*duration)
	var seq int64
	prevTotal := int64(0)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-mg.exited:
			rep.Verdicts = append(rep.Verdicts, "FAIL: mockgateway exited during the soak")
			rep.Failed = true
			break loop
		case <-sampleTick.C:
			smp, snap := sample(time.Since(start), prev, prevTotal, "")
			prev, prevTotal = snap, smp.Requests
			rep.Samples = append(rep.Samples, smp)
			fmt.Fprintf(stderr, "%s\n", sampleRow(smp))
		case <-tick.C:
			select {
			case sem <- struct{}{}:
			default:
				stats.skipped.Add(1)
				continue
			}
			seq++
			sc, n := pick(), seq
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				stats.do(trafficCtx, client, "http://"+mg.addr, sc, n)
			}()
		}
	}
	trafficTime := time.Since(start)
	// Traffic stops; requests in flight finish (the longest scenario lasts well under 30s).
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(45 * time.Second):
		stopTraffic()
		<-waited
	}
	smp, snap := sample(trafficTime, prev, prevTotal, "traffic stopped")
	prev, prevTotal = snap, smp.Requests
	rep.Samples = append(rep.Samples, smp)
	fmt.Fprintf(stderr, "%s\n", sampleRow(smp))
	// Idle again: the client's keep-alive connections are closed, so the server's connection
	// goroutines must go; wait up to 30s for the count to come back.
	tr.CloseIdleConnections()
	var after soakSample
	for deadline := time.Now().Add(30 * time.Second); ; {
		after, _ = sample(time.Since(start), prev, prevTotal, "idle, after")
		if after.Goroutines <= idle.Goroutines+goroutineSlack || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	rep.Samples = append(rep.Samples, after)
	rep.Skipped = stats.skipped.Load()
	stats.mu.Lock()
	rep.Unexpected = append(rep.Unexpected, stats.samples...)
	stats.mu.Unlock()

	verdicts, failed := judgeSoak(rep.Samples, idle, after, stats.unexpected.Load(), *duration)
	rep.Verdicts = append(rep.Verdicts, verdicts...)
	rep.Failed = rep.Failed || failed || ctx.Err() != nil
	if ctx.Err() != nil {
		rep.Verdicts = append(rep.Verdicts, "FAIL: interrupted")
	}
	writeSoak(stdout, rep)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if rep.Failed {
		return errors.New("soak failed (see the verdicts)")
	}
	return nil
}
