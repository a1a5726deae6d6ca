package main

import (
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
	work, fixtures := writeAgentLoop(t, "Read", false)
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
