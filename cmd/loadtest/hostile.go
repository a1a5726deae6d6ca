package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// limits are a case's resource targets; a zero field is not judged (the case has targets of its
// own instead).
type limits struct{ cpu, rssMiB, wall float64 }

// issueLimits are the issue's targets for one hostile request: ≤ 0.5 s of server CPU, ≤ 200 MiB
// peak RSS, answered within 5 s.
var issueLimits = limits{cpu: 0.5, rssMiB: 200, wall: 5}

// check is one case-specific target and whether this run met it.
type check struct {
	want string
	ok   bool
}

// hostileCase is one request, or crowd of clients, that a careless or hostile client sends.
type hostileCase struct {
	name   string
	flags  []string // server flags beyond the defaults
	body   string   // the request of a one-body case; the tests check it fits the body limit
	drive  func(ctx context.Context, s *server, body string) (answer string, checks []check, err error)
	limits limits
}

// bigBodies raises --max-body-bytes for the two schemas that cannot be written under 1 MiB;
// at the default they would only measure the 413.
var bigBodies = []string{"--max-body-bytes", "16777216"}

// runHostile is `loadtest hostile`. Each case runs against a fresh server, so VmHWM is the
// case's own peak. It reports figures and never fails on them: it fails only when the server
// dies or a request gets no HTTP answer at all.
func runHostile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := fs.String("run", "", "run only the cases whose name matches this regular expression (numbered as in the full run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("hostile takes no arguments besides -run (got %v)", fs.Args())
	}
	only, err := regexp.Compile(*run)
	if err != nil {
		return fmt.Errorf("hostile -run: %v", err)
	}
	ws, err := newWorkspace(ctx, "", false, stderr)
	if err != nil {
		return err
	}
	defer ws.close()
	m := describeMachine(ws.nofile)
	fmt.Fprintf(stdout, "\n## mockgateway hostile requests\n\n- Server: %s\n- Machine: %d cores (%s), %s\n",
		serverVersion(ctx, ws), m.NProc, m.CPUModel, m.GoVersion)
	fmt.Fprintf(stdout, "- Each case on a fresh server, default flags unless named; CPU is the server's utime+stime over the case, peak RSS its VmHWM\n\n")
	fmt.Fprintln(stdout, "| # | case | answer | server CPU s | peak RSS MiB | wall s | target | meets |")
	fmt.Fprintln(stdout, "|---|---|---|---:|---:|---:|---|---|")
	var problems []string
	for i, c := range hostileCases() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !only.MatchString(c.name) {
			continue
		}
		row, err := measureCase(ctx, ws, i+1, c)
		fmt.Fprintln(stdout, row)
		if err != nil {
			problems = append(problems, fmt.Sprintf("case %d (%s): %v", i+1, c.name, err))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// serverVersion is the binary's own --version line and the commit of the tree it was built
// from (GOFLAGS may hold -buildvcs=false, so the binary may not know it).
func serverVersion(ctx context.Context, ws *workspace) string {
	out, _ := exec.CommandContext(ctx, ws.mockgw, "--version").Output()
	cmd := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty")
	cmd.Dir = ws.src
	if rev, err := cmd.Output(); err == nil {
		out = append(append(out[:len(bytes.TrimSpace(out))], ", built from git "...), bytes.TrimSpace(rev)...)
	}
	return string(bytes.TrimSpace(out))
}

// measureCase runs one case on a server of its own and returns its table row. The error is a
// crash or a request left without an HTTP answer.
func measureCase(ctx context.Context, ws *workspace, n int, c hostileCase) (string, error) {
	s, err := ws.startMockgateway(ctx, fmt.Sprintf("hostile-%d", n), c.flags...)
	if err != nil {
		return fmt.Sprintf("| %d | %s | server did not start | | | | | **no** |", n, c.name), err
	}
	defer s.stop()
	cpu0, _ := cpuSeconds(s.pid())
	start := time.Now()
	answer, checks, err := c.drive(ctx, s, c.body)
	wall := time.Since(start).Seconds()
	cpu1, _ := cpuSeconds(s.pid())
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid()))
	hwm, _ := parseProcStatus(string(status), "VmHWM")
	select {
	case <-s.exited:
		err = errors.Join(err, fmt.Errorf("the server exited: %v", <-s.done))
	default:
	}
	if err != nil {
		answer = "**no answer**: " + err.Error()
	}
	cpu, mib := cpu1-cpu0, float64(hwm)/(1<<20)
	l := c.limits
	if l.cpu > 0 {
		checks = append(checks, check{fmt.Sprintf("CPU ≤ %.1f s", l.cpu), cpu <= l.cpu})
	}
	if l.rssMiB > 0 {
		checks = append(checks, check{fmt.Sprintf("peak RSS ≤ %.0f MiB", l.rssMiB), mib <= l.rssMiB})
	}
	if l.wall > 0 {
		checks = append(checks, check{fmt.Sprintf("answered ≤ %.0f s", l.wall), wall <= l.wall})
	}
	var wants, missed []string
	for _, ch := range checks {
		wants = append(wants, ch.want)
		if !ch.ok {
			missed = append(missed, ch.want)
		}
	}
	meets := "yes"
	if len(missed) > 0 || err != nil {
		meets = "**no**: " + strings.Join(missed, ", ")
	}
	name := c.name
	if c.body != "" {
		name += fmt.Sprintf(" (%s B body)", num(float64(len(c.body))))
	}
	if len(c.flags) > 0 {
		name += " `" + strings.Join(c.flags, " ") + "`"
	}
	return fmt.Sprintf("| %d | %s | %s | %.2f | %.0f | %.2f | %s | %s |",
		n, name, answer, cpu, mib, wall, strings.Join(wants, ", "), meets), err
}
