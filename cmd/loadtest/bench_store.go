package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The store kinds (issue 35's cost target): the chat JSON and stream requests against a second
// mockgateway, started as the first (the same fixtures, full telemetry) but with --state-store
// pointing at a redis-server this run starts, in the same rounds as the in-memory kinds. The
// requests name no scope and no runtime fixture exists, so what the store costs them is the
// journal's writes: the target is ≥ minStoreRatio of the in-memory figures.
const minStoreRatio = 0.8

// storeKind reports whether a load kind runs against the store's mockgateway.
func storeKind(k string) bool { return strings.HasSuffix(k, "-store") }

// findRedis is redis-server from PATH, looked up before anything is built.
func findRedis() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", errors.New("redis-server is not installed: the json-store and stream-store load kinds need it (Debian: apt-get install -y redis-server, or make redis; --load-kinds without them skips it)")
	}
	return p, nil
}

// storeRun is what the store kinds need beside the in-memory servers: the redis-server and the
// mockgateway that keeps its state there.
type storeRun struct {
	redis *server
	mg    *server
}

func (s *storeRun) stop() {
	if s == nil {
		return
	}
	s.mg.stop()
	s.redis.stop()
}

// startStore starts redis-server (loopback, a free port, no persistence, its directory in the
// workspace) and a mockgateway with extra flags and --state-store pointing at it, then checks
// that the store is in use: /health names it available and a call's journal entry is read back
// from it.
func startStore(ctx context.Context, ws *workspace, redisBin string, extra ...string) (*storeRun, error) {
	st := &storeRun{}
	var err error
	for range 3 { // a port taken between freeAddr and the child's listen: another port
		if st.redis, err = startRedis(ctx, ws, redisBin); err == nil || ctx.Err() != nil || !errors.Is(err, errExitedAtStart) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	st.mg, err = ws.startMockgateway(ctx, "store", append(extra, "--state-store", "redis://"+st.redis.addr+"/0")...)
	if err != nil {
		st.redis.stop()
		return nil, err
	}
	st.mg.name = "mg+redis"
	if err := checkStoreInUse(ctx, st.mg); err != nil {
		st.stop()
		return nil, err
	}
	return st, nil
}

func startRedis(ctx context.Context, ws *workspace, bin string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(addr)
	dir := filepath.Join(ws.dir, "redis-"+port)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--bind", host, "--port", port, "--dir", dir, "--save", "", "--appendonly", "no",
		"--loglevel", "warning", "--logfile", filepath.Join(dir, "redis.log"))
	s := &server{name: "redis-server", cmd: cmd, addr: addr}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redis-server: %w", err)
	}
	s.watch()
	deadline := time.Now().Add(10 * time.Second)
	for redisPing(addr) != nil {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server %w: %v (its log: %s)", errExitedAtStart, <-s.done, filepath.Join(dir, "redis.log"))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s", addr)
		}
	}
	ws.logf("redis-server (pid %d) listening on %s", s.pid(), addr)
	return s, nil
}

// redisPing sends PING in the protocol's inline form and wants +PONG: the bench reads nothing
// else from Redis itself, so it needs no client.
func redisPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING: %q", strings.TrimSpace(line))
	}
	return nil
}

// checkStoreInUse: /health says the store is redis and available, and a chat call's journal
// entry comes back from GET /_mock/journal, which reads the store.
func checkStoreInUse(ctx context.Context, s *server) error {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	get := func(path string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url(path), nil)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, err = bufio.NewReader(resp.Body).WriteTo(&b)
		return b.String(), err
	}
	h, err := get("/health")
	if err != nil {
		return err
	}
	if !strings.Contains(h, `"store":"redis"`) || !strings.Contains(h, `"available":true`) {
		return fmt.Errorf("the store's mockgateway does not report its Redis available: %s", h)
	}
	if _, _, err := post(ctx, client, s, jsonRequest); err != nil {
		return err
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		j, err := get("/_mock/journal?limit=1")
		if err != nil {
			return err
		}
		if strings.Contains(j, `"request_id"`) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no journal entry read back from the store within 5s: %s", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// storeCounters reads what the store's mockgateway counted over the load: journal entries its
// writer dropped, and round trips that failed.
func storeCounters(ctx context.Context, s *server) (dropped, errs float64, err error) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	m, err := scrape(ctx, client, s.url("/metrics"), "mockgateway_journal_dropped_total", "mockgateway_state_store_errors_total")
	return m["mockgateway_journal_dropped_total"], m["mockgateway_state_store_errors_total"], err
}

