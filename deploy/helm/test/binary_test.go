package helmtest

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// everyFlag sets every key of config the schema allows to a valid value, so the test below
// proves each renders as a flag the binary has and accepts.
const everyFlag = `config:
  logLevel: debug
  logFormat: text
  logMaxSizeMb: 10
  logMaxBackups: 2
  accessLog: sample
  accessLogSample: 10
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
  maxFixtureFileBytes: 1048576
  scopeTtl: 5m
  maxRegexProgram: 2000
  regexBudget: 1048576
  corsOrigins: http://localhost:3000,https://app.example.com
  allowedHosts: mockgateway,mockgateway.default.svc
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
	bin := buildBinary(t)
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
		"seal key":   "replicaCount: 2\nsealKey: {secretName: mg-seal-key}",
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
				// Without sealKey each replica seals with its own random key: the item one
				// sealed is refused by the other (what the seal key case below cures).
				if status, body := sendBackReasoning(t, pod, other); status != http.StatusBadRequest || !strings.Contains(body, "invalid_encrypted_content") {
					t.Errorf("a reasoning item sent back to another replica without a shared key: %d %s", status, body)
				}
				other.stop(t, *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
			case "seal key":
				// Both replicas read the key from the one Secret: the item one sealed is
				// verified by the other.
				other := startPod(t, bin, r, d)
				if status, body := sendBackReasoning(t, pod, other); status != http.StatusOK {
					t.Errorf("a reasoning item sent back to another replica with the shared key: %d %s", status, body)
				}
				other.stop(t, *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
			}
			pod.stop(t, *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
		})
	}
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

// sendBackReasoning asks one replica a reasoning model's turn with its encrypted content, then
// sends the reasoning item back to the other, as a stateless Responses client (Codex) does on
// its next turn, and returns the other's answer.
func sendBackReasoning(t *testing.T, sealer, verifier *pod) (int, string) {
	t.Helper()
	status, body := sealer.do(t, http.MethodPost, "/v1/responses", `{"model":"mock-reasoning","input":"Plan a trip","reasoning":{"effort":"low"},"include":["reasoning.encrypted_content"],"store":false}`)
	if status != http.StatusOK {
		t.Fatalf("reasoning turn: %d %s", status, body)
	}
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Output) == 0 || !strings.Contains(string(resp.Output[0]), `"encrypted_content":"`) {
		t.Fatalf("no sealed reasoning item first in %s (%v)", body, err)
	}
	return verifier.do(t, http.MethodPost, "/v1/responses", `{"model":"mock-reasoning","include":["reasoning.encrypted_content"],"store":false,"input":[{"role":"user","content":"Plan a trip"},`+
		string(resp.Output[0])+`,{"role":"assistant","content":"Done."},{"role":"user","content":"And then?"}]}`)
}

// buildBinary builds the service's binary from the repository.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mockgateway")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mockgateway")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
