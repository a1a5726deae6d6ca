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

// anthropicCompat is where the Anthropic clients are installed (package.json and its lock file
// pin them; make deps runs npm ci there).
const anthropicCompat = "../../internal/clientcompat/anthropic"

// claudeCode runs Claude Code headless (claude -p) in dir against the service at base, with a
// HOME of its own (no user settings, no session files, no login) and nothing of this machine's
// environment but PATH: the dummy key, the base URL, and the switches that keep it from calling
// anything but the mock. It returns what it printed.
func claudeCode(t *testing.T, base, dir string, args ...string) string {
	t.Helper()
	return claudeCodeWith(t, base, dir, nil, args...)
}

// claudeCodeWith is claudeCode with env added to its environment.
func claudeCodeWith(t *testing.T, base, dir string, env []string, args ...string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(anthropicCompat, "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Claude Code is not installed in %s: run 'make deps' (make test does): %v", anthropicCompat, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=dummy",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"NO_COLOR=1",
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestClaudeCode runs Claude Code 2.1.332 headless against the real service, every turn scripted
// by strict file fixtures (a request no fixture scripts is 400 no_fixture_match, which fails
// Claude Code): (a) a plain answer from mock-chat, to which Claude Code offers its tools all the
// same; (b) a tool loop — Claude Code is told to call Read on a file the test made, runs it, and
// sends the file's content back, which the second fixture requires before it answers; (c) the
// same loop on mock-reasoning, with Claude Code's thinking blocks passed back.
//
// Claude Code must never run anything the test did not script. --tools Read offers it Read
// alone, so no other tool is in any request (a fixture calling another is fixture_mismatch);
// --allowedTools Read lets Read run without a prompt; --permission-mode dontAsk denies anything
// not allowed rather than asking; --strict-mcp-config starts no MCP server; the HOME and the
// working directory are the test's own.
func TestClaudeCode(t *testing.T) {
	testutil.EndToEnd(t)
	work, fixtures := writeAgentLoop(t, "Read", true)
	in := startService(t, nil, "--fixtures", fixtures)
	headless := []string{"--tools", "Read", "--allowedTools", "Read", "--permission-mode", "dontAsk",
		"--strict-mcp-config", "--no-session-persistence"}

	t.Run("plain answer", func(t *testing.T) {
		out := claudeCode(t, in.URL, work, append([]string{"-p", "Say hello", "--model", "mock-chat"}, headless...)...)
		if !strings.Contains(out, "Hello from the mock.") {
			t.Fatalf("Claude Code printed:\n%s", out)
		}
	})
	t.Run("tool loop", func(t *testing.T) {
		out := claudeCode(t, in.URL, work, append([]string{"-p", "What is the secret word in notes.txt?", "--model", "mock-tools"}, headless...)...)
		if !strings.Contains(out, "The secret word is PAPAYA.") {
			t.Fatalf("Claude Code printed:\n%s", out)
		}
	})

	// (c) The tool loop on mock-reasoning: Claude Code sends adaptive thinking, gets a signed
	// thinking block before the tool_use, and must pass it back unchanged with the tool's result
	// — the mock refuses the second call otherwise (docs/protocol.md, Reasoning models).
	t.Run("thinking tool loop", func(t *testing.T) {
		out := claudeCode(t, in.URL, work, append([]string{"-p", "What is the secret word in notes.txt?", "--model", "mock-reasoning"}, headless...)...)
		if !strings.Contains(out, "The secret word is PAPAYA.") {
			t.Fatalf("Claude Code printed:\n%s", out)
		}
	})

	// The journal: every Messages call answered by its fixture, in order, and nothing else asked;
	// mock-reasoning's calls thought.
	var journal struct {
		Data []struct {
			Route, Fixture  string
			Status          int
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
		if e := journal.Data[i]; e.Route == "/v1/messages" {
			if e.Status != http.StatusOK {
				t.Errorf("a Messages call answered %d", e.Status)
			}
			calls = append(calls, e.Fixture)
			if thinks := strings.HasPrefix(e.Fixture, "think-"); thinks != (e.ReasoningTokens > 0) {
				t.Errorf("%s: %d thinking tokens", e.Fixture, e.ReasoningTokens)
			}
		}
	}
	if strings.Join(calls, ",") != "hello,read-notes,answer-after-read,think-read-notes,think-answer-after-read" {
		t.Fatalf("Messages calls answered by %v", calls)
	}
}

// TestAnthropicNodeClients runs the Node clients of internal/clientcompat/anthropic, unmodified,
// against the real service's Messages dialect: every *.test.mjs there — the official Anthropic
// SDK (@anthropic-ai/sdk), the AI SDK's Anthropic provider (@ai-sdk/anthropic) and LangChain's
// ChatAnthropic (@langchain/anthropic), and the SDK's extended thinking on mock-reasoning
// (thinking.test.mjs). A missing Node or missing packages fail it.
func TestAnthropicNodeClients(t *testing.T) {
	testutil.EndToEnd(t)
	dir, err := filepath.Abs(anthropicCompat)
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the Anthropic client tests need Node 20+ (make deps installs the packages)")
	}
	for _, pkg := range []string{"@anthropic-ai/sdk", "@ai-sdk/anthropic", "ai", "@langchain/anthropic", "@langchain/core"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
			t.Fatalf("%s is not installed in %s: run 'make deps' (make test does)", pkg, dir)
		}
	}
	suites, err := filepath.Glob(filepath.Join(dir, "*.test.mjs"))
	if err != nil || len(suites) < 3 {
		t.Fatalf("the Node suites are missing from %s: %v %v", dir, suites, err)
	}
	for i := range suites {
		suites[i] = filepath.Base(suites[i])
	}
	in := startService(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, suites...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MOCKGATEWAY_URL="+in.URL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Anthropic Node clients failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