// storeTargets: requests/s with the store against in memory, and CPU per request the other way
// round (in-memory CPU ÷ the store's), so that both read "≥ 0.8×".
func storeTargets(l *loadResult) []target {
	var ts []target
	for _, c := range []struct {
		name      string
		store     *loadFigures
		mem       *loadFigures
		unit      string
		perCPUFig string
	}{
		{"JSON chat req/s with --state-store vs in memory", l.StoreJSON, l.JSON["mockgateway"], "req/s", "JSON chat requests per server CPU second with --state-store vs in memory"},
		{"16-token streams/s with --state-store vs in memory", l.StoreStream, l.Stream["mockgateway"], "streams/s", "16-token streams per server CPU second with --state-store vs in memory"},
	} {
		if c.store == nil {
			continue
		}
		rps := target{Name: c.name, Want: fmt.Sprintf("≥ %.1f× in memory", minStoreRatio), Got: "not measured"}
		cpu := target{Name: c.perCPUFig, Want: fmt.Sprintf("≥ %.1f× in memory", minStoreRatio), Got: "not measured"}
		if c.mem != nil && c.store.RPS > 0 && c.mem.RPS > 0 {
			rps.Value = c.store.RPS / c.mem.RPS
			rps.Got = fmt.Sprintf("%.2f× (%s vs %s %s)", rps.Value, num(c.store.RPS), num(c.mem.RPS), c.unit)
			rps.Holds = holds(rps.Value >= minStoreRatio)
		}
		if c.mem != nil && c.store.CPUus > 0 && c.mem.CPUus > 0 {
			cpu.Value = c.mem.CPUus / c.store.CPUus
			cpu.Got = fmt.Sprintf("%.2f× (%s vs %s µs of mockgateway CPU a request)", cpu.Value, num(c.store.CPUus), num(c.mem.CPUus))
			cpu.Holds = holds(cpu.Value >= minStoreRatio)
		}
		ts = append(ts, rps, cpu)
	}
	return ts
}

// writeStoreRows adds the store's rows to the table: each against the in-memory mockgateway of
// the same rounds.
func writeStoreRows(row func(fig, a, b, rat, want, ok string), tgt func(string) (string, string), l *loadResult) {
	for _, c := range []struct {
		what, name, perCPU string
		store, mem         *loadFigures
	}{
		{"JSON chat requests/s", "JSON chat req/s with --state-store vs in memory", "JSON chat requests per server CPU second with --state-store vs in memory", l.StoreJSON, l.JSON["mockgateway"]},
		{"16-token streams/s", "16-token streams/s with --state-store vs in memory", "16-token streams per server CPU second with --state-store vs in memory", l.StoreStream, l.Stream["mockgateway"]},
	} {
		if c.store == nil || c.mem == nil || len(c.store.Rounds) == 0 {
			continue
		}
		want, ok := tgt(c.name)
		row(fmt.Sprintf("**%s with `--state-store`** (Redis on loopback; vs in memory, same rounds)", c.what), num(c.store.RPS), num(c.mem.RPS), roundRatios(c.store, c.mem), want, ok)
		want, ok = tgt(c.perCPU)
		row("**server CPU per request with the store** (µs, mockgateway; ratio: in memory ÷ store)", num(c.store.CPUus), num(c.mem.CPUus), ratio(c.mem.CPUus, c.store.CPUus), want, ok)
		row("redis-server CPU per request (µs)", num(c.store.StoreCPUus), "", "", "", "")
		row("latency p50 / p99 with the store (ms, vs in memory)", num(c.store.P50ms)+" / "+num(c.store.P99ms), num(c.mem.P50ms)+" / "+num(c.mem.P99ms), "", "", "")
		row("wrk errors with the store (all rounds)", strconv.FormatInt(c.store.Errors, 10), strconv.FormatInt(c.mem.Errors, 10), "", "", "")
	}
	if l.StoreJSON != nil || l.StoreStream != nil {
		row("journal entries dropped / failed store round trips (the store's mockgateway, whole load)", fmt.Sprintf("%s / %s", num(l.StoreJournalDropped), num(l.StoreErrors)), "", "", "", "")
	}
}
