package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mockgateway/internal/testutil"
)

// TestClaudeCodeWaitsOutAQuota runs Claude Code headless through a scripted tool loop on a quota
// of one request per three seconds (x-mock-quota, sent on every call by ANTHROPIC_CUSTOM_HEADERS):
// its second call is refused with Anthropic's 429, retry-after and x-should-retry: true, and
// Claude Code waits and retries until the bucket admits it, reaching its answer.
func TestClaudeCodeWaitsOutAQuota(t *testing.T) {
	testutil.EndToEnd(t)
	work := t.TempDir()
	notes := filepath.Join(work, "notes.txt")
	if err := os.WriteFile(notes, []byte("The secret word is PAPAYA.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures := t.TempDir()
	readArgs, _ := json.Marshal(map[string]string{"file_path": notes})
	file := `{"strict": true, "fixtures": [
	  {"name": "read-notes", "match": {"model": "mock-tools", "last_user": {"contains": "notes.txt"}, "tools": ["Read"], "turn": 1},
	   "reply": {"tool_calls": [{"name": "Read", "arguments": ` + string(readArgs) + `}]}},
	  {"name": "answer-after-read", "match": {"model": "mock-tools", "tool_result": "Read", "any_message": {"contains": "PAPAYA"}, "turn": 2},
	   "reply": {"content": "The secret word is PAPAYA."}}]}`
	if err := os.WriteFile(filepath.Join(fixtures, "claude-code.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	in := startService(t, nil, "--fixtures", fixtures)
	out := claudeCodeWith(t, in.URL, work, []string{"ANTHROPIC_CUSTOM_HEADERS=x-mock-quota: rpm=1;window=3s"},
		"-p", "What is the secret word in notes.txt?", "--model", "mock-tools",
		"--tools", "Read", "--allowedTools", "Read", "--permission-mode", "dontAsk", "--strict-mcp-config", "--no-session-persistence")
	if !strings.Contains(out, "The secret word is PAPAYA.") {
		t.Fatalf("Claude Code printed:\n%s", out)
	}
	logs := strings.Join(in.Logs.Lines(), "\n")
	if !strings.Contains(logs, `"fault":"quota_requests"`) {
		t.Errorf("no call was refused by the quota; the service logged:\n%s", logs)
	}
}
