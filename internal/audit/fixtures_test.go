package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"mockgateway/internal/catalog"
	gwconfig "mockgateway/internal/config"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/journal"
	"mockgateway/internal/quota"
	"mockgateway/internal/server"
	"mockgateway/internal/simulation"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// realService is the real handler, wired as cmd/mockgateway's serve wires it, on a test server:
// its JSON log goes to a file the audit reads.
type realService struct {
	URL     string
	logPath string
	store   *fixtures.Store
	journal *journal.Journal
}

// startRealService serves the real handler with the given flags; wrap, when not nil, stands
// between the client and the service (a service that leaks on purpose).
func startRealService(t *testing.T, wrap func(http.Handler) http.Handler, args ...string) *realService {
	t.Helper()
	cfg, err := gwconfig.Parse(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rs := &realService{logPath: filepath.Join(t.TempDir(), "mockgateway.log")}
	f, err := os.Create(rs.logPath)
	if err != nil {
		t.Fatal(err)
	}
	lw := observability.NewLogWriter(f)
	logger, err := observability.NewLogger(lw, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	tracing, err := observability.NewTracing(context.Background(), func(string) string { return "" }, observability.TracingConfig{BufferSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.Builtin()
	metrics := observability.NewMetrics(prometheus.NewRegistry(), cat.IDs(), cat.ExecutableIDs(), observability.BuildInfo{Version: "test", FaultKinds: simulation.Kinds()})
	rs.store, rs.journal = server.NewFixtureStore(cfg), server.NewJournal(cfg)
	deps := server.Deps{
		Config: cfg, Catalog: cat, Logger: logger, Tracer: tracing.Tracer,
		Propagator: observability.Propagator(), Metrics: metrics, Spans: tracing.Buffer,
		Version: "test", Started: time.Now(), Sealer: server.NewSealer(cfg),
		State: &state.Memory{Fixtures: rs.store, Calls: rs.journal, Attempts: simulation.NewAttemptCounter(cfg.AttemptKeys, cfg.AttemptTTL, time.Now), Quotas: quota.NewBuckets(cfg.QuotaKeys, time.Now)},
	}
	if cfg.StateStore != "" { // as run wires --state-store
		ctx, cancel := context.WithCancel(context.Background())
		shared, err := server.NewSharedState(ctx, cfg, rs.store, prometheus.NewRegistry(), logger)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		deps.State = shared
		t.Cleanup(func() { cancel(); shared.Wait() })
	}
	var h http.Handler = server.New(deps)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	rs.URL = srv.URL
	t.Cleanup(func() {
		srv.Close()
		_ = tracing.Provider.Shutdown(context.Background())
		lw.Close()
		f.Close()
	})
	return rs
}

// fixtureProbes are the report's probes of fixtures and the control API.
func fixtureProbes(rep *Report) []ProbeReport {
	var out []ProbeReport
	for _, p := range rep.Traffic.Probes {
		if strings.Contains(p.Name, "fixture") || strings.Contains(p.Name, "scope") || strings.Contains(p.Name, "journal") {
			out = append(out, p)
		}
	}
	return out
}

// The real service, journal on: the fixture probes run as the contract says, the journal and the
// fixture list are searched, nothing is found, and the audit's scope is gone afterwards.
func TestAuditRealServiceFixtures(t *testing.T) {
	rs := startRealService(t, nil)
	rep, code, stderr := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "10s")
	if code != ExitClean || rep.Verdict != "clean" || len(rep.Leaks) != 0 {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, %d leaks, problems %v\n%s", code, rep.Verdict, len(rep.Leaks), rep.Problems, stderr)
	}
	probes := fixtureProbes(rep)
	want := map[string]int{"200": 0, "400 no_fixture_match": 0, "400 fixture_mismatch": 0, "400 invalid_value": 0, "400 invalid_simulation_header": 0, "400 invalid_request_error": 0, "400 invalid_argument": 0}
	canaries := 0
	for _, p := range probes {
		if p.Unexpected || p.Verdict != "clean" {
			t.Errorf("%s %s: %d %s (expected %s), verdict %s", p.ID, p.Name, p.Status, p.ErrorCode, p.Expected, p.Verdict)
		}
		if _, ok := want[p.Expected]; ok {
			want[p.Expected]++
		}
		canaries += p.Canaries
	}
	// 1 add + 3 matches × 2 = 7 answered 200, and the Responses, Messages and Gemini dialects' 2
	// matches × 2 each; a miss (chat, Responses, and Messages and Gemini, whose envelopes name
	// the type and the status) and a mismatch each JSON and stream; the refused body, the
	// malformed ?scope=, DELETE and limit; the malformed x-mock-scope twice.
	for k, n := range map[string]int{"200": 19, "400 no_fixture_match": 4, "400 fixture_mismatch": 2, "400 invalid_value": 4, "400 invalid_simulation_header": 2, "400 invalid_request_error": 2, "400 invalid_argument": 2} {
		if want[k] != n {
			t.Errorf("%d fixture probes expected %s, want %d", want[k], k, n)
		}
	}
	if len(probes) < 18 || canaries < 500 {
		t.Errorf("%d fixture probes with %d canaries in the report", len(probes), canaries)
	}
	resp := rep.source("responses")
	if resp == nil {
		t.Fatal("no responses source")
	}
	for k, min := range map[string]int64{"control_reads": 3, "journal_entries": 10, "fixture_list_entries": 4, "control_bodies": 1} {
		if resp.Searched[k] < min {
			t.Errorf("responses searched %d %s, want at least %d: %v", resp.Searched[k], k, min, resp.Searched)
		}
	}
	if !strings.Contains(strings.Join(resp.Notes, "\n"), "journal (scope "+rep.Traffic.Scope+"): ") {
		t.Errorf("no note on the scope's journal: %q", resp.Notes)
	}
	// The scope is dropped: no runtime fixture, no journal.
	if !strings.HasPrefix(rep.Traffic.Scope, scopePrefix) {
		t.Fatalf("scope %q", rep.Traffic.Scope)
	}
	for _, f := range rs.store.List(rep.Traffic.Scope) {
		if f.Origin.String() == "runtime" {
			t.Errorf("runtime fixture %q left in the audit's scope", f.Name)
		}
	}
	if n := len(rs.journal.List(rep.Traffic.Scope, 1000)); n != 0 {
		t.Errorf("%d journal entries left in the audit's scope", n)
	}
}

// With the journal off (--journal-entries 0) /_mock/journal is 404: unavailable, not a failure.
func TestAuditRealServiceJournalOff(t *testing.T) {
	rs := startRealService(t, nil, "--journal-entries", "0")
	rep, code, _ := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "10s")
	if code != ExitClean || rep.Verdict != "clean" {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, problems %v", code, rep.Verdict, rep.Problems)
	}
	resp := rep.source("responses")
	if resp.Searched["control_reads_unavailable"] != 2 || resp.Searched["control_reads"] != 1 || resp.Searched["journal_entries"] != 0 {
		t.Errorf("searched %v, want the 2 journals unavailable and the fixture list read", resp.Searched)
	}
	if n := strings.Count(strings.Join(resp.Notes, "\n"), "unavailable, not searched"); n != 2 {
		t.Errorf("%d notes say unavailable, want 2: %q", n, resp.Notes)
	}
}

// A service that copies a fixture's reply into its journal entries is caught.
func TestAuditFindsFixtureReplyInJournal(t *testing.T) {
	var mu sync.Mutex
	var reply string // the content of the first fixture the client added
	got := func() string { mu.Lock(); defer mu.Unlock(); return reply }
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPost && r.URL.Path == "/_mock/fixtures":
				body, _ := io.ReadAll(r.Body)
				var doc struct {
					Fixtures []struct {
						Reply struct {
							Content string `json:"content"`
						} `json:"reply"`
					} `json:"fixtures"`
				}
				mu.Lock()
				if json.Unmarshal(body, &doc) == nil && len(doc.Fixtures) > 0 && reply == "" {
					reply = doc.Fixtures[0].Reply.Content
				}
				mu.Unlock()
				r.Body = io.NopCloser(bytes.NewReader(body))
			case r.URL.Path == "/_mock/journal" && r.URL.Query().Get("scope") != "" && got() != "":
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				var doc map[string]any
				if json.Unmarshal(rec.Body.Bytes(), &doc) == nil {
					for _, e := range doc["data"].([]any) {
						e.(map[string]any)["reply_preview"] = got()[:40]
					}
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(doc)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	rs := startRealService(t, wrap)
	rep, code, _ := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "10s")
	if code != ExitLeak || rep.Verdict != "leak" {
		dump(t, rep)
		t.Fatalf("exit %d verdict %s, want the leak found", code, rep.Verdict)
	}
	found := rep.leaksIn("responses", "fixture "+fixContent+" reply.content")
	if len(found) == 0 {
		dump(t, rep)
		t.Fatal("the fixture reply in the journal was not reported")
	}
	for _, f := range found {
		if !strings.Contains(f.Record, "journal (scope "+rep.Traffic.Scope+") entry") || !strings.HasSuffix(f.Field, "reply_preview") {
			t.Errorf("found in %s, field %s; want a journal entry's reply_preview", f.Record, f.Field)
		}
	}
	for _, l := range rep.Leaks {
		if l.Source != "responses" || !strings.Contains(l.Place, "reply.content") {
			t.Errorf("unexpected leak %+v", l)
		}
	}
	assertNoCanaryValues(t, rep)
}

// A journal that answers with an error other than 404 cannot be vouched for: exit 2.
func TestAuditJournalErrorIsNotAPass(t *testing.T) {
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/_mock/journal" && r.URL.Query().Get("limit") == "1000" {
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	rs := startRealService(t, wrap)
	rep, code, _ := runAudit(t, "--target", rs.URL, "--logs", rs.logPath, "--wait", "5s")
	if code != ExitIncomplete || !strings.Contains(strings.Join(rep.Problems, "\n"), "journal (unscoped)") {
		dump(t, rep)
		t.Fatalf("exit %d, problems %v; want 2 naming the journal", code, rep.Problems)
	}
}
