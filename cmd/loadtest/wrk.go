package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrkResult is one wrk run, from the summary line the Lua script's done() prints (exact
// counts and microsecond percentiles) — and, as a cross-check, wrk's own text.
type wrkResult struct {
	Requests   int64     `json:"requests"`
	DurationUS int64     `json:"duration_us"`
	Bytes      int64     `json:"bytes"`
	Errors     wrkErrors `json:"errors"`
	Latency    struct {
		Mean  float64 `json:"mean"`
		Stdev float64 `json:"stdev"`
		Max   float64 `json:"max"`
		P50   float64 `json:"p50"`
		P90   float64 `json:"p90"`
		P99   float64 `json:"p99"`
		P999  float64 `json:"p999"`
	} `json:"latency_us"`
	// The server's CPU time (user + system) during the measured run, from /proc/PID/stat.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	// The server's threads' involuntary context switches during the measured run (preemptions).
	ServerPreemptions int64 `json:"server_preemptions"`
	// redis-server's CPU time during the measured run, for the store kinds.
	StoreCPUSeconds float64 `json:"store_cpu_seconds,omitempty"`
	// From wrk's text output.
	TextRPS    float64 `json:"text_rps"`
	TextNon2xx int64   `json:"text_non2xx"`
}

type wrkErrors struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Status  int64 `json:"status"`
	Timeout int64 `json:"timeout"`
}

func (e wrkErrors) total() int64 { return e.Connect + e.Read + e.Write + e.Status + e.Timeout }

// RPS is completed requests per second of the measured run.
func (r wrkResult) RPS() float64 {
	if r.DurationUS <= 0 {
		return r.TextRPS
	}
	return float64(r.Requests) / (float64(r.DurationUS) / 1e6)
}

const wrkSummaryPrefix = "WRKJSON "

// wrkScript is the Lua script for one POST body: method, JSON content type, the body, and a
// done() that prints the exact summary as one JSON line.
func wrkScript(body string, headers map[string]string) string {
	var b strings.Builder
	b.WriteString("wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n")
	for k, v := range headers {
		fmt.Fprintf(&b, "wrk.headers[%q] = %q\n", k, v)
	}
	fmt.Fprintf(&b, "wrk.body = [==[%s]==]\n", body)
	b.WriteString(`done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('` + wrkSummaryPrefix + `{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"latency_us":{"mean":%.1f,"stdev":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
`)
	return b.String()
}

// parseWrk reads wrk's output. The done() summary line is required; wrk's text adds the
// Requests/sec and Non-2xx figures, which are kept as a cross-check.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	found := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, wrkSummaryPrefix):
			if err := json.Unmarshal([]byte(line[len(wrkSummaryPrefix):]), &r); err != nil {
				return r, fmt.Errorf("wrk summary line: %v", err)
			}
			found = true
		case strings.HasPrefix(line, "Requests/sec:"):
			r.TextRPS, _ = strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			r.TextNon2xx, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
		}
	}
	if !found {
		return r, errors.New("wrk printed no summary line (was the Lua script loaded?)")
	}
	return r, nil
}

// wrkRunner runs wrk with fixed threads, connections and duration.
type wrkRunner struct {
	bin         string
	threads     int
	connections int
	duration    time.Duration
	warmup      time.Duration
	timeout     time.Duration
	dir         string
}

func findWrk(flagPath string) (string, error) {
	if flagPath != "" {
		return flagPath, nil
	}
	p, err := exec.LookPath("wrk")
	if err != nil {
		return "", errors.New("wrk is not installed: the load runs need it (Debian: apt-get install -y wrk)")
	}
	return p, nil
}

func (w *wrkRunner) args(script, url string, d time.Duration) []string {
	return []string{
		"-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.connections),
		"-d", wrkSeconds(d), "--timeout", wrkSeconds(w.timeout),
		"--latency", "-s", script, url,
	}
}

// CPUPerRequestUS is the server's CPU time per completed request, in microseconds: less
// sensitive than requests/s to other load on a shared machine.
func (r wrkResult) CPUPerRequestUS() float64 {
	if r.Requests == 0 {
		return 0
	}
	return r.ServerCPUSeconds / float64(r.Requests) * 1e6
}

// PreemptionsPerRequest is how often the server was preempted per completed request.
func (r wrkResult) PreemptionsPerRequest() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.ServerPreemptions) / float64(r.Requests)
}

// run warms up (output discarded), then measures, noting the server's (pid's) CPU time over
// the measured run, and storePID's (redis-server's) when it is not 0. name names the script file.
func (w *wrkRunner) run(ctx context.Context, name, url, body string, headers map[string]string, pid, storePID int) (wrkResult, error) {
	script := filepath.Join(w.dir, name+".lua")
	if err := os.WriteFile(script, []byte(wrkScript(body, headers)), 0o644); err != nil {
		return wrkResult{}, err
	}
	if w.warmup > 0 {
		if out, err := exec.CommandContext(ctx, w.bin, w.args(script, url, w.warmup)...).CombinedOutput(); err != nil {
			return wrkResult{}, fmt.Errorf("wrk warm-up: %v\n%s", err, out)
		}
	}
	cpu0, cerr0 := cpuSeconds(pid)
	pre0, perr0 := preemptions(pid)
	st0, serr0 := storeCPU(storePID)
	out, err := exec.CommandContext(ctx, w.bin, w.args(script, url, w.duration)...).CombinedOutput()
	cpu1, cerr1 := cpuSeconds(pid)
	pre1, perr1 := preemptions(pid)
	st1, serr1 := storeCPU(storePID)
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	r, err := parseWrk(string(out))
	if cerr0 == nil && cerr1 == nil {
		r.ServerCPUSeconds = cpu1 - cpu0
	}
	if perr0 == nil && perr1 == nil {
		r.ServerPreemptions = pre1 - pre0
	}
	if serr0 == nil && serr1 == nil {
		r.StoreCPUSeconds = st1 - st0
	}
	return r, err
}

// storeCPU is cpuSeconds for a store process, and nothing for none (pid 0).
func storeCPU(pid int) (float64, error) {
	if pid == 0 {
		return 0, nil
	}
	return cpuSeconds(pid)
}

// wrkSeconds renders a duration in wrk's units: whole seconds (it takes no "ms"), at least 1.
func wrkSeconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10) + "s"
}
