package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// workspace is one run's temporary directory with the two binaries built into it.
type workspace struct {
	dir        string // temp dir: binaries, Lua scripts, access logs
	src        string // the module root the binaries and benchmarks come from
	mockgw     string
	baseline   string
	logf       func(format string, a ...any)
	keep       bool
	nofile     uint64 // RLIMIT_NOFILE after raising it
	nofileNote string
}

// moduleRoot finds the mockgateway module root from `go env GOMOD`.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the mockgateway module: run from the repository root")
	}
	return filepath.Dir(mod), nil
}

func newWorkspace(ctx context.Context, src string, keep bool, stderr io.Writer) (*workspace, error) {
	if src == "" {
		var err error
		if src, err = moduleRoot(ctx); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "mockgateway-loadtest-")
	if err != nil {
		return nil, err
	}
	ws := &workspace{dir: dir, src: src, keep: keep, logf: func(format string, a ...any) {
		fmt.Fprintf(stderr, "loadtest: "+format+"\n", a...)
	}}
	ws.nofile, ws.nofileNote = raiseNofile()
	ws.mockgw = filepath.Join(dir, "mockgateway")
	ws.baseline = filepath.Join(dir, "baseline")
	for _, b := range []struct{ out, pkg string }{{ws.mockgw, "./cmd/mockgateway"}, {ws.baseline, "./cmd/baseline"}} {
		ws.logf("go build -o %s %s (in %s)", b.out, b.pkg, src)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.out, b.pkg)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			ws.close()
			return nil, fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return ws, nil
}

func (ws *workspace) close() {
	if ws.keep {
		ws.logf("kept %s", ws.dir)
		return
	}
	_ = os.RemoveAll(ws.dir)
}

// raiseNofile lifts this process's soft RLIMIT_NOFILE to the hard limit; the servers started
// from here inherit it.
func raiseNofile() (uint64, string) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, "getrlimit: " + err.Error()
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return lim.Cur, "setrlimit: " + err.Error()
		}
	}
	return lim.Cur, ""
}

// server is a started child process with the loopback address it listens on.
type server struct {
	name   string
	cmd    *exec.Cmd
	addr   string     // host:port
	log    string     // mockgateway: its --log-file
	done   chan error // receives the exit once; stop and the soak loop read exited instead
	once   sync.Once
	exited chan struct{}
}

func (s *server) url(path string) string { return "http://" + s.addr + path }
func (s *server) pid() int               { return s.cmd.Process.Pid }

// watch waits for the child in the background; exited closes when it has gone.
func (s *server) watch() {
	s.exited = make(chan struct{})
	s.done = make(chan error, 1)
	go func() {
		s.done <- s.cmd.Wait()
		close(s.exited)
	}()
}

// stop ends the child by its pid: SIGTERM, then SIGKILL if it has not exited in time. It may be
// called more than once.
func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// mockgatewayEnv is the inherited environment without any OTEL_* or MOCKGATEWAY_* setting (so a
// developer's exporter or config cannot change the measurement), plus the sampler at 100%:
// every span goes into the embedded buffer.
func mockgatewayEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "MOCKGATEWAY_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "OTEL_TRACES_SAMPLER=always_on")
}

// startMockgateway starts the built service with full telemetry: tracing sampled at 100% into
// the embedded buffer, metrics, the access log at info to a file (stderr to /dev/null). Its
// address is chosen here (freeAddr) and passed as --addr; the service is up when /health
// answers 200 there. A port taken by someone else between freeAddr and the child's listen
// makes the child exit at once, and the start is tried again on another port.
func (ws *workspace) startMockgateway(ctx context.Context, name string, extra ...string) (*server, error) {
	logFile := filepath.Join(ws.dir, name+"-access.log")
	var err error
	for range 3 {
		var s *server
		if s, err = ws.tryMockgateway(ctx, name, logFile, extra); err == nil {
			ws.logf("mockgateway %s (pid %d) listening on %s", name, s.pid(), s.addr)
			return s, nil
		}
		if ctx.Err() != nil || !errors.Is(err, errExitedAtStart) {
			break
		}
	}
	return nil, err
}

var errExitedAtStart = errors.New("exited at start-up")

func (ws *workspace) tryMockgateway(ctx context.Context, name, logFile string, extra []string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// One file however long the run (the rotation is a rename per size's worth of lines), so
	// that access_log_lines counts every line.
	args := append([]string{"--addr", addr, "--log-level", "info", "--log-file", logFile, "--log-max-size-mb", "1048576"}, extra...)
	cmd := exec.Command(ws.mockgw, args...)
	cmd.Env = mockgatewayEnv()
	cmd.Stdout, cmd.Stderr = nil, nil // /dev/null
	s := &server{name: "mockgateway", cmd: cmd, addr: addr, log: logFile}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.watch()
	if err := s.waitHealthy(ctx); err != nil {
		s.stop()
		return nil, fmt.Errorf("mockgateway %s: %w", name, err)
	}
	return s, nil
}

// freeAddr is a loopback address whose port nothing listens on at this moment: bound by the
// kernel's choice, then released for the child to take.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// startBaseline starts the bare server on port 0 and reads its address from its first line.
func (ws *workspace) startBaseline(ctx context.Context) (*server, error) {
	cmd := exec.Command(ws.baseline, "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{name: "baseline", cmd: cmd}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	br := bufio.NewReader(out)
	go func() {
		l, _ := br.ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		s.addr = strings.TrimSpace(strings.TrimPrefix(l, "baseline listening on "))
	case <-time.After(15 * time.Second):
		s.watch()
		s.stop()
		return nil, errors.New("baseline did not report its address within 15s")
	}
	// From here on nothing more is read: the baseline prints only that line, and Wait (in
	// watch) closes the pipe once it exits.
	s.watch()
	if s.addr == "" {
		s.stop()
		return nil, errors.New("baseline exited at start-up")
	}
	ws.logf("baseline (pid %d) listening on %s", s.pid(), s.addr)
	return s, nil
}

// waitHealthy polls /health until it answers 200, the child exits, or 15 s pass.
func (s *server) waitHealthy(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(15 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url("/health"), nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%w: %v", errExitedAtStart, <-s.done)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within 15s", s.url("/health"))
		}
	}
}
