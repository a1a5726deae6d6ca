package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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
	// A replica listens once it is subscribed to the journal's flushes (NewRedis waits for it),
	// so the first unscoped read counts all three.
	c := rs.Client()
	defer c.Close()
	if n := c.PubSubNumSub(context.Background(), "mockgateway:journal-flush").Val()["mockgateway:journal-flush"]; n != 3 {
		t.Fatalf("%d replicas subscribed to the journal's flushes once listening, want 3", n)
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

// TestSharedJournalManyReads: 64 reads of the unscoped journal at once, again and again, while
// unscoped calls keep coming and scoped calls are made and checked: the reads share their
// replica's flush rounds and hold no store connection while they wait, so the store is never
// taken for down — /health says it is available throughout, no request is 503
// state_unavailable, and every scoped call is in its journal on the other replica.
func TestSharedJournalManyReads(t *testing.T) {
	rs := testutil.StartRedis(t)
	urls := []string{
		startService(t, map[string]string{"MOCKGATEWAY_STATE_STORE": rs.URL()}).URL,
		startService(t, map[string]string{"MOCKGATEWAY_STATE_STORE": rs.URL()}).URL,
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: 10 * time.Second}
	get := func(method, url, body string, header ...string) (int, string, string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error(), ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("X-Request-Id")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	problem := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, s)
		}
	}
	loop := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f(i)
			}
		}()
	}
	for k := range 4 { // unscoped traffic on both replicas
		loop(func(i int) {
			if code, body, _ := get("POST", urls[(k+i)%2]+"/v1/chat/completions", chatIn("mock-chat", "hi")); code != http.StatusOK {
				problem(fmt.Sprintf("an unscoped call: %d %s", code, body))
			}
		})
	}
	for k := range 64 {
		loop(func(int) {
			code, body, _ := get("GET", urls[k%2]+"/_mock/journal?limit=5", "")
			if code != http.StatusOK {
				problem(fmt.Sprintf("an unscoped read: %d %s", code, body))
			}
		})
	}
	loop(func(int) {
		code, body, _ := get("GET", urls[0]+"/health", "")
		if code != http.StatusOK || !strings.Contains(body, `"available":true`) {
			problem(fmt.Sprintf("/health: %d %s", code, body))
		}
		time.Sleep(20 * time.Millisecond)
	})
	const scope = "many-reads"
	for i := range 40 {
		code, body, id := get("POST", urls[i%2]+"/v1/chat/completions", chatIn("mock-chat", "hi"), "X-Mock-Scope", scope)
		if code != http.StatusOK {
			problem(fmt.Sprintf("scoped call %d: %d %s", i, code, body))
			continue
		}
		code, body, _ = get("GET", urls[(i+1)%2]+"/_mock/journal?limit=1000&scope="+scope, "")
		if code != http.StatusOK || !strings.Contains(body, `"`+id+`"`) {
			problem(fmt.Sprintf("scoped call %d: not in the journal read on the other replica: %d %s", i, code, body))
		}
	}
	close(stop)
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
}
