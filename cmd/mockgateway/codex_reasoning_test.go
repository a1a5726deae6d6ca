package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCodexCLIReasoning runs the Codex CLI (pinned in internal/clientcompat/codex) on
// mock-reasoning through three turns of a scripted tool loop: each answer carries a reasoning
// item with sealed encrypted content (Codex asks for it with include on every turn), and Codex
// must send those items back on the next turns — which the mock verifies, so a dropped, altered
// or unsealed item, or one sent back under another id, would end the run with 400
// invalid_encrypted_content. A recording proxy
// between Codex and the mock shows what Codex sent back. The safety rules are TestCodexCLI's:
// fixtures of a strict scope, a read-only sandbox, a temporary home.
func TestCodexCLIReasoning(t *testing.T) {
	codex := requireCodex(t)
	in := startService(t, nil, "--seal-key", "codex test seal key")
	target, _ := url.Parse(in.URL)
	var mu sync.Mutex
	var sent [][]byte // the bodies of Codex's Responses requests, in order
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses") {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			sent = append(sent, body)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	const scope = "codex-reasoning"
	addStrictFixtures(t, in.URL, scope,
		`{"name":"r1","match":{"model":"mock-reasoning","last_user":{"contains":"read both files"},"turn":1},
		  "reply":{"tool_calls":[{"name":"exec_command","arguments":{"cmd":"cat one.txt"}}],"reasoning":{"tokens":120,"summary":"**Reading** the first file."}}}`,
		`{"name":"r2","match":{"model":"mock-reasoning","tool_result":"exec_command","turn":2},
		  "reply":{"tool_calls":[{"name":"exec_command","arguments":{"cmd":"cat two.txt"}}],"reasoning":{"tokens":80}}}`,
		`{"name":"r3","match":{"model":"mock-reasoning","tool_result":"exec_command","turn":3},
		  "reply":{"content":"Both files read."}}`)
	work := t.TempDir()
	for name, text := range map[string]string{"one.txt": "the first file's line", "two.txt": "the second file's line"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, last := runCodex(t, codex, proxy.URL, scope, work, "read both files", "-m", "mock-reasoning")
	if strings.TrimSpace(last) != "Both files read." {
		t.Fatalf("last message %q\n%s", last, out)
	}
	entries := journal(t, in.URL, scope) // newest first
	if len(entries) != 3 || entries[2].Fixture != "r1" || entries[1].Fixture != "r2" || entries[0].Fixture != "r3" {
		t.Fatalf("journal: %+v\n%s", entries, out)
	}
	for _, e := range entries {
		if e.Status != 200 {
			t.Errorf("a turn failed: %+v", e)
		}
	}

	// What Codex sent: every turn asked for the encrypted content; each later turn carried back
	// the reasoning items of the turns before it, encrypted content and all. (Codex 0.171.0
	// sends an item back as {type, id, summary, content: null, encrypted_content}, before the
	// function_call it preceded.)
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 3 {
		t.Fatalf("%d requests through the proxy, want 3", len(sent))
	}
	for turn, body := range sent {
		var req struct {
			Model   string            `json:"model"`
			Include []string          `json:"include"`
			Input   []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if req.Model != "mock-reasoning" || len(req.Include) != 1 || req.Include[0] != "reasoning.encrypted_content" {
			t.Errorf("turn %d: model %q, include %v", turn+1, req.Model, req.Include)
		}
		var items int
		for _, raw := range req.Input {
			var it struct {
				Type             string `json:"type"`
				ID               string `json:"id"`
				EncryptedContent string `json:"encrypted_content"`
			}
			_ = json.Unmarshal(raw, &it)
			if it.Type == "reasoning" {
				// The id too, which the mock compares with the one its seal names.
				if it.EncryptedContent == "" || !strings.HasPrefix(it.ID, "rs_") {
					t.Errorf("turn %d sent a reasoning item back without its encrypted content or id: %s", turn+1, raw)
				}
				items++
			}
		}
		if items != turn {
			t.Errorf("turn %d sent %d reasoning items back, want %d", turn+1, items, turn)
		}
	}
}
