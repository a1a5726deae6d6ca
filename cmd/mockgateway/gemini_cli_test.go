package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// googleCompat is where the Gemini clients are installed (package.json and its lock file pin
// them; make deps runs npm ci there).
const googleCompat = "../../internal/clientcompat/google"

// geminiSettings is the settings file of Gemini CLI's temporary home: the API key's auth (no
// login), and read_file the only built-in tool it offers — so no request offers another, and a
// fixture that called one would be fixture_mismatch.
const geminiSettings = `{"security":{"auth":{"selectedType":"gemini-api-key"}},"tools":{"core":["read_file"]}}`

// geminiCLI runs Gemini CLI headless (gemini -p) in dir against the service at base and returns
// what it printed; a failure of the CLI fails the test.
func geminiCLI(t *testing.T, base, dir string, args ...string) string {
	t.Helper()
	out, err := geminiCLIWith(t, base, dir, nil, args...)
	if err != nil {
		t.Fatalf("gemini %v: %v\n%s", args, err, out)
	}
	return out
}

// geminiCLIWith runs Gemini CLI headless in dir against the service at base, with a HOME of its
// own (the settings above and nothing else: no extensions, no MCP servers, no session), a
// TMPDIR of its own (where it writes an error's report) and nothing of this machine's
// environment but PATH, env added. It returns what it printed and how
// it exited, for a test that expects it to fail.
func geminiCLIWith(t *testing.T, base, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(googleCompat, "node_modules", ".bin", "gemini"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Gemini CLI is not installed in %s: run 'make deps' (make test does): %v", googleCompat, err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + t.TempDir(),
		"GOOGLE_GEMINI_BASE_URL=" + base,
		"GEMINI_API_KEY=dummy",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"NO_COLOR=1",
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGeminiCLI runs Gemini CLI 0.61.0 headless against the real service, every turn scripted by
// strict file fixtures (a request no fixture scripts is 400 no_fixture_match, which fails Gemini
// CLI): (a) a plain answer from mock-chat, to which Gemini CLI offers its tools all the same;
// (b) a tool loop — Gemini CLI is told to read a file the test made, calls read_file, and sends
// the file's content back, which the second fixture requires before it answers; (c) the same
// loop on mock-reasoning, its thought signature sent back and checked. The fixtures'
// conditions (model, last_user, tools, tool_result, turn) read Gemini's contents as they read
// any dialect's messages.
//
// Gemini CLI must never run anything the test did not script: tools.core offers read_file alone,
// headless it runs no tool that asks for confirmation, and its home and working directory are
// the test's own.
func TestGeminiCLI(t *testing.T) {
	testutil.EndToEnd(t)
	work, fixtures := writeAgentLoop(t, "read_file", true)
	in := startService(t, nil, "--fixtures", fixtures)

	t.Run("plain answer", func(t *testing.T) {
		out := geminiCLI(t, in.URL, work, "-p", "Say hello", "-m", "mock-chat")
		if !strings.Contains(out, "Hello from the mock.") {
			t.Fatalf("Gemini CLI printed:\n%s", out)
		}
	})
	t.Run("tool loop", func(t *testing.T) {
		out := geminiCLI(t, in.URL, work, "-p", "What is the secret word in notes.txt?", "-m", "mock-tools")
		if !strings.Contains(out, "The secret word is PAPAYA.") {
			t.Fatalf("Gemini CLI printed:\n%s", out)
		}
	})
	// (c) The loop on mock-reasoning, which thinks by default: its thought part first, and the
	// call's thoughtSignature, which Gemini CLI sends back with the call and the mock checks.
	t.Run("thinking tool loop", func(t *testing.T) {
		out := geminiCLI(t, in.URL, work, "-p", "What is the secret word in notes.txt?", "-m", "mock-reasoning")
		if !strings.Contains(out, "The secret word is PAPAYA.") {
			t.Fatalf("Gemini CLI printed:\n%s", out)
		}
	})

	// The journal: every Gemini call answered by its fixture, in order, streamed, and nothing else
	// asked; mock-reasoning's calls thought.
	var journal struct {
		Data []struct {
			Route, Fixture  string
			Status          int
			Stream          bool
			ReasoningTokens int `json:"reasoning_tokens"`
		}
	}
	resp, err := http.Get(in.URL + "/_mock/journal?limit=100")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&journal); err != nil {
		t.Fatal(err)
	}
	var calls []string
	for i := len(journal.Data) - 1; i >= 0; i-- { // newest first
		e := journal.Data[i]
		if e.Route != "/v1beta/models/{model}:streamGenerateContent" || e.Status != http.StatusOK || !e.Stream {
			t.Errorf("a call to %s answered %d (stream %v)", e.Route, e.Status, e.Stream)
		}
		calls = append(calls, e.Fixture)
		if thinks := strings.HasPrefix(e.Fixture, "think-"); thinks != (e.ReasoningTokens > 0) {
			t.Errorf("%s: %d thinking tokens", e.Fixture, e.ReasoningTokens)
		}
	}
	if strings.Join(calls, ",") != "hello,read-notes,answer-after-read,think-read-notes,think-answer-after-read" {
		t.Fatalf("Gemini calls answered by %v", calls)
	}
}

// TestGoogleNodeClients runs the Node clients of internal/clientcompat/google, unmodified, against
// the real service's Gemini dialect: every *.test.mjs there — Google's Gen AI SDK for JavaScript
// (@google/genai) on its defaults. A missing Node or missing packages fail it.
func TestGoogleNodeClients(t *testing.T) {
	testutil.EndToEnd(t)
	dir, err := filepath.Abs(googleCompat)
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the Gemini client tests need Node 20+ (make deps installs the packages)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@google", "genai")); err != nil {
		t.Fatalf("@google/genai is not installed in %s: run 'make deps' (make test does)", dir)
	}
	suites, err := filepath.Glob(filepath.Join(dir, "*.test.mjs"))
	if err != nil || len(suites) == 0 {
		t.Fatalf("the Node suites are missing from %s: %v %v", dir, suites, err)
	}
	for i := range suites {
		suites[i] = filepath.Base(suites[i])
	}
	in := startService(t, nil)
	keyed := startService(t, nil, "--api-key", "node-local-key") // key.test.mjs
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, suites...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MOCKGATEWAY_URL="+in.URL, "MOCKGATEWAY_KEYED_URL="+keyed.URL, "MOCKGATEWAY_KEY=node-local-key", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Gemini Node clients failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
