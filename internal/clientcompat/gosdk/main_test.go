// Package gosdk runs two widely used third-party Go clients, unmodified, against the real
// mockgateway binary in their own documented patterns: github.com/sashabaranov/go-openai and
// github.com/tmc/langchaingo (llms/openai). It is a module of its own, so that their
// dependencies stay out of the service's go.mod.
//
// TestMain builds ./cmd/mockgateway from the repository root, starts it on 127.0.0.1:0 with the
// built-in catalog, waits for /health, runs the tests, and stops it with SIGTERM. With
// MOCKGATEWAY_BASE_URL set (a running service's /v1 URL) it uses that service instead. A missing
// tool or a service that does not come up fails the run; nothing skips.
package gosdk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serviceURL is the service's /v1 URL, set by TestMain.
var serviceURL string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if u := os.Getenv("MOCKGATEWAY_BASE_URL"); u != "" {
		if !strings.HasSuffix(u, "/v1") {
			fmt.Fprintf(os.Stderr, "MOCKGATEWAY_BASE_URL must be the service's /v1 URL, e.g. http://127.0.0.1:8080/v1 (got %q)\n", u)
			return 1
		}
		serviceURL = u
		return m.Run()
	}
	svc, err := startService()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosdk:", err)
		return 1
	}
	serviceURL = svc.url + "/v1"
	code := m.Run()
	if err := svc.stop(15 * time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "gosdk: %v\nservice output:\n%s\n", err, tail(svc.output.String(), 4000))
		code = 1
	} else if code != 0 {
		fmt.Fprintf(os.Stderr, "service output:\n%s\n", tail(svc.output.String(), 4000))
	}
	os.RemoveAll(svc.dir)
	return code
}

// service is the mockgateway binary this run built and started.
type service struct {
	cmd    *exec.Cmd
	dir    string // temporary: the binary and the service's HOME
	url    string // http://host:port
	output *lockedBuffer
	exited chan struct{}
	err    error // cmd.Wait's result, once exited is closed
}

// startService builds cmd/mockgateway from the repository root into a temporary directory,
// starts it on a free loopback port with the built-in catalog, args after its own and only PATH
// and HOME in its environment (so no stray MOCKGATEWAY_* or OTEL_* changes it), and waits until
// /health is 200.
func startService(args ...string) (*service, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("the go command is not on PATH; it is needed to build cmd/mockgateway")
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root := filepath.Clean(filepath.Join(wd, "..", "..", ".."))
	dir, err := os.MkdirTemp("", "mockgateway-gosdk-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*service, error) {
		os.RemoveAll(dir)
		return nil, err
	}

	binary := filepath.Join(dir, "mockgateway")
	build := exec.Command(goTool, "build", "-o", binary, "./cmd/mockgateway")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("go build ./cmd/mockgateway in %s: %v\n%s", root, err, out))
	}

	s := &service{dir: dir, output: &lockedBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"--addr", "127.0.0.1:0", "--drain-timeout", "1s"}, args...)...)
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	s.cmd.Stdout = s.output
	s.cmd.Stderr = s.output
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("start %s: %v", binary, err))
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()

	deadline := time.Now().Add(20 * time.Second)
	for s.url == "" {
		if addr := listeningAddr(s.output.String()); addr != "" {
			s.url = "http://" + addr
			break
		}
		if err := s.checkUp(deadline, "log its listening address"); err != nil {
			return fail(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if err := s.checkUp(deadline, "answer 200 on /health"); err != nil {
			return fail(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkUp fails when the service has exited, or when the deadline for what it should have done
// by now has passed (the service is then killed).
func (s *service) checkUp(deadline time.Time, what string) error {
	select {
	case <-s.exited:
		return fmt.Errorf("mockgateway exited (%v) before it would %s:\n%s", s.err, what, tail(s.output.String(), 4000))
	default:
	}
	if time.Now().After(deadline) {
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("mockgateway did not %s within 20s:\n%s", what, tail(s.output.String(), 4000))
	}
	return nil
}

// stop sends SIGTERM and waits for the service to exit; it must exit cleanly within grace (it
// is killed otherwise). An exit before stop is an error too: the service died during the tests.
func (s *service) stop(grace time.Duration) error {
	select {
	case <-s.exited:
		return fmt.Errorf("mockgateway exited during the tests: %v", s.err)
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
		if s.err != nil {
			return fmt.Errorf("mockgateway did not exit cleanly on SIGTERM: %v", s.err)
		}
		return nil
	case <-time.After(grace):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("mockgateway did not exit within %v of SIGTERM; killed", grace)
	}
}

// listeningAddr finds the address in the service's JSON "listening" log line.
func listeningAddr(out string) string {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" && line.Addr != "" {
			return line.Addr
		}
	}
	return ""
}

// lockedBuffer collects the service's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tail is the end of s, for failure messages.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// testContext bounds one test's requests.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
