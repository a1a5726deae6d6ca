package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"mockgateway/internal/state"
	"mockgateway/internal/testutil"
)

// assertNoPassword fails when the store's password shows anywhere the audit writes.
func assertNoPassword(t *testing.T, rep *Report, stderr, password string) {
	t.Helper()
	data, _ := json.Marshal(rep)
	var text strings.Builder
	_ = rep.writeText(&text)
	for what, s := range map[string]string{"the JSON report": string(data), "the text report": text.String(), "stderr": stderr} {
		if strings.Contains(s, password) {
			t.Errorf("the store's password is in %s", what)
		}
	}
}

// The real service on a shared state store: the audit reads every key of the store but its own
// scope's fixture bodies, finds nothing, and never prints the URL's password.
func TestAuditStateStoreClean(t *testing.T) {
	testutil.EndToEnd(t)
	redisSrv := testutil.StartRedis(t)
	rs := startRealService(t, nil, "--state-store", redisSrv.URL())
	rep, code, stderr := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "10s", "--state-store", redisSrv.URL())
	if code != ExitClean || rep.Verdict != "clean" {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, problems %v\n%s", code, rep.Verdict, rep.Problems, stderr)
	}
	st := rep.source("store")
	if st == nil {
		t.Fatal("no store source in the report")
	}
	if st.Verdict != "clean" || st.Searched["keys"] == 0 || st.Searched["bytes"] == 0 || st.Searched["excluded_keys"] != 1 {
		t.Errorf("store: verdict %s, searched %v; want clean, keys and bytes searched, 1 key excluded", st.Verdict, st.Searched)
	}
	if !strings.Contains(strings.Join(st.Notes, "\n"), state.FixturesKey(rep.Traffic.Scope)) {
		t.Errorf("the notes do not name the excluded key: %q", st.Notes)
	}
	if strings.Contains(st.Location, redisSrv.Password) || st.AuditRecords == 0 {
		t.Errorf("store location %q, %d audit records (the scope's journal shows none of the audit's requests)", st.Location, st.AuditRecords)
	}
	if rep.Canaries.Secrets != 1 {
		t.Errorf("%d secrets searched for, want the store's password", rep.Canaries.Secrets)
	}
	assertNoPassword(t, rep, stderr, redisSrv.Password)
}

// A service that writes a fixture's reply and the store's password into a key other than the
// fixture bodies (here the scope's attempts) is caught by the store source.
func TestAuditFindsCanaryInStateStore(t *testing.T) {
	testutil.EndToEnd(t)
	redisSrv := testutil.StartRedis(t)
	var once sync.Once
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/_mock/fixtures" {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			var doc struct {
				Fixtures []struct {
					Reply struct {
						Content string `json:"content"`
					} `json:"reply"`
				} `json:"fixtures"`
			}
			if json.Unmarshal(body, &doc) != nil || len(doc.Fixtures) == 0 || doc.Fixtures[0].Reply.Content == "" {
				return
			}
			once.Do(func() {
				c := redisSrv.Client()
				defer c.Close()
				k := strings.TrimSuffix(state.FixturesKey(r.Header.Get(headerScope)), "fx") + "att"
				if err := c.HSet(context.Background(), k, "leak", doc.Fixtures[0].Reply.Content[:40], "pw", redisSrv.Password).Err(); err != nil {
					t.Error(err)
				}
			})
		})
	}
	rs := startRealService(t, wrap, "--state-store", redisSrv.URL())
	rep, code, stderr := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "10s", "--state-store", redisSrv.URL())
	if code != ExitLeak || rep.Verdict != "leak" {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, want the leak found", code, rep.Verdict)
	}
	reply, pw := rep.leaksIn("store", "fixture "+fixContent+" reply.content"), rep.leaksIn("store", "the state store's password")
	if len(reply) == 0 || len(pw) == 0 {
		dump(t, rep)
		t.Fatalf("%d findings of the reply, %d of the password in the store; want both", len(reply), len(pw))
	}
	for _, f := range append(reply, pw...) {
		if !strings.HasSuffix(f.Record, "}:att") {
			t.Errorf("found in %s, want the scope's attempts key", f.Record)
		}
	}
	for _, l := range rep.Leaks {
		if l.Source != "store" {
			t.Errorf("unexpected leak %+v", l)
		}
	}
	assertNoCanaryValues(t, rep)
	assertNoPassword(t, rep, stderr, redisSrv.Password)
}

// A --state-store that is not a redis:// URL is refused before any traffic, without quoting it
// (it may hold a password).
func TestAuditStateStoreBadURL(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--target", "http://127.0.0.1:1", "--state-store", "http://user:hunter2-secret@host:6379"},
		func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitIncomplete || !strings.Contains(ee.Reason, "--state-store") {
		t.Fatalf("got %v, want exit 2 naming --state-store", err)
	}
	if s := ee.Reason + stdout.String() + stderr.String(); strings.Contains(s, "hunter2-secret") {
		t.Errorf("the URL's password is printed: %q", s)
	}
}
