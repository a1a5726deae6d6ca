package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mockgateway/internal/testutil"
)

// send sends one request and returns its status, body and headers.
func send(t *testing.T, method, url, body string, header ...string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// content is a chat answer's first choice's content ("" when there is none).
func content(t *testing.T, body string) string {
	t.Helper()
	var v struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.Choices) == 0 {
		t.Fatalf("not a chat answer: %s", body)
	}
	return v.Choices[0].Message.Content
}

// journalOf reads a scope's journal on a replica: the entries' request ids and attempts.
func journalOf(t *testing.T, url, scope string) map[string]int {
	t.Helper()
	code, body, _ := send(t, "GET", url+"/_mock/journal?limit=1000&scope="+scope, "")
	if code != http.StatusOK {
		t.Fatalf("journal: %d %s", code, body)
	}
	var v struct {
		Data []struct {
			RequestID string `json:"request_id"`
			Attempt   int    `json:"attempt"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range v.Data {
		out[e.RequestID] = e.Attempt
	}
	return out
}

// eventually retries check until it holds: the journal is written after the answer, and a
// returning store is noticed by the next ping. A bound, not a measure: it only ends a wait.
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !check(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15s", what)
		}
	}
}

const promptCanary = "PROMPT-CANARY-b41d"

func chatIn(model, text string) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}]}`, model, text)
}

// TestSharedStateReplicas: three replicas sharing one Redis, driven round-robin, behave as one
// process: a sequence advances across replicas, the journal read on any replica holds every
// call, a retry on another replica is attempt 2, a deleted scope is gone everywhere, steps taken
// at once are each given once. With Redis stopped, scoped requests are 503 state_unavailable
// while unscoped generated ones are still served, and all recovers when it returns. The store
// then holds no prompt or completion text, and no log the password.
func TestSharedStateReplicas(t *testing.T) {
	rs := testutil.StartRedis(t)
	var urls []string
	var replicas []*instance
	for range 3 {
		in := startService(t, map[string]string{"MOCKGATEWAY_STATE_STORE": rs.URL()}, "--log-level", "debug")
		replicas = append(replicas, in)
		urls = append(urls, in.URL)
	}
	next := 0
	rr := func() string { next++; return urls[(next-1)%len(urls)] }
	scope := []string{"X-Mock-Scope", "shared-1"}

	// A sequence added on one replica advances across all three.
	if code, body, _ := send(t, "POST", urls[0]+"/_mock/fixtures", `{"fixtures":[{"name":"steps","match":{"last_user":{"contains":"step"}},"replies":[{"content":"one"},{"content":"two"},{"content":"three"}]}]}`, scope...); code != http.StatusOK {
		t.Fatalf("add: %d %s", code, body)
	}
	var ids []string
	for i, want := range []string{"one", "two", "three", "three"} {
		code, body, h := send(t, "POST", rr()+"/v1/chat/completions", chatIn("mock-chat", "next step "+promptCanary), scope...)
		if code != http.StatusOK || content(t, body) != want {
			t.Fatalf("step %d: %d %s, want %q", i, code, body, want)
		}
		ids = append(ids, h.Get("X-Request-Id"))
	}

	// A retry on another replica is attempt 2 (mock-flaky fails the first attempt only).
	flaky := chatIn("mock-flaky", "retry me "+promptCanary)
	code, _, h1 := send(t, "POST", urls[0]+"/v1/chat/completions", flaky, scope...)
	code2, body2, h2 := send(t, "POST", urls[1]+"/v1/chat/completions", flaky, scope...)
	if code != http.StatusServiceUnavailable || code2 != http.StatusOK {
		t.Fatalf("retry across replicas: %d then %d %s", code, code2, body2)
	}
	ids = append(ids, h1.Get("X-Request-Id"), h2.Get("X-Request-Id"))

	// The journal on any replica holds every call, the retry as attempt 2.
	for _, u := range urls {
		eventually(t, "every call in the journal of "+u, func() bool {
			j := journalOf(t, u, "shared-1")
			for _, id := range ids {
				if _, ok := j[id]; !ok {
					return false
				}
			}
			return j[h2.Get("X-Request-Id")] == 2
		})
	}

	// Steps taken at once, on every replica, are each given once.
	const n = 24
	var replies strings.Builder
	for i := range n {
		fmt.Fprintf(&replies, `%s{"content":"r%02d"}`, map[bool]string{true: "", false: ","}[i == 0], i)
	}
	race := []string{"X-Mock-Scope", "shared-race"}
	if code, body, _ := send(t, "POST", urls[2]+"/_mock/fixtures", `{"fixtures":[{"name":"many","replies":[`+replies.String()+`]}]}`, race...); code != http.StatusOK {
		t.Fatalf("add: %d %s", code, body)
	}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			code, body, _ := send(t, "POST", urls[i%3]+"/v1/chat/completions", chatIn("mock-chat", "go"), race...)
			if code != http.StatusOK {
				t.Errorf("concurrent step: %d %s", code, body)
				return
			}
			mu.Lock()
			got = append(got, content(t, body))
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i := range n {
		if i >= len(got) || got[i] != fmt.Sprintf("r%02d", i) {
			t.Fatalf("concurrent steps: got %v, want each of r00..r%02d once", got, n-1)
		}
	}

	// A scope deleted on one replica is gone on every one: its fixtures, its positions.
	if code, body, _ := send(t, "DELETE", urls[1]+"/_mock/scopes/shared-1", ""); code != http.StatusOK || !strings.Contains(body, `"deleted":true`) {
		t.Fatalf("delete: %d %s", code, body)
	}
	for _, u := range urls {
		code, body, _ := send(t, "GET", u+"/_mock/fixtures?scope=shared-1", "")
		if code != http.StatusOK || strings.Contains(body, `"steps"`) {
			t.Errorf("after the delete, %s still lists the scope's fixture: %s", u, body)
		}
		code, body, _ = send(t, "POST", u+"/v1/chat/completions", chatIn("mock-chat", "next step"), scope...)
		if code != http.StatusOK || content(t, body) == "one" || content(t, body) == "three" {
			t.Errorf("after the delete, %s still answers from the scope's fixture: %s", u, body)
		}
	}

	// Unscoped runtime fixtures reach the other replicas within their refresh (a second), and
	// so does their removal; the replica that added them has them at once.
	if code, body, _ := send(t, "POST", urls[0]+"/_mock/fixtures", `{"fixtures":[{"name":"everyone","match":{"last_user":{"contains":"unscoped-check"}},"reply":{"content":"U"}}]}`); code != http.StatusOK {
		t.Fatalf("unscoped add: %d %s", code, body)
	}
	unscopedAnswer := func(u string) string {
		code, body, _ := send(t, "POST", u+"/v1/chat/completions", chatIn("mock-chat", "unscoped-check"))
		if code != http.StatusOK {
			t.Fatalf("unscoped request: %d %s", code, body)
		}
		return content(t, body)
	}
	if got := unscopedAnswer(urls[0]); got != "U" {
		t.Errorf("the replica that added an unscoped fixture answers %q", got)
	}
	for _, u := range urls[1:] {
		eventually(t, "the unscoped fixture on "+u, func() bool { return unscopedAnswer(u) == "U" })
	}
	if code, body, _ := send(t, "DELETE", urls[2]+"/_mock/fixtures", ""); code != http.StatusOK || !strings.Contains(body, `"deleted":true`) {
		t.Fatalf("unscoped delete: %d %s", code, body)
	}
	for _, u := range urls {
		eventually(t, "the unscoped fixture gone from "+u, func() bool { return unscopedAnswer(u) != "U" })
	}

	// The store holds what fixture authors wrote and the journal's shapes: no prompt, no
	// completion (mock-chat's generated text does not echo; the prompt canary is the test).
	if dump := rs.Dump(t); strings.Contains(dump, promptCanary) || strings.Contains(dump, rs.Password) {
		t.Errorf("the store holds request text or the password:\n%s", dump)
	} else if !strings.Contains(dump, `"r00"`) || !strings.Contains(dump, `"request_id"`) {
		t.Errorf("the dump does not read the store (no fixture, no journal entry):\n%s", dump)
	}

	// Redis stops: what needs shared state is 503 state_unavailable, the rest is served, and
	// /health stays 200 saying the store is unavailable.
	rs.Stop()
	for _, u := range urls {
		code, body, h := send(t, "POST", u+"/v1/chat/completions", chatIn("mock-chat", "hello"), scope...)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"state_unavailable"`) || h.Get("X-Request-Id") == "" {
			t.Errorf("scoped request with Redis down on %s: %d %s", u, code, body)
		}
		if code, body, _ := send(t, "POST", u+"/v1/chat/completions", chatIn("mock-chat", "hello")); code != http.StatusOK {
			t.Errorf("unscoped generated request with Redis down on %s: %d %s", u, code, body)
		}
		code, body, _ = send(t, "GET", u+"/health", "")
		if code != http.StatusOK || !strings.Contains(body, `"available":false`) {
			t.Errorf("/health with Redis down on %s: %d %s", u, code, body)
		}
	}

	// Redis returns (empty: it kept nothing): every replica recovers by itself.
	rs.Start()
	for _, u := range urls {
		eventually(t, u+" serving scoped requests again", func() bool {
			code, _, _ := send(t, "POST", u+"/v1/chat/completions", chatIn("mock-chat", "hello"), scope...)
			return code == http.StatusOK
		})
		code, body, _ := send(t, "GET", u+"/health", "")
		if code != http.StatusOK || !strings.Contains(body, `"available":true`) {
			t.Errorf("/health after Redis returned on %s: %d %s", u, code, body)
		}
	}
	if code, body, _ := send(t, "POST", urls[0]+"/_mock/fixtures", `{"fixtures":[{"name":"again","replies":[{"content":"a1"},{"content":"a2"}]}]}`, scope...); code != http.StatusOK {
		t.Fatalf("add after the restart: %d %s", code, body)
	}
	for i, want := range []string{"a1", "a2"} {
		if code, body, _ := send(t, "POST", urls[i+1]+"/v1/chat/completions", chatIn("mock-chat", "x"), scope...); code != http.StatusOK || content(t, body) != want {
			t.Errorf("sequence after the restart, step %d: %d %s", i, code, body)
		}
	}

	for _, in := range replicas {
		// The log is written by its own goroutine: the lines come a moment after the answers.
		eventually(t, "the outage and the recovery in the log", func() bool {
			logs := strings.Join(in.Logs.Lines(), "\n")
			return strings.Contains(logs, "state store unavailable") && strings.Contains(logs, "state store available again")
		})
		if strings.Contains(strings.Join(in.Logs.Lines(), "\n"), rs.Password) {
			t.Errorf("the store's password reached a log")
		}
	}
}
