package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository root (this module lives in deploy/test).
var repoRoot string

// workDir holds what the tests build once (the service binary); removed after the run.
var workDir string

func TestMain(m *testing.M) {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	workDir, err = os.MkdirTemp("", "mockgateway-deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(workDir)
	os.Exit(code)
}

// repoPath is a path inside the repository.
func repoPath(parts ...string) string {
	return filepath.Join(append([]string{repoRoot}, parts...)...)
}

// endToEnd marks a test that needs docker-compose or the Prometheus release deps.sh builds: the
// service module's testutil.EndToEnd for this module, which cannot import the service's internal
// packages. The same switch: without MOCKGATEWAY_E2E=1 it skips, saying how to run it; make test
// sets it after deps.sh, and from then on a missing tool fails the test (requireTool,
// prometheusTool).
func endToEnd(t *testing.T) {
	t.Helper()
	if os.Getenv("MOCKGATEWAY_E2E") != "1" {
		t.Skip("end-to-end test: set MOCKGATEWAY_E2E=1 to run it (make test does, after deploy/test/deps.sh)")
	}
}

// requireTool fails (not skips) when a tool is missing: deps.sh installs them all, and a suite
// that quietly skipped its real checks would pass for the wrong reason.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: run `bash deploy/test/deps.sh` first (it installs docker-compose and builds Prometheus)", name)
	}
	return p
}

// testVersion is what the test build stamps into main.version, so the tests can see that the
// Dockerfile's -X flag still reaches the binary (and, through build_info, Prometheus).
const testVersion = "0.0.0-deploytest"

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// serviceBinary builds cmd/mockgateway once per run, with the root module and the very flags
// of deploy/Dockerfile's go build line (read from the Dockerfile, ${VERSION} replaced).
func serviceBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		ldflags, err := dockerfileLDFlags()
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(workDir, "mockgateway")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", strings.ReplaceAll(ldflags, "${VERSION}", testVersion), "-o", binary, "./cmd/mockgateway")
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/mockgateway: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// dockerfileLDFlags returns the -ldflags value of the Dockerfile's go build line.
func dockerfileLDFlags() (string, error) {
	b, err := os.ReadFile(repoPath("deploy", "Dockerfile"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`go build [^\n]*-ldflags "([^"]+)"`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("deploy/Dockerfile: no go build line with -ldflags \"…\"")
	}
	return string(m[1]), nil
}

// lockedBuffer collects a child process's output for the test and for failure reports.
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

// process is a child process the test started; cleanup stops it.
type process struct {
	cmd    *exec.Cmd
	output *lockedBuffer
	exited chan struct{}
}

// startProcess starts cmd with its output captured, and registers a cleanup that stops it:
// SIGTERM, then SIGKILL after grace. Children never outlive the test.
func startProcess(t *testing.T, cmd *exec.Cmd, grace time.Duration) *process {
	t.Helper()
	p := &process{cmd: cmd, output: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout = p.output
	cmd.Stderr = p.output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(grace)
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(cmd.Path), tail(p.output.String(), 3000))
		}
	})
	return p
}

func (p *process) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// service is a running mockgateway.
type service struct {
	*process
	addr    string // host:port it listens on (loopback)
	url     string
	logFile string
}

// startService runs the service on 127.0.0.1:0 with only the given environment (nothing from
// the developer's, so a stray OTEL_* cannot change the test), and waits for its listening line.
func startService(t *testing.T, env []string, args ...string) *service {
	t.Helper()
	dir := t.TempDir()
	logFile := filepath.Join(dir, "mockgateway.log")
	cmd := exec.Command(serviceBinary(t), append([]string{"--addr", "127.0.0.1:0", "--log-file", logFile, "--drain-timeout", "1s"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	p := startProcess(t, cmd, 10*time.Second)

	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if addr := listeningAddr(p.output.String()); addr != "" {
			return &service{process: p, addr: addr, url: "http://" + addr, logFile: logFile}
		}
		if !p.running() {
			t.Fatalf("mockgateway exited before listening:\n%s", tail(p.output.String(), 4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("mockgateway did not log its listening address:\n%s", tail(p.output.String(), 4000))
	return nil
}

// listeningAddr finds the address in the service's JSON "listening" log line.
func listeningAddr(stderr string) string {
	sc := bufio.NewScanner(strings.NewReader(stderr))
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

// freeLoopbackPort returns a port that was free on 127.0.0.1 a moment ago, for programs (like
// Prometheus) that cannot report the port they chose.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// httpClient bounds every request the tests make.
var httpClient = &http.Client{Timeout: 30 * time.Second}

// newChatRequest is a POST /v1/chat/completions with a JSON body.
func newChatRequest(ctx context.Context, baseURL, body string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// httpGet fetches url and returns the status and body.
func httpGet(ctx context.Context, url string, header map[string]string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}

// waitFor polls cond until it is true or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// run runs a tool to completion and returns its combined output.
func run(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
