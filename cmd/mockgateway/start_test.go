package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// logSink collects run's stderr (the JSON log), line by line.
type logSink struct {
	mu    sync.Mutex
	lines []string
	pw    *io.PipeWriter
}

func newLogSink() *logSink {
	pr, pw := io.Pipe()
	s := &logSink{pw: pw}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *logSink) Write(p []byte) (int, error) { return s.pw.Write(p) }

// Lines returns the log lines so far.
func (s *logSink) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// Records returns the log lines decoded.
func (s *logSink) Records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range s.Lines() {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// instance is one run of the real service on port 0.
type instance struct {
	URL    string // http://127.0.0.1:PORT
	Logs   *logSink
	Stdout *strings.Builder
	cancel context.CancelFunc
	done   chan error

	stopOnce sync.Once
	stopErr  error
}

// Stop ends the service as SIGTERM would and returns run's error.
func (in *instance) Stop() error {
	in.stopOnce.Do(func() {
		in.cancel()
		select {
		case in.stopErr = <-in.done:
			in.Logs.pw.Close() // run has returned: nothing writes the log any more
		case <-time.After(30 * time.Second):
			in.stopErr = context.DeadlineExceeded
		}
	})
	return in.stopErr
}

// startService serves as run does for the default command, on 127.0.0.1:0, with env as the
// whole environment, and learns the address from the service; it stops the service when the
// test ends.
func startService(t testing.TB, env map[string]string, args ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	getenv := func(k string) string { return env[k] }
	in := &instance{Logs: newLogSink(), Stdout: &strings.Builder{}, cancel: cancel, done: make(chan error, 1)}
	args = append([]string{"--addr", "127.0.0.1:0"}, args...)
	addr := make(chan net.Addr, 1)
	go func() { in.done <- serve(ctx, args, getenv, io.Discard, in.Logs, func(a net.Addr) { addr <- a }) }()
	select {
	case a := <-addr:
		in.URL = "http://" + a.String()
	case err := <-in.done:
		cancel()
		t.Fatalf("run returned before listening: %v\n%s", err, strings.Join(in.Logs.Lines(), "\n"))
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("not listening within 10s:\n%s", strings.Join(in.Logs.Lines(), "\n"))
	}
	t.Cleanup(func() {
		if err := in.Stop(); err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return in
}
