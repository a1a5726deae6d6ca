package helmtest

import (
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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// everyFlag sets every key of config the schema allows to a valid value, so the test below
// proves each renders as a flag the binary has and accepts.
const everyFlag = `config:
  logLevel: debug
  logFormat: text
  allowSimulationHeaders: false
  attemptKeys: 500
  attemptTtl: 30s
  drainQuiet: 2s
  maxBodyBytes: 2097152
  maxTokens: 2048
  maxChoices: 8
  maxResponseBytes: 1048576
  maxConcurrent: 64
  readHeaderTimeout: 2s
  readTimeout: 10s
  writeTimeout: 10s
  idleTimeout: 60s
  streamTimeout: 2m
  fixturesStrict: false
  fixturesReload: 500ms
  maxScopes: 16
  maxScopeFixtures: 8
  maxFixtureBytes: 67108864
  journalScopes: 4
  journalEntries: 100
  traceProbes: true
  traceBuffer: 128
  gcFloorMb: 16
`

// fixturesValues is a catalog, a fixture whose reply names version, a key and OTLP settings.
func fixturesValues(version string) string {
	return `catalog: |
  models:
    - id: mock-echo
      kind: mock
      behavior: echo
      capabilities: {streaming: true, tools: false}
fixtures:
  hello.yaml: |
    fixtures:
      - name: greet
        match: {last_user: {contains: hello}}
        reply: {content: "hi from ` + version + `"}
config:
  fixturesReload: 200ms
apiKey: {value: test-key}
otel: {endpoint: "http://127.0.0.1:9", resourceAttributes: {deployment.environment: ci}}
`
}

// TestRenderedConfigStartsTheBinary builds the service and runs it the way the pod would: the
// rendered container's args and env (Secrets and the downward API resolved, ConfigMaps laid out
// as the kubelet does, with the ..data symlink), then asks /health, and stops it with SIGTERM
// within the grace period. An arg or env the binary does not know fails start-up.
func TestRenderedConfigStartsTheBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mockgateway")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockgateway")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z-]+)`).FindAllStringSubmatch(string(help), -1) {
		known[m[1]] = true
	}
	if !known["drain-timeout"] || !known["fixtures"] {
		t.Fatalf("--help lists no flags:\n%s", help)
	}

	cases := map[string]string{
		"defaults":   "",
		"every flag": everyFlag + "logFile: {enabled: true}",
		"fixtures":   fixturesValues("v1"),
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			r := mustInstall(t, renderOpts{values: values})
			d := deployment(t, r)
			c := d.Spec.Template.Spec.Containers[0]
			for _, a := range c.Args {
				flag, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !known[flag] {
					t.Errorf("arg %s: the binary has no --%s", a, flag)
				}
			}
			pod := startPod(t, bin, r, d)
			checkHelmTestHook(t, bin, r, pod)
			switch name {
			case "fixtures":
				checkFixturesPod(t, pod, r)
			case "defaults":
				// Replica-safe: a second replica of the same render answers the same request
				// with the same content, tool calls and usage.
				other := startPod(t, bin, r, d)
				if a, b := answer(t, pod), answer(t, other); a != b {
					t.Errorf("two replicas answered differently:\n%s\n%s", a, b)
				}
				other.stop(t, *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
			}
			pod.stop(t, *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
		})
	}
}

// pod is the binary running as the rendered container would.
type pod struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	root    string // where the pod's mounts are
	exited  chan error
	logs    *strings.Builder
	headers map[string]string
}

func startPod(t *testing.T, bin string, r *release, d *appsv1.Deployment) *pod {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	p := &pod{root: t.TempDir(), exited: make(chan error, 1), logs: &strings.Builder{}}
	port := freePort(t)
	p.base = "http://127.0.0.1:" + strconv.Itoa(port)

	// Mounts: each path of the container maps to a directory under root; ConfigMaps get
	// the kubelet's layout.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		dir := filepath.Join(p.root, m.Name)
		mounts[m.MountPath] = dir
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				writeConfigMap(t, dir, configMapData(t, r, v.ConfigMap.Name), "..v1")
			} else if v.Name == m.Name {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	remap := func(s string) string {
		for mp, dir := range mounts {
			if s == mp || strings.HasPrefix(s, mp+"/") {
				return dir + strings.TrimPrefix(s, mp)
			}
		}
		return s
	}
	var args []string
	for _, a := range c.Args {
		flag, val, _ := strings.Cut(a, "=")
		if flag == "--addr" {
			val = "127.0.0.1:" + strconv.Itoa(port)
		}
		args = append(args, flag+"="+remap(val))
	}
	env := resolveEnv(t, r, c)
	p.headers = map[string]string{}
	if k := env["MOCKGATEWAY_API_KEY"]; k != "" {
		p.headers["Authorization"] = "Bearer " + k
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + mounts["/tmp"]}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-p.exited:
			t.Fatalf("the binary exited at start-up (%v) with args %q:\n%s", err, args, p.logs)
		default:
		}
		if status, _ := p.get(t, "/health"); status == http.StatusOK {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health never answered 200:\n%s", p.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM, as the kubelet does after preStop, and wants exit 0 within the grace.
func (p *pod) stop(t *testing.T, graceSeconds int64) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.logs)
		}
	case <-time.After(time.Duration(graceSeconds) * time.Second):
		t.Errorf("still running %d s after SIGTERM: the kubelet would kill it", graceSeconds)
	}
}

func (p *pod) get(t *testing.T, path string) (int, string) {
	return p.do(t, http.MethodGet, path, "")
}

func (p *pod) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// checkFixturesPod: the key from the Secret is required, the catalog from its ConfigMap is the
// one served, and the fixture answers, then changes with a ConfigMap update (no restart).
func checkFixturesPod(t *testing.T, p *pod, r *release) {
	t.Helper()
	saved := p.headers
	p.headers = nil
	if status, _ := p.get(t, "/v1/models"); status != http.StatusUnauthorized {
		t.Errorf("/v1/models without the key: %d, want 401", status)
	}
	p.headers = saved
	if status, body := p.get(t, "/v1/models"); status != http.StatusOK || strings.Contains(body, "mock-chat") || !strings.Contains(body, "mock-echo") {
		t.Errorf("/v1/models with the key: %d %s; want only the catalog's mock-echo", status, body)
	}
	if got := chat(t, p); got != "hi from v1" {
		t.Fatalf("fixture reply %q, want %q", got, "hi from v1")
	}
	// The kubelet's update: a new timestamped directory, then an atomic swap of ..data.
	next := mustInstall(t, renderOpts{values: fixturesValues("v2")})
	writeConfigMap(t, filepath.Join(p.root, "fixtures"), configMapData(t, next, "mg-mockgateway-fixtures"), "..v2")
	deadline := time.Now().Add(10 * time.Second)
	for chat(t, p) != "hi from v2" {
		if time.Now().After(deadline) {
			t.Fatalf("the updated ConfigMap was not reloaded within 10 s:\n%s", p.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func chat(t *testing.T, p *pod) string {
	t.Helper()
	status, body := p.do(t, http.MethodPost, "/v1/chat/completions", `{"model":"mock-echo","messages":[{"role":"user","content":"hello"}]}`)
	if status != http.StatusOK {
		t.Fatalf("chat: %d %s", status, body)
	}
	var resp struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Choices) == 0 {
		t.Fatalf("chat answer %s: %v", body, err)
	}
	return resp.Choices[0].Message.Content
}

func configMapData(t *testing.T, r *release, name string) map[string]string {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == "ConfigMap" && o.name == name {
			var cm corev1.ConfigMap
			if err := decodeStrict(o.raw, &cm); err != nil {
				t.Fatal(err)
			}
			return cm.Data
		}
	}
	t.Fatalf("no ConfigMap %s rendered", name)
	return nil
}

// writeConfigMap lays data out as the kubelet does: dir/<version>/<file>, dir/..data -> <version>,
// dir/<file> -> ..data/<file>; a later call swaps ..data atomically to the new version.
func writeConfigMap(t *testing.T, dir string, data map[string]string, version string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, version), 0o755); err != nil {
		t.Fatal(err)
	}
	for file, content := range data {
		if err := os.WriteFile(filepath.Join(dir, version, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, file)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", file), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// resolveEnv does the kubelet's part: values, Secrets (rendered, or a stand-in for one the
// user manages), the downward API, and $(VAR) references to earlier variables.
func resolveEnv(t *testing.T, r *release, c corev1.Container) map[string]string {
	t.Helper()
	out := map[string]string{}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
			v = ref.ReplaceAllStringFunc(v, func(m string) string {
				if x, ok := out[m[2:len(m)-1]]; ok {
					return x
				}
				return m
			})
		case e.ValueFrom.SecretKeyRef != nil:
			v = secretValue(t, r, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
		case e.ValueFrom.FieldRef != nil:
			v = map[string]string{"metadata.name": "mg-mockgateway-0", "metadata.namespace": "llm", "spec.nodeName": "node-1"}[e.ValueFrom.FieldRef.FieldPath]
		case e.ValueFrom.ResourceFieldRef != nil:
			q := c.Resources.Limits[corev1.ResourceName(strings.TrimPrefix(e.ValueFrom.ResourceFieldRef.Resource, "limits."))]
			v = strconv.FormatInt(q.Value()/divisor(e.ValueFrom.ResourceFieldRef.Divisor), 10)
		default:
			t.Fatalf("env %s: a source this test does not resolve", e.Name)
		}
		out[e.Name] = v
	}
	return out
}

func divisor(q resource.Quantity) int64 {
	if q.IsZero() {
		return 1
	}
	return q.Value()
}

func secretValue(t *testing.T, r *release, name, key string) string {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == "Secret" && o.name == name {
			var s corev1.Secret
			if err := decodeStrict(o.raw, &s); err != nil {
				t.Fatal(err)
			}
			return string(s.Data[key])
		}
	}
	return "key-from-" + name // a Secret the user manages
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// parseSeconds reads a whole-second duration such as 5s.
func parseSeconds(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d%time.Second != 0 {
		return 0, fmt.Errorf("drain timeout %q is not whole seconds", s)
	}
	return int64(d / time.Second), nil
}

// checkHelmTestHook runs the helm test pod's command, its --addr pointed at the running binary
// instead of the Service: it must succeed.
func checkHelmTestHook(t *testing.T, bin string, r *release, p *pod) {
	t.Helper()
	var hook corev1.Pod
	if err := decodeStrict(r.only(t, "Pod").raw, &hook); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range hook.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--addr=") {
			a = "--addr=" + strings.TrimPrefix(p.base, "http://")
		}
		args = append(args, a)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{} // the image's MOCKGATEWAY_ADDR must not matter: the flag wins
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("helm test hook %q: %v\n%s", args, err, out)
	}
}

// answer is the deterministic part of a chat answer: choices and usage (not id or created).
func answer(t *testing.T, p *pod) string {
	t.Helper()
	status, body := p.do(t, http.MethodPost, "/v1/chat/completions", `{"model":"mock-chat","n":2,"messages":[{"role":"user","content":"replicas"}]}`)
	if status != http.StatusOK {
		t.Fatalf("chat: %d %s", status, body)
	}
	var resp struct {
		Choices json.RawMessage `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	return string(resp.Choices) + string(resp.Usage)
}
