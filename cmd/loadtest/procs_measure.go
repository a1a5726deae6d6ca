package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"mockgateway/internal/promtext"
)

// --- /proc and /metrics ---

// parseProcStatus returns the value in bytes of a "Key:   N kB" line of /proc/PID/status.
func parseProcStatus(status, key string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not a number", key, f[0])
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			n *= 1024
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s not found", key)
}

// rss is the resident set size of pid in bytes.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStatus(string(b), "VmRSS")
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every Linux ABI.
const clockTicks = 100

// parseProcStat returns utime+stime of a /proc/PID/stat line in seconds. The command name in
// parentheses may contain spaces, so fields are counted after its closing parenthesis.
func parseProcStat(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no command field")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, errors.New("stat: too few fields")
	}
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("stat: utime/stime are not numbers")
	}
	return float64(ut+st) / clockTicks, nil
}

// cpuSeconds is the CPU time pid has used so far (user + system).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(b))
}

// preemptions is how often pid's threads have been switched out while they could still run
// (nonvoluntary_ctxt_switches, summed over /proc/PID/task/*/status): a server whose threads
// stay busy is preempted by each client thread its writes wake, and pays a task switch for it.
func preemptions(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no tasks of pid %d", pid)
	}
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that exited meanwhile
		}
		v, err := parseProcStatus(string(b), "nonvoluntary_ctxt_switches")
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, nil
}

// scrape fetches /metrics and returns the named metrics, each summed over its series
// (missing ones are absent).
func scrape(ctx context.Context, client *http.Client, url string, names ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	f, err := promtext.Fetch(ctx, client, url, 64<<20)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, n := range names {
		if v, ok := f.Sum(n); ok {
			out[n] = v
		}
	}
	return out, nil
}

// machine describes where the run happened.
type machine struct {
	NProc     int    `json:"nproc"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	Kernel    string `json:"kernel,omitempty"`
	NoFile    uint64 `json:"rlimit_nofile"`
}

func describeMachine(nofile uint64) machine {
	m := machine{NProc: runtime.NumCPU(), GoVersion: runtime.Version(), NoFile: nofile}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(string(b))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
