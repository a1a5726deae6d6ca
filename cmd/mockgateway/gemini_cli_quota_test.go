package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// TestGeminiCLIQuotas runs Gemini CLI 0.61.0 headless through a scripted tool loop on two quotas,
// sent on every call by GEMINI_CLI_CUSTOM_HEADERS, each in a scope of its own. Gemini CLI tells
// them apart by the refusal's QuotaFailure quotaId:
//
//   - one request per seven seconds (…PerMinute…): its second call is refused with a RetryInfo of
//     7s; Gemini CLI waits that long — longer than its own backoff of 5s ±30% would, so it read
//     the delay — retries, and reaches its answer;
//   - one request a day (…PerDay…): its second call is refused; Gemini CLI does not retry it,
//     nor fall back to another model (mock-tools is a chain of one model, and headless Gemini CLI
//     has no fallback handler), and exits 1 with its error for a spent daily quota, the
//     refusal's message quoted.
func TestGeminiCLIQuotas(t *testing.T) {
	testutil.EndToEnd(t)
	work, fixtures := writeAgentLoop(t, "read_file", false)
	in := startService(t, nil, "--fixtures", fixtures)
	ask := []string{"-p", "What is the secret word in notes.txt?", "-m", "mock-tools"}

	t.Run("per minute: waits and retries", func(t *testing.T) {
		out, err := geminiCLIWith(t, in.URL, work,
			[]string{"GEMINI_CLI_CUSTOM_HEADERS=x-mock-quota:rpm=1;window=7s,x-mock-scope:gemini-per-minute"}, ask...)
		if err != nil || !strings.Contains(out, "The secret word is PAPAYA.") {
			t.Fatalf("gemini: %v\n%s", err, out)
		}
		calls := geminiJournal(t, in.URL, "gemini-per-minute")
		if got := callList(calls); got != "200 read-notes,429 quota_requests,200 answer-after-read" {
			t.Fatalf("calls: %s", got)
		}
		// Its own backoff would have waited at most 6.5s.
		if waited := calls[2].Time.Sub(calls[1].Time); waited < 6600*time.Millisecond {
			t.Errorf("Gemini CLI retried %v after the refusal: it did not wait the RetryInfo's 7s", waited)
		}
	})

	t.Run("per day: terminal", func(t *testing.T) {
		out, err := geminiCLIWith(t, in.URL, work,
			[]string{"GEMINI_CLI_CUSTOM_HEADERS=x-mock-quota:rpd=1,x-mock-scope:gemini-per-day"}, ask...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("gemini exited %v, not 1:\n%s", err, out)
		}
		for _, want := range []string{"TerminalQuotaError: You have exhausted your daily quota on this model.",
			"Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 1, model: mock-tools"} {
			if !strings.Contains(out, want) {
				t.Errorf("Gemini CLI did not print %q:\n%s", want, out)
			}
		}
		if got := callList(geminiJournal(t, in.URL, "gemini-per-day")); got != "200 read-notes,429 quota_daily" {
			t.Fatalf("calls: %s\nGemini CLI printed:\n%s", got, out)
		}
	})
}

// geminiCall is a journal entry as TestGeminiCLIQuotas reads it.
type geminiCall struct {
	Time                         time.Time
	Route, Model, Fixture, Fault string
	Status                       int
	Stream                       bool
}

// geminiJournal is the scope's journal, oldest first. Every call must be mock-tools', streamed
// unless refused before its stream began.
func geminiJournal(t *testing.T, base, scope string) []geminiCall {
	t.Helper()
	var journal struct{ Data []geminiCall }
	resp, err := http.Get(base + "/_mock/journal?limit=100&scope=" + url.QueryEscape(scope))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&journal); err != nil {
		t.Fatal(err)
	}
	calls := make([]geminiCall, 0, len(journal.Data))
	for i := len(journal.Data) - 1; i >= 0; i-- { // newest first
		e := journal.Data[i]
		if e.Route != "/v1beta/models/{model}:streamGenerateContent" || e.Model != "mock-tools" || e.Stream != (e.Status == http.StatusOK) {
			t.Errorf("a call to %s, model %s, answered %d (stream %v)", e.Route, e.Model, e.Status, e.Stream)
		}
		calls = append(calls, e)
	}
	return calls
}

// callList is "STATUS FIXTURE" per call, the fault in place of the fixture for a refused one.
func callList(calls []geminiCall) string {
	var s []string
	for _, c := range calls {
		what := c.Fixture
		if c.Fault != "" {
			what = c.Fault
		}
		s = append(s, strconv.Itoa(c.Status)+" "+what)
	}
	return strings.Join(s, ",")
}
