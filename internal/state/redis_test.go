package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/fixtures"
	"mockgateway/internal/journal"
	"mockgateway/internal/quota"
	"mockgateway/internal/testutil"
)

// newTestRedis is a Redis store on a redis-server of the test's own, with small bounds.
func newTestRedis(t *testing.T, cfg RedisConfig) (*Redis, *testutil.RedisServer) {
	t.Helper()
	rs := testutil.StartRedis(t)
	cfg.URL = rs.URL()
	if cfg.Fixtures == nil {
		cfg.Fixtures = fixtures.NewStore(fixtures.StoreConfig{})
	}
	for _, d := range []*int{&cfg.MaxScopes, &cfg.MaxFixturesPerScope, &cfg.MaxBytes, &cfg.AttemptKeys, &cfg.QuotaKeys, &cfg.JournalEntries, &cfg.JournalScopes} {
		if *d == 0 {
			*d = 100
		}
	}
	if cfg.MaxBytes == 100 {
		cfg.MaxBytes = 1 << 20
	}
	for _, d := range []*time.Duration{&cfg.ScopeTTL, &cfg.TTL, &cfg.AttemptTTL} {
		if *d == 0 {
			*d = time.Hour
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := NewRedis(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); r.Wait() })
	return r, rs
}

func body(names ...string) []byte {
	var fs []string
	for _, n := range names {
		fs = append(fs, fmt.Sprintf(`{"name":%q,"reply":{"content":"from %s"}}`, n, n))
	}
	return []byte(`{"fixtures":[` + strings.Join(fs, ",") + `]}`)
}

