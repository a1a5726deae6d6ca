package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// benchLine is one result line of `go test -bench`.
type benchLine struct {
	Name     string // without the -GOMAXPROCS suffix
	N        int64
	NsOp     float64
	BOp      float64
	AllocsOp float64
}

// goBench is the median of every run of one benchmark.
type goBench struct {
	Name     string  `json:"name"`
	Runs     int     `json:"runs"`
	NsOp     float64 `json:"ns_op"`
	BOp      float64 `json:"b_op"`
	AllocsOp float64 `json:"allocs_op"`
}

// parseBenchOutput reads `go test -bench -benchmem` output: every "Benchmark…" result line, and
// the "cpu:" header if present.
func parseBenchOutput(r io.Reader) (lines []benchLine, cpu string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if c, ok := strings.CutPrefix(text, "cpu: "); ok {
			cpu = strings.TrimSpace(c)
			continue
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's name printed alone (verbose), or a log line
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		l := benchLine{Name: trimProcs(f[0]), N: n}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, cpu, fmt.Errorf("benchmark line %q: %v", text, err)
			}
			switch f[i+1] {
			case "ns/op":
				l.NsOp = v
			case "B/op":
				l.BOp = v
			case "allocs/op":
				l.AllocsOp = v
			}
		}
		lines = append(lines, l)
	}
	return lines, cpu, sc.Err()
}

// trimProcs drops the "-N" GOMAXPROCS suffix go test appends to a benchmark's name.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// summarize takes the median of each benchmark's runs, in first-seen order.
func summarize(lines []benchLine) []goBench {
	var order []string
	by := map[string][]benchLine{}
	for _, l := range lines {
		if _, ok := by[l.Name]; !ok {
			order = append(order, l.Name)
		}
		by[l.Name] = append(by[l.Name], l)
	}
	out := make([]goBench, 0, len(order))
	for _, name := range order {
		ls := by[name]
		pick := func(f func(benchLine) float64) float64 {
			v := make([]float64, len(ls))
			for i, l := range ls {
				v[i] = f(l)
			}
			return median(v)
		}
		out = append(out, goBench{
			Name: name, Runs: len(ls),
			NsOp:     pick(func(l benchLine) float64 { return l.NsOp }),
			BOp:      pick(func(l benchLine) float64 { return l.BOp }),
			AllocsOp: pick(func(l benchLine) float64 { return l.AllocsOp }),
		})
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runGoBench runs the service's Go benchmarks in the module root and returns their medians.
func runGoBench(ctx context.Context, ws *workspace, pattern string, count int, benchtime string) ([]goBench, []string, error) {
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-count", strconv.Itoa(count)}
	if benchtime != "" {
		args = append(args, "-benchtime", benchtime)
	}
	// The service's request path with telemetry on and off, fixture matching and the journal.
	args = append(args, "./internal/server/", "./internal/fixtures/", "./internal/journal/")
	ws.logf("go %s", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = ws.src
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, args, fmt.Errorf("go test -bench: %v\n%s", err, out)
	}
	lines, _, perr := parseBenchOutput(strings.NewReader(string(out)))
	if perr != nil {
		return nil, args, perr
	}
	if len(lines) == 0 {
		return nil, args, fmt.Errorf("go test -bench printed no benchmark results:\n%s", out)
	}
	return summarize(lines), args, nil
}
