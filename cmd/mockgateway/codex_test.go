package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// TestCodexCLI runs the Codex CLI (@openai/codex, pinned in internal/clientcompat/codex; make
// deps installs it) headless against the real service, with the provider config of
// docs/fixtures.md: a plain answer, and a tool loop in which Codex runs `cat hello.txt` on a
// file the test wrote and answers once the command's output comes back.
//
// Codex runs commands the model asks for, so it is never given a generated turn: every turn is
// a fixture of a strict scope (a turn no fixture matches is 400 no_fixture_match, which ends
// the run, rather than generated tool calls), and the scope reaches the mock through the
// provider's http_headers. It runs with the most restrictive settings under which the scripted
// cat still works: --sandbox read-only (the command may read the working directory, write
// nothing, reach no network) and codex exec's own approval policy, never (there is no one to
// ask; a command the sandbox refuses fails instead of escalating). Its home (CODEX_HOME, HOME)
// and working directory are temporary, and --ephemeral leaves no session files.
func TestCodexCLI(t *testing.T) {
	codex := requireCodex(t)
	in := startService(t, nil)

	t.Run("plain answer", func(t *testing.T) {
		const scope = "codex-plain"
		addStrictFixtures(t, in.URL, scope, `{"name":"codex-hi","match":{"model":"mock-tools","last_user":{"contains":"say hi"}},
			"reply":{"content":"Hi from mockgateway."}}`)
		out, last := runCodex(t, codex, in.URL, scope, t.TempDir(), "say hi")
		if strings.TrimSpace(last) != "Hi from mockgateway." || !strings.Contains(out, "Hi from mockgateway.") {
			t.Fatalf("codex did not print the mock's answer; last message %q\n%s", last, out)
		}
		entries := journal(t, in.URL, scope)
		if len(entries) != 1 || entries[0].Status != 200 || entries[0].Fixture != "codex-hi" || entries[0].Route != "/v1/responses" {
			t.Fatalf("journal: %+v", entries)
		}
	})

	t.Run("scripted tool loop", func(t *testing.T) {
		const scope = "codex-loop"
		const secret = "a line only the file holds"
		addStrictFixtures(t, in.URL, scope,
			`{"name":"codex-cat","match":{"model":"mock-tools","tools":["exec_command"],"last_user":{"contains":"read hello.txt"},"turn":1},
			  "reply":{"tool_calls":[{"name":"exec_command","arguments":{"cmd":"cat hello.txt"}}]}}`,
			`{"name":"codex-done","match":{"model":"mock-tools","tool_result":"exec_command"},
			  "reply":{"content":"I have read the file."}}`)
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "hello.txt"), []byte(secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, last := runCodex(t, codex, in.URL, scope, work, "read hello.txt")
		if strings.TrimSpace(last) != "I have read the file." {
			t.Fatalf("last message %q\n%s", last, out)
		}
		if !strings.Contains(out, secret) {
			t.Fatalf("codex did not run the scripted cat (its output is not in the transcript):\n%s", out)
		}
		entries := journal(t, in.URL, scope) // newest first
		if len(entries) != 2 || entries[1].Fixture != "codex-cat" || entries[1].FinishReason != "tool_calls" ||
			entries[0].Fixture != "codex-done" || entries[0].Status != 200 {
			t.Fatalf("journal: %+v", entries)
		}
		// The second turn carried the command's output back: one function_call_output, a tool
		// message in the journal's shape (counts and lengths, never the text).
		if entries[0].Shape.Messages["tool"] != 1 || entries[0].Shape.ContentChars["tool"] == 0 || entries[1].Shape.Messages["tool"] != 0 {
			t.Fatalf("the second request carried no function_call_output: %+v", entries[0].Shape)
		}
	})
}

// addStrictFixtures adds fixtures to a strict scope: a request of the scope that none matches is
// refused, never answered with generated content.
func addStrictFixtures(t *testing.T, base, scope string, fixtures ...string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/_mock/fixtures",
		strings.NewReader(`{"strict":true,"fixtures":[`+strings.Join(fixtures, ",")+`]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-mock-scope", scope)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("adding fixtures to %s: %d", scope, resp.StatusCode)
	}
}

// runCodex runs `codex exec prompt` in work against the mock, with the scope as a header of its
// provider, and returns its transcript (stdout and stderr) and its last message. args go before
// the prompt (-m model).
func runCodex(t *testing.T, codex, base, scope, work, prompt string, args ...string) (string, string) {
	t.Helper()
	home := t.TempDir()
	config := `model = "mock-tools"
model_provider = "mockgateway"

[model_providers.mockgateway]
name = "mockgateway"
base_url = "` + base + `/v1"
wire_api = "responses"
env_key = "MOCKGATEWAY_API_KEY"
http_headers = { "x-mock-scope" = "` + scope + `" }
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(home, "last-message.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"exec", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral",
		"--color", "never", "--cd", work, "--output-last-message", last}, args...)
	cmd := exec.CommandContext(ctx, codex, append(argv, prompt)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "MOCKGATEWAY_API_KEY=dummy", "NO_COLOR=1")
	// No stdin: codex exec appends piped input to the prompt.
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	msg, err := os.ReadFile(last)
	if err != nil {
		t.Fatalf("codex wrote no last message: %v\n%s", err, out)
	}
	return string(out), string(msg)
}

// journalEntry is what the test reads of a journal entry.
type journalEntry struct {
	Route        string `json:"route"`
	Status       int    `json:"status"`
	Fixture      string `json:"fixture"`
	FinishReason string `json:"finish_reason"`
	Shape        struct {
		Messages     map[string]int `json:"messages"`
		ContentChars map[string]int `json:"content_chars"`
	} `json:"shape"`
}

// journal reads a scope's journal, newest first.
func journal(t *testing.T, base, scope string) []journalEntry {
	t.Helper()
	var j struct {
		Data []journalEntry `json:"data"`
	}
	getJSON(t, base+"/_mock/journal?scope="+scope, &j)
	return j.Data
}

// requireCodex marks t end-to-end and returns the pinned Codex CLI (internal/clientcompat/codex),
// failing the test when it or Node is missing: make test installs both.
func requireCodex(t *testing.T) string {
	t.Helper()
	testutil.EndToEnd(t)
	codex, err := filepath.Abs("../../internal/clientcompat/codex/node_modules/.bin/codex")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(codex); err != nil {
		t.Fatalf("the Codex CLI is not installed (%v): run 'make deps' (make test does)", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed; the Codex CLI's launcher needs it")
	}
	return codex
}
