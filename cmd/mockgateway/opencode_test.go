package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// TestOpencode runs opencode (opencode-ai, pinned in internal/clientcompat/opencode; make deps
// installs it) headless against the real service, with the custom provider of docs/fixtures.md
// (npm @ai-sdk/openai-compatible, its baseURL the mock's /v1), on its default settings: a plain
// answer, and a loop in which opencode's read tool reads a file the test wrote and opencode
// answers once the file's text comes back. opencode asks for max_tokens 32000 on every call, its
// title request included, which the mock refused before the model's output limit decided it.
//
// opencode runs the tools the model asks for, so it is never given a generated turn: every turn
// (the title request too) is a fixture of a strict scope, which reaches the mock as a header of
// the provider; a turn no fixture matches is 400 no_fixture_match, which ends the run. Its
// home, its XDG directories and its working directory are temporary, and it reaches no network.
func TestOpencode(t *testing.T) {
	opencode := requireOpencode(t)
	in := startService(t, nil)
	title := `{"name":"oc-title","match":{"model":"mock-tools","system":{"contains":"You are a title generator"}},"reply":{"content":"A greeting"}}`

	t.Run("plain answer", func(t *testing.T) {
		const scope = "opencode-plain"
		addStrictFixtures(t, in.URL, scope, title,
			`{"name":"oc-hi","match":{"model":"mock-tools","tools":["read"],"last_user":{"contains":"say hi"}},"reply":{"content":"Hi from mockgateway."}}`)
		out := runOpencode(t, opencode, in.URL, scope, t.TempDir(), "say hi")
		if !strings.Contains(out, "Hi from mockgateway.") {
			t.Fatalf("opencode did not print the mock's answer:\n%s", out)
		}
		checkOpencodeJournal(t, in.URL, scope, "oc-hi")
	})

	t.Run("scripted read loop", func(t *testing.T) {
		const scope = "opencode-loop"
		work := t.TempDir()
		file := filepath.Join(work, "hello.txt")
		if err := os.WriteFile(file, []byte("a line only the file holds\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"filePath": file})
		addStrictFixtures(t, in.URL, scope, title,
			`{"name":"oc-read","match":{"model":"mock-tools","tools":["read"],"last_user":{"contains":"read hello.txt"},"turn":1},
			  "reply":{"tool_calls":[{"name":"read","arguments":`+string(args)+`}]}}`,
			`{"name":"oc-done","match":{"model":"mock-tools","tool_result":"read"},"reply":{"content":"I have read the file."}}`)
		out := runOpencode(t, opencode, in.URL, scope, work, "read hello.txt")
		if !strings.Contains(out, "I have read the file.") {
			t.Fatalf("opencode did not print the mock's answer:\n%s", out)
		}
		entries := checkOpencodeJournal(t, in.URL, scope, "oc-read", "oc-done")
		// The last turn carried the file back: a tool message in the journal's shape (counts and
		// lengths, never the text), after the read call the turn before made.
		for _, e := range entries {
			if e.Fixture == "oc-done" && (e.Shape.Messages["tool"] != 1 || e.Shape.ContentChars["tool"] == 0) {
				t.Fatalf("the last turn carried no tool result: %+v", e.Shape)
			}
			if e.Fixture == "oc-read" && e.FinishReason != "tool_calls" {
				t.Fatalf("the read turn: %+v", e)
			}
		}
	})
}

// opencodeEntry is what the test reads of a journal entry: journalEntry and the budget.
type opencodeEntry struct {
	journalEntry
	Shape struct {
		Messages       map[string]int `json:"messages"`
		ContentChars   map[string]int `json:"content_chars"`
		MaxTokens      int            `json:"max_tokens"`
		MaxTokensParam string         `json:"max_tokens_param"`
	} `json:"shape"`
}

// checkOpencodeJournal holds a scope's journal to opencode's calls: one per fixture named, and
// at most one title request (oc-title), each a Chat Completions call answered 200 that asked for
// max_tokens 32000. opencode starts its title request without awaiting it, so a run may exit
// before it reaches the mock: the turns named carry the assertion, the title is checked when
// it came.
func checkOpencodeJournal(t *testing.T, base, scope string, fixtures ...string) []opencodeEntry {
	t.Helper()
	var j struct {
		Data []opencodeEntry `json:"data"`
	}
	getJSON(t, base+"/_mock/journal?scope="+scope, &j)
	var got []string
	titles := 0
	for _, e := range j.Data {
		if e.Fixture == "oc-title" {
			titles++
		} else {
			got = append(got, e.Fixture)
		}
		if e.Status != 200 || e.Route != "/v1/chat/completions" || e.Shape.MaxTokens != 32000 || e.Shape.MaxTokensParam != "max_tokens" {
			t.Errorf("journal entry: %+v", e)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(fixtures))
	if !slices.Equal(got, want) || titles > 1 {
		t.Fatalf("journal holds the calls %q and %d title requests, want %q and at most one", got, titles, want)
	}
	return j.Data
}

// runOpencode runs `opencode run prompt` in work against the mock, with the scope as a header of
// its provider, and returns its transcript (stdout and stderr).
func runOpencode(t *testing.T, opencode, base, scope, work, prompt string) string {
	t.Helper()
	home := t.TempDir()
	config, _ := json.Marshal(map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"mockgateway": map[string]any{
			"npm":  "@ai-sdk/openai-compatible",
			"name": "mockgateway",
			"options": map[string]any{
				"baseURL": base + "/v1",
				"apiKey":  "dummy",
				"headers": map[string]string{"x-mock-scope": scope},
			},
			"models": map[string]any{"mock-tools": map[string]string{"name": "mock-tools"}},
		}},
		"model":      "mockgateway/mock-tools",
		"autoupdate": false,
	})
	configFile := filepath.Join(home, "opencode.json")
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, opencode, "run", prompt)
	cmd.Dir = work
	// PWD too: opencode takes its project directory from it, and a read outside that directory
	// asks a permission that run refuses.
	cmd.Env = append(opencodeBaseEnv(), "PWD="+work, "HOME="+home, "OPENCODE_CONFIG="+configFile,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		// No network: no model list (the provider's models are the config's), no update check,
		// and npm offline, so the plugin package opencode installs into its config directory in
		// the background fails at once, as it does without a network, and changes nothing.
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "npm_config_offline=true", "NO_COLOR=1")
	// No stdin: opencode run appends piped input to the message.
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("opencode run: %v\n%s", err, out)
	}
	return string(out)
}

// opencodeBaseEnv is what opencode inherits of the test's environment: where programs are
// (PATH, for node), the temporary directory and the locale. Nothing else passes, so a
// developer's proxy, API keys, OPENAI_* or OPENCODE_* settings cannot reach the run; runOpencode
// sets the rest (its home, XDG directories, PWD and OPENCODE_* knobs).
func opencodeBaseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "TMPDIR", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// requireOpencode marks t end-to-end and returns the pinned opencode
// (internal/clientcompat/opencode), failing the test when it is missing: make test installs it.
func requireOpencode(t *testing.T) string {
	t.Helper()
	testutil.EndToEnd(t)
	opencode, err := filepath.Abs("../../internal/clientcompat/opencode/node_modules/.bin/opencode")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(opencode); err != nil {
		t.Fatalf("opencode is not installed (%v): run 'make deps' (make test does)", err)
	}
	return opencode
}
