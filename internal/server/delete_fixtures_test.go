package server

import (
	"fmt"
	"strings"
	"testing"

	"mockgateway/internal/fixtures"
)

// TestDeleteUnscopedFixtures is the CSRF residue of issue 30: a fixture added without a scope
// (by a page the developer visited, say) answered every unscoped call until restart, as
// DELETE /_mock/scopes/ is no route and "" no scope. DELETE /_mock/fixtures drops the unscoped
// runtime fixtures and their counters; the file fixtures, other scopes and the journal stay.
func TestDeleteUnscopedFixtures(t *testing.T) {
	h := newHarness(t, journaled)
	addFixtures(t, h, "", `{"fixtures":[{"name":"hijack","priority":9223372036854775807,"match":{},"reply":{"content":"pwned"}},
		{"name":"steps","match":{"model":"mock-echo"},"replies":[{"content":"one"},{"content":"two"}]}]}`)
	addFixtures(t, h, "other", `{"fixtures":[{"name":"theirs","match":{},"reply":{"content":"theirs"}}]}`)
	chatAs := func(model string, header ...string) string {
		rr := h.do("POST", chatPath, chatBody(model, ""), append([]string{"X-Mock-Latency", "instant"}, header...)...)
		return *decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message.Content
	}
	if got := chatAs("mock-chat"); got != "pwned" {
		t.Fatalf("before: %q", got)
	}
	rr := h.do("DELETE", "/_mock/fixtures", "")
	if rr.Code != 200 || rr.Body.String() != `{"object":"fixtures.deleted","scope":"","deleted":true}`+"\n" || rr.Header().Get("x-request-id") == "" {
		t.Fatalf("DELETE /_mock/fixtures: %d %q", rr.Code, rr.Body)
	}
	if got := chatAs("mock-chat"); got == "pwned" {
		t.Error("the unscoped fixture still answers")
	}
	if got := chatAs("mock-chat", HeaderScope, "other"); got != "theirs" {
		t.Errorf("another scope's fixtures went too: %q", got)
	}
	if rr := h.do("GET", "/_mock/journal?scope=", ""); !strings.Contains(rr.Body.String(), `"request_id"`) {
		t.Errorf("the unscoped journal stays: %s", rr.Body)
	}
	if rr := h.do("DELETE", "/_mock/fixtures", ""); rr.Code != 200 || !strings.Contains(rr.Body.String(), `"deleted":false`) {
		t.Errorf("again: %d %s", rr.Code, rr.Body)
	}
}

// TestDeleteScopedFixtures: with x-mock-scope or ?scope=, DELETE /_mock/fixtures drops that
// scope's runtime fixtures and counters (a rerun starts its sequence and its attempts again);
// the unscoped fixtures stay; a malformed scope is refused and not echoed.
func TestDeleteScopedFixtures(t *testing.T) {
	h := newHarness(t)
	addFixtures(t, h, "", `{"fixtures":[{"name":"mine","match":{"model":"mock-echo"},"reply":{"content":"unscoped"}}]}`)
	const seq = `{"fixtures":[{"name":"steps","match":{"model":"mock-chat"},"replies":[{"content":"one"},{"content":"two"}]}]}`
	for _, how := range [][2]string{{"header", ""}, {"query", "?scope=t-1"}} {
		addFixtures(t, h, "t-1", seq)
		call := func() string {
			rr := h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, "t-1", "X-Mock-Latency", "instant")
			return *decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message.Content
		}
		if a, b := call(), call(); a+b != "onetwo" {
			t.Fatalf("%s: the sequence: %q %q", how[0], a, b)
		}
		header := []string{HeaderScope, "t-1"}
		if how[1] != "" {
			header = []string{HeaderScope, "not-this-one"}
		}
		rr := h.do("DELETE", "/_mock/fixtures"+how[1], "", header...)
		if rr.Code != 200 || !strings.Contains(rr.Body.String(), `"scope":"t-1","deleted":true`) {
			t.Fatalf("%s: %d %s", how[0], rr.Code, rr.Body)
		}
		if rr := h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, "t-1", "X-Mock-Latency", "instant"); strings.Contains(rr.Body.String(), `"two"`) {
			t.Errorf("%s: the scope's fixture still answers: %s", how[0], rr.Body)
		}
	}
	rr := h.do("POST", chatPath, chatBody("mock-echo", ""), "X-Mock-Latency", "instant")
	if got := *decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message.Content; got != "unscoped" {
		t.Errorf("the unscoped fixtures stay: %q", got)
	}
	// Attempt counts are counters too: a rerun after the drop starts at attempt 1.
	const fault = "rate_limit;attempts=1;retry_after=0s"
	try := func() int {
		return h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, "t-2", "X-Mock-Fault", fault, "X-Mock-Latency", "instant").Code
	}
	if got := try(); got != 429 {
		t.Fatalf("first attempt: %d", got)
	}
	if rr := h.do("DELETE", "/_mock/fixtures?scope=t-2", ""); !strings.Contains(rr.Body.String(), `"deleted":true`) {
		t.Errorf("a scope with an attempt count: %s", rr.Body)
	}
	if got := fmt.Sprint(try(), try()); got != "429 200" {
		t.Errorf("after the drop: %s, want 429 200", got)
	}
	for _, r := range [][]string{{"/_mock/fixtures?scope=not+a+scope"}, {"/_mock/fixtures", HeaderScope, "not a scope"}} {
		rr := h.do("DELETE", r[0], "", r[1:]...)
		if rr.Code != 400 || strings.Contains(rr.Body.String(), "not a scope") {
			t.Errorf("%v: %d %s", r, rr.Code, rr.Body)
		}
	}
}

// TestScopeFloodThroughTheServer is the scope-table attack of issue 30 as a client makes it:
// 1,100 chat calls, each in a new x-mock-scope, answered by a file fixture with replies. A later
// test's sequence still starts at its first reply, and a new scope still takes fixtures.
func TestScopeFloodThroughTheServer(t *testing.T) {
	set, err := fixtures.Parse(fixtures.OriginFile, "seq.yaml", []byte("fixtures:\n- name: seq\n  match: {model: mock-chat}\n  replies: [{content: first}, {content: second}, {content: third}]\n"), fixtures.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(d *Deps) {
		m := memoryState(d.Config, false)
		m.Fixtures.SetFiles(set)
		d.State = m
	})
	call := func(scope string) string {
		rr := h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, scope, "X-Mock-Latency", "instant")
		return *decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message.Content
	}
	for i := range 1100 {
		call(fmt.Sprintf("flood-%d", i))
	}
	if got := strings.Join([]string{call("later"), call("later"), call("later")}, " "); got != "first second third" {
		t.Errorf("a later test's sequence: %s", got)
	}
	addFixtures(t, h, "new-scope", `{"fixtures":[{"name":"mine","reply":{"content":"x"}}]}`)
}
