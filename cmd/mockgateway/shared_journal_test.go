package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mockgateway/internal/testutil"
)

// TestSharedJournalReadsItsWrites: with three replicas on one store, the journal read on another
// replica right after each answer — JSON and streamed, scoped and unscoped, short and longer
// than net/http's buffers — already holds that answer's entry. Nothing waits between the
// answer and the read.
func TestSharedJournalReadsItsWrites(t *testing.T) {
	rs := testutil.StartRedis(t)
	var urls []string
	for range 3 {
		urls = append(urls, startService(t, map[string]string{"MOCKGATEWAY_STATE_STORE": rs.URL()}).URL)
	}
	const scope = "read-your-writes"
	long := strings.Repeat("a long answer, longer than the buffers of net/http. ", 400)
	if code, body, _ := send(t, "POST", urls[0]+"/_mock/fixtures", fmt.Sprintf(`{"fixtures":[{"name":"long","match":{"last_user":{"contains":"long"}},"reply":{"content":%q}}]}`, long), "X-Mock-Scope", scope); code != http.StatusOK {
		t.Fatalf("add: %d %s", code, body)
	}
	for i := range 200 {
		header := []string{"X-Mock-Scope", scope}
		read := scope
		if i%4 >= 2 {
			header, read = nil, ""
		}
		req := chatIn("mock-chat", "long, please")
		if i%2 == 1 {
			req = `{"model":"mock-chat","stream":true,"messages":[{"role":"user","content":"long, please"}]}`
		}
		code, body, h := send(t, "POST", urls[i%3]+"/v1/chat/completions", req, header...)
		if code != http.StatusOK || (i%2 == 1 && !strings.Contains(body, "[DONE]")) {
			t.Fatalf("call %d: %d %s", i, code, body)
		}
		id := h.Get("X-Request-Id")
		if _, ok := journalOf(t, urls[(i+1)%3], read)[id]; !ok {
			t.Fatalf("call %d (scope %q, stream %v) on %s: its entry is not in the journal read on %s right after the answer",
				i, read, i%2 == 1, urls[i%3], urls[(i+1)%3])
		}
	}
}