func code(err error) string {
	var e *fixtures.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestRedisAddBounds: an add is all or nothing, and the bounds of the in-memory store hold in
// Redis: fixtures per scope, bytes in all scopes, names unique across adds, scopes — where a
// counting scope gives its place to a fixture scope, and fixture scopes never give theirs.
func TestRedisAddBounds(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRedis(t, RedisConfig{MaxScopes: 2, MaxFixturesPerScope: 3, MaxBytes: 1024})
	if _, err := r.AddFixtures(ctx, "a", body("one", "two")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddFixtures(ctx, "a", body("three", "two")); code(err) != fixtures.CodeInvalidValue {
		t.Fatalf("a duplicate name across adds: %v", err)
	}
	infos, _ := r.ListFixtures(ctx, "a")
	if len(infos) != 2 {
		t.Fatalf("a refused add left something behind: %+v", infos)
	}
	if _, err := r.AddFixtures(ctx, "a", body("three", "four")); code(err) != fixtures.CodeTooManyFixtures {
		t.Fatalf("past the fixtures of a scope: %v", err)
	}
	// A counting scope ("c" counts a file fixture's replies) gives its place to a fixture scope.
	files, err := fixtures.Parse(fixtures.OriginFile, "seq.json", []byte(`{"fixtures":[{"name":"seq","match":{"model":"m"},"replies":[{"content":"1"},{"content":"2"}]}]}`), fixtures.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r.cfg.Fixtures.SetFiles(files)
	if n, err := r.count(ctx, "c", fixtures.Counted{Name: "seq", Origin: fixtures.OriginFile, Replies: 2}); err != nil || n != 1 {
		t.Fatalf("count in a counting scope: %d %v", n, err)
	}
	if _, err := r.AddFixtures(ctx, "b", body("x")); err != nil {
		t.Fatalf("a fixture scope could not take a counting scope's place: %v", err)
	}
	if _, err := r.AddFixtures(ctx, "d", body("y")); code(err) != fixtures.CodeTooManyScopes {
		t.Fatalf("past the scopes, every one holding fixtures: %v", err)
	}
	if n, err := r.count(ctx, "e", fixtures.Counted{Name: "seq", Origin: fixtures.OriginFile, Replies: 2}); err != nil || n != 0 {
		t.Fatalf("a counting scope with every place taken by fixture scopes: %d %v, want 0 (first reply)", n, err)
	}
	big := fmt.Sprintf(`{"fixtures":[{"name":"big","reply":{"content":%q}}]}`, strings.Repeat("x", 900))
	if _, err := r.AddFixtures(ctx, "b", []byte(big)); code(err) != fixtures.CodeTooManyFixtures {
		t.Fatalf("past the bytes of all scopes: %v", err)
	}
	if ok, err := r.DropScope(ctx, "a", true); !ok || err != nil {
		t.Fatalf("drop: %v %v", ok, err)
	}
	if _, err := r.AddFixtures(ctx, "d", body("y")); err != nil {
		t.Fatalf("a dropped scope's place and bytes are free again: %v", err)
	}
}

// TestRedisKeysExpire: every key the store writes expires — a scope's, and those across
// scopes that index them (fx, ct, bytes, gen, att, js) —, so an abandoned scope never stays,
// and neither does anything else.
func TestRedisKeysExpire(t *testing.T) {
	ctx := context.Background()
	r, rs := newTestRedis(t, RedisConfig{JournalEntries: 10})
	if _, err := r.AddFixtures(ctx, "kept", body("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddFixtures(ctx, "", body("unscoped")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.count(ctx, "kept", fixtures.Counted{Name: "one", Origin: fixtures.OriginRuntime, Replies: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.count(ctx, "counting", fixtures.Counted{Name: "file", Origin: fixtures.OriginFile, Replies: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextAttempt(ctx, 42, "kept"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextAttempt(ctx, 43, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.TakeQuota(ctx, quota.Key{ID: "q1", Scope: "kept"}, quota.Limits{Requests: 1}, quota.Usage{}, 0); err != nil {
		t.Fatal(err)
	}
	r.RecordCall(ctx, "kept", journal.Entry{RequestID: "req_1", Time: time.Now()})
	r.RecordCall(ctx, "", journal.Entry{RequestID: "req_2", Time: time.Now()})
	if b, err := r.AppendJournal(ctx, nil, "", 0); err != nil || !strings.Contains(string(b), "req_2") {
		t.Fatalf("the unscoped journal: %s %v", b, err)
	}
	c := rs.Client()
	defer c.Close()
	keys := c.Keys(ctx, prefix+"*").Val()
	for _, k := range []string{"fx", "ct", "bytes", "gen", "att", "js", "{kept}:j", "{}:j", "{kept}:att", "{counting}:n", "{kept}:q:q1", "{kept}:qk", "qk"} {
		if !slices.Contains(keys, prefix+k) {
			t.Errorf("%s was not written: %v", prefix+k, keys)
		}
	}
	for _, k := range keys {
		if ttl := c.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("%s does not expire (PTTL %v)", k, ttl)
		}
	}
}

// TestRedisAttemptKeysBound: at most AttemptKeys attempt keys are kept across all scopes, as
// in memory, the least recently seen going first — not a hash of them in every scope.
func TestRedisAttemptKeysBound(t *testing.T) {
	ctx := context.Background()
	const max = 10
	r, rs := newTestRedis(t, RedisConfig{AttemptKeys: max})
	if n, _ := r.NextAttempt(ctx, 1, "first"); n != 1 {
		t.Fatalf("a first attempt: %d", n)
	}
	for i := range 5 * max {
		if _, err := r.NextAttempt(ctx, uint64(100+i), fmt.Sprintf("scope-%d", i)); err != nil {
			t.Fatal(err)
		}
		if i == 4*max {
			if n, _ := r.NextAttempt(ctx, 2, "recent"); n != 1 {
				t.Fatalf("a first attempt: %d", n)
			}
		}
	}
	c := rs.Client()
	defer c.Close()
	fields := 0
	hashes := c.Keys(ctx, prefix+"{*}:att").Val()
	for _, k := range hashes {
		fields += int(c.HLen(ctx, k).Val())
	}
	if len(hashes) > max || fields > 2*max || c.ZCard(ctx, prefix+"att").Val() > max {
		t.Fatalf("past %d attempt keys: %d hashes, %d fields, %d indexed", max, len(hashes), fields, c.ZCard(ctx, prefix+"att").Val())
	}
	if n, _ := r.NextAttempt(ctx, 2, "recent"); n != 2 {
		t.Errorf("a key seen recently is forgotten: attempt %d", n)
	}
	if n, _ := r.NextAttempt(ctx, 1, "first"); n != 1 {
		t.Errorf("the key seen longest ago is kept: attempt %d", n)
	}
	r.AttemptDone(ctx, 2, "recent")
	if _, err := r.DropScope(ctx, "first", false); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.ZRange(ctx, prefix+"att", 0, -1).Val() {
		if strings.HasPrefix(m, "first/") || strings.HasPrefix(m, "recent/") {
			t.Errorf("a key done or dropped stays indexed: %s", m)
		}
	}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// TestRedisJournalBounds: the journal keeps JournalEntries per scope, newest first, and
// JournalScopes named scopes (the least recently written goes first), as in memory.
func TestRedisJournalBounds(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRedis(t, RedisConfig{JournalEntries: 3, JournalScopes: 2})
	start := time.Now()
	for i := range 5 {
		r.RecordCall(ctx, "x", journal.Entry{RequestID: fmt.Sprintf("req_x%d", i), Time: start.Add(time.Duration(i) * time.Millisecond)})
	}
	list := func(scope string) string {
		b, err := r.AppendJournal(ctx, nil, scope, 0)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	waitFor(t, "the last entry written", func() bool { return strings.Contains(list("x"), "req_x4") })
	if got := list("x"); strings.Count(got, "request_id") != 3 || strings.Index(got, "req_x4") > strings.Index(got, "req_x2") || strings.Contains(got, "req_x1") {
		t.Fatalf("scope x keeps its 3 newest, newest first: %s", got)
	}
	r.RecordCall(ctx, "y", journal.Entry{RequestID: "req_y"})
	r.RecordCall(ctx, "z", journal.Entry{RequestID: "req_z"})
	waitFor(t, "z written", func() bool { return strings.Contains(list("z"), "req_z") })
	if got := list("x"); strings.Contains(got, "req_x") {
		t.Fatalf("the least recently written scope stays past JournalScopes: %s", got)
	}
	if got := list("bad scope!"); got != `{"object":"list","scope":"","data":[]}` {
		t.Fatalf("an invalid scope: %s", got)
	}
}

// TestRedisJournalBatchKeepsOrder: calls of several scopes, interleaved and all at one instant,
// are written in batches grouped by scope (one LPUSH a scope); each scope still lists its calls
// newest first, in the order they were recorded, and every entry reads back whole.
func TestRedisJournalBatchKeepsOrder(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRedis(t, RedisConfig{JournalEntries: 1000, JournalScopes: 8})
	at := time.Now() // one time for all: only the list's order can order them
	const each = 300 // more than one batch
	for i := range each {
		for _, s := range []string{"a", "", "b"} {
			r.RecordCall(ctx, s, journal.Entry{RequestID: fmt.Sprintf("req_%s%d", s, i), Time: at, Method: "POST", Route: "/v1/chat/completions",
				Status: 200, DurationMS: float64(i) / 8, SDK: journal.SDK{UserAgent: "ua <&>"}})
		}
	}
	for _, s := range []string{"a", "", "b"} {
		var got struct {
			Data []journal.Entry `json:"data"`
		}
		waitFor(t, "scope "+s+" written", func() bool {
			b, err := r.AppendJournal(ctx, nil, s, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			return len(got.Data) == each
		})
		for k, e := range got.Data {
			i := each - 1 - k
			if e.RequestID != fmt.Sprintf("req_%s%d", s, i) || e.Scope != s || e.DurationMS != float64(i)/8 || e.SDK.UserAgent != "ua <&>" {
				t.Fatalf("scope %q, entry %d of the list: %+v, want req_%s%d", s, k, e, s, i)
			}
		}
	}
}

// TestRedisJournalReadsItsWrites: two replicas on one store; an entry RecordCall filed on one,
// scoped or not, is in the journal the other reads right after it, with nothing waited for
// between them.
func TestRedisJournalReadsItsWrites(t *testing.T) {
	ctx := context.Background()
	a, rs := newTestRedis(t, RedisConfig{JournalEntries: 1000, JournalScopes: 8})
	cfg := a.cfg
	cfg.URL = rs.URL()
	bctx, cancel := context.WithCancel(context.Background())
	b, err := NewRedis(bctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); b.Wait() })
	// Both subscribed to the flushes, with nothing waited for: a replica is counted once its
	// subscription is up, which NewRedis waits for.
	c := rs.Client()
	defer c.Close()
	if n := c.PubSubNumSub(ctx, flushChannel).Val()[flushChannel]; n != 2 {
		t.Fatalf("%d replicas subscribed to the flushes once NewRedis returned, want 2", n)
	}
	for i := range 100 {
		scope := []string{"", "s"}[i%2]
		from, to := []*Redis{a, b}[i%2], []*Redis{b, a}[i%2]
		id := fmt.Sprintf("req_%d", i)
		from.RecordCall(ctx, scope, journal.Entry{RequestID: id, Time: time.Now()})
		got, err := to.AppendJournal(ctx, nil, scope, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), `"`+id+`"`) {
			t.Fatalf("call %d (scope %q): not in the other replica's read right after it: %s", i, scope, got)
		}
	}
}
