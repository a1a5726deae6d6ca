package state

import (
	"context"
	"testing"
	"time"

	"mockgateway/internal/fixtures"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
)

// quotaStep is one call on a store's quota: a Take (settle 0) or a Settle of settle tokens, and
// what the Take's status must say.
type quotaStep struct {
	key      string
	tokens   int // its input
	out      int // its output budget
	ahead    time.Duration
	settle   int
	tokenly  bool // under tokensOnly
	io       bool // under inputOutput, its buckets checked
	in, outb quota.Bucket
	refused  quota.Kind
	requests quota.Bucket // Limit unchecked
	tok      quota.Bucket // Limit unchecked
	retry    time.Duration
}

// The window is long, so that the real clock of the Redis store moves the buckets by a
// fraction of a token while the table runs: both stores must give the same results.
var (
	quotaTableLimits = quota.Limits{Requests: 2, Tokens: 1000, Window: 10000 * time.Second}
	tokensOnly       = quota.Limits{Tokens: 1000, Window: 10000 * time.Second}
	inputOutput      = quota.Limits{InputTokens: 1000, OutputTokens: 500, Window: 10000 * time.Second}
)

const hs = 100 * time.Second // a hundredth of the window

// quotaTable: a request taken ahead is admitted only if the buckets will hold it by then, and
// is charged now, so a request of now sees the debt — refused until it has refilled, its
// retry and reset counting it, its remaining never below 0; debt is at most one bucket; a
// refund reduces a debt and a correction never makes one.
var quotaTable = []quotaStep{
	{key: "a", tokens: 300, requests: quota.Bucket{Remaining: 1, Reset: 50 * hs}, tok: quota.Bucket{Remaining: 700, Reset: 30 * hs}},
	{key: "a", tokens: 300, requests: quota.Bucket{Remaining: 0, Reset: 100 * hs}, tok: quota.Bucket{Remaining: 400, Reset: 60 * hs}},
	{key: "a", tokens: 300, refused: quota.Requests, retry: 50 * hs, requests: quota.Bucket{Reset: 100 * hs}, tok: quota.Bucket{Remaining: 400, Reset: 60 * hs}},
	// Taken 50 ahead: the bucket holds one request by then; it is charged now (requests at -1).
	// What it sees is the bucket at +50: none left, full in 100; tokens 400+500-300.
	{key: "a", tokens: 300, ahead: 50 * hs, requests: quota.Bucket{Remaining: 0, Reset: 100 * hs}, tok: quota.Bucket{Remaining: 600, Reset: 40 * hs}},
	// A request of now sees the debt: one request is 100 away, the bucket full in 150.
	{key: "a", tokens: 300, refused: quota.Requests, retry: 100 * hs, requests: quota.Bucket{Reset: 150 * hs}, tok: quota.Bucket{Remaining: 100, Reset: 90 * hs}},
	// 50 ahead is no longer enough: at +50 the bucket is at 0, one request 50 later.
	{key: "a", tokens: 0, ahead: 50 * hs, refused: quota.Requests, retry: 50 * hs, requests: quota.Bucket{Reset: 100 * hs}, tok: quota.Bucket{Remaining: 600, Reset: 40 * hs}},
	{key: "a", tokens: 0, ahead: 100 * hs, requests: quota.Bucket{Reset: 100 * hs}, tok: quota.Bucket{Remaining: 1000}},
	// At most one bucket of debt: requests at -2 now, and however far ahead it would come, a
	// take that would owe more is refused (what it sees is the bucket at +300, full).
	{key: "a", tokens: 0, ahead: 300 * hs, refused: quota.Requests, requests: quota.Bucket{Remaining: 2}, tok: quota.Bucket{Remaining: 1000}},
	{key: "a", tokens: 0, refused: quota.Requests, retry: 150 * hs, requests: quota.Bucket{Reset: 200 * hs}, tok: quota.Bucket{Remaining: 100, Reset: 90 * hs}},

	{key: "t", tokenly: true, tokens: 800, tok: quota.Bucket{Remaining: 200, Reset: 80 * hs}},
	{key: "t", tokenly: true, tokens: 800, refused: quota.Tokens, retry: 60 * hs, tok: quota.Bucket{Remaining: 200, Reset: 80 * hs}},
	{key: "t", tokenly: true, tokens: 800, ahead: 60 * hs, tok: quota.Bucket{Remaining: 0, Reset: 100 * hs}},
	{key: "t", tokenly: true, tokens: 100, refused: quota.Tokens, retry: 70 * hs, tok: quota.Bucket{Remaining: 0, Reset: 160 * hs}},
	{key: "t", tokenly: true, settle: -300}, // the reservation produced 500 of its 800: tokens at -300
	{key: "t", tokenly: true, tokens: 100, refused: quota.Tokens, retry: 40 * hs, tok: quota.Bucket{Remaining: 0, Reset: 130 * hs}},
	{key: "t", tokenly: true, settle: 1000}, // a correction takes no more from a bucket in debt
	{key: "t", tokenly: true, tokens: 100, refused: quota.Tokens, retry: 40 * hs, tok: quota.Bucket{Remaining: 0, Reset: 130 * hs}},
	{key: "t", tokenly: true, settle: -1300},
	{key: "t", tokenly: true, tokens: 100, tok: quota.Bucket{Remaining: 900, Reset: 10 * hs}},
	// Too large: refused at once, whatever ahead (the bucket it sees is the one at +1000: full).
	{key: "t", tokenly: true, tokens: 1001, ahead: 1000 * hs, refused: quota.Tokens, tok: quota.Bucket{Remaining: 1000}},

	// Input and output: each its own bucket, the output corrected by a settle.
	{key: "io", io: true, tokens: 300, out: 200, in: quota.Bucket{Remaining: 700, Reset: 30 * hs}, outb: quota.Bucket{Remaining: 300, Reset: 40 * hs}},
	{key: "io", io: true, tokens: 100, out: 400, refused: quota.OutputTokens, retry: 20 * hs, in: quota.Bucket{Remaining: 700, Reset: 30 * hs}, outb: quota.Bucket{Remaining: 300, Reset: 40 * hs}},
	{key: "io", io: true, tokens: 100, out: 400, ahead: 20 * hs, in: quota.Bucket{Remaining: 800, Reset: 20 * hs}, outb: quota.Bucket{Remaining: 0, Reset: 100 * hs}},
	{key: "io", io: true, settle: -300}, // the reservation produced 100 of its 400: output at 200
	{key: "io", io: true, out: 200, in: quota.Bucket{Remaining: 600, Reset: 40 * hs}, outb: quota.Bucket{Remaining: 0, Reset: 100 * hs}},
	{key: "io", io: true, tokens: 1001, refused: quota.InputTokens, in: quota.Bucket{Remaining: 600, Reset: 40 * hs}, outb: quota.Bucket{Remaining: 0, Reset: 100 * hs}},
}

// runQuotaTable runs quotaTable on s, durations within tolerance (the store's clock runs).
func runQuotaTable(t *testing.T, s Store, tolerance time.Duration) {
	t.Helper()
	ctx := context.Background()
	// Within a millisecond above: the store computes in float milliseconds.
	near := func(got, want time.Duration) bool { return got <= want+time.Millisecond && got >= want-tolerance }
	for i, step := range quotaTable {
		l := quotaTableLimits
		switch {
		case step.tokenly:
			l = tokensOnly
		case step.io:
			l = inputOutput
		}
		if step.settle != 0 {
			s.SettleQuota(ctx, quota.Key{ID: step.key}, l, quota.Usage{Output: step.settle})
			continue
		}
		st, err := s.TakeQuota(ctx, quota.Key{ID: step.key}, l, quota.Usage{Input: step.tokens, Output: step.out}, step.ahead)
		if err != nil {
			t.Fatal(err)
		}
		if st.Refused != step.refused || st.Requests.Remaining != step.requests.Remaining || st.Tokens.Remaining != step.tok.Remaining ||
			!near(st.RetryAfter, step.retry) || !near(st.Requests.Reset, step.requests.Reset) || !near(st.Tokens.Reset, step.tok.Reset) ||
			st.InputTokens.Remaining != step.in.Remaining || !near(st.InputTokens.Reset, step.in.Reset) ||
			st.OutputTokens.Remaining != step.outb.Remaining || !near(st.OutputTokens.Reset, step.outb.Reset) {
			t.Fatalf("step %d %+v:\ngot %+v", i, step, st)
		}
	}
}

// TestQuotaTakeAheadMemory: the quota table on the memory store.
func TestQuotaTakeAheadMemory(t *testing.T) {
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	runQuotaTable(t, &Memory{Quotas: quota.NewBuckets(10, func() time.Time { return at })}, 0)
}

// TestQuotaTakeAheadRedis: the same table on the Redis store's script.
func TestQuotaTakeAheadRedis(t *testing.T) {
	r, _ := newTestRedis(t, RedisConfig{})
	runQuotaTable(t, r, 5*time.Second)
}

// checkDropScopeQuotas: DropScope forgets the scope's buckets (and says it had something to
// forget), and only its.
func checkDropScopeQuotas(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	l := quota.Limits{Requests: 1}
	for _, k := range []quota.Key{{ID: "a", Scope: "s"}, {ID: "b", Scope: "s"}, {ID: "c", Scope: "other"}} {
		if st, err := s.TakeQuota(ctx, k, l, quota.Usage{}, 0); err != nil || st.Refused != "" {
			t.Fatalf("%v: %+v %v", k, st, err)
		}
	}
	if had, err := s.DropScope(ctx, "s", false); err != nil || !had {
		t.Fatalf("DropScope: %v %v, want true", had, err)
	}
	for _, k := range []quota.Key{{ID: "a", Scope: "s"}, {ID: "b", Scope: "s"}} {
		if st, _ := s.TakeQuota(ctx, k, l, quota.Usage{}, 0); st.Refused != "" {
			t.Errorf("%v after DropScope: %+v", k, st)
		}
	}
	if st, _ := s.TakeQuota(ctx, quota.Key{ID: "c", Scope: "other"}, l, quota.Usage{}, 0); st.Refused != quota.Requests {
		t.Errorf("another scope's bucket: %+v", st)
	}
	if had, _ := s.DropScope(ctx, "none", false); had {
		t.Error("DropScope of a scope with nothing says it had something")
	}
}

func TestDropScopeQuotasMemory(t *testing.T) {
	checkDropScopeQuotas(t, &Memory{Fixtures: fixtures.NewStore(fixtures.StoreConfig{}), Attempts: simulation.NewAttemptCounter(10, time.Hour, time.Now), Quotas: quota.NewBuckets(10, time.Now)})
}

// TestDropScopeQuotasRedis: the same in the store, whose keys of the scope's quotas are gone.
func TestDropScopeQuotasRedis(t *testing.T) {
	r, rs := newTestRedis(t, RedisConfig{})
	ctx := context.Background()
	checkDropScopeQuotas(t, r)
	if _, err := r.DropScope(ctx, "s", false); err != nil {
		t.Fatal(err)
	}
	if n := rs.Client().Exists(ctx, quotaIndex("s"), quotaKey(&quota.Key{ID: "a", Scope: "s"}), quotaKey(&quota.Key{ID: "b", Scope: "s"})).Val(); n != 0 {
		t.Errorf("%d keys of the dropped scope's quotas left", n)
	}
	if ttl := rs.Client().PTTL(ctx, quotaIndex("other")).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the index expires in %v, want with its buckets", ttl)
	}
}

// checkListQuotas: ListQuotas lists a scope's keys and only its, replenished to now, those
// that will be full last first, at most limit, with their model, organization and limits —
// not a key whose buckets are all full.
func checkListQuotas(t *testing.T, s Store, tolerance time.Duration) {
	t.Helper()
	ctx := context.Background()
	a := quota.Key{ID: "a", Model: "m1", Scope: "s", Org: quota.Org{1}}
	la := quota.Limits{Requests: 2, Tokens: 1000, InputTokens: 2000, Window: 10000 * time.Second}
	b := quota.Key{ID: "b", Model: "m2", Scope: "s", Org: quota.Org{2}}
	lb := quota.Limits{Daily: 10}
	take := func(k quota.Key, l quota.Limits, tokens int) {
		if _, err := s.TakeQuota(ctx, k, l, quota.Usage{Input: tokens}, 0); err != nil {
			t.Fatal(err)
		}
	}
	take(a, la, 300)
	for range 3 {
		take(b, lb, 0)
	}
	take(quota.Key{ID: "full", Model: "m1", Scope: "s"}, quota.Limits{Tokens: 10}, 11) // too large: takes nothing
	take(quota.Key{ID: "c", Model: "m3", Scope: "other"}, la, 0)
	take(quota.Key{ID: "d", Model: "m4"}, la, 0)

	vs, err := s.ListQuotas(ctx, "s", 10)
	if err != nil || len(vs) != 2 {
		t.Fatalf("scope s: %+v %v, want 2", vs, err)
	}
	// Within a millisecond above: the store computes in float milliseconds.
	near := func(got, want time.Duration) bool { return got <= want+time.Millisecond && got >= want-tolerance }
	vb, va := vs[0], vs[1]
	if vb.Model != "m2" || vb.Scope != "s" || vb.Org != b.Org.String() || vb.Limits != (quota.Limits{Daily: 10, Window: time.Minute}) ||
		vb.Daily.Limit != 10 || vb.Daily.Remaining != 7 || !near(vb.Daily.Reset, 25920*time.Second) || vb.Requests != (quota.Bucket{}) {
		t.Errorf("the first, full last: %+v", vb)
	}
	if va.Model != "m1" || va.Org != a.Org.String() || va.Limits != la || va.Requests.Limit != 2 || va.Requests.Remaining != 1 ||
		!near(va.Requests.Reset, 5000*time.Second) || va.Tokens.Remaining != 700 || !near(va.Tokens.Reset, 3000*time.Second) ||
		va.InputTokens.Limit != 2000 || va.InputTokens.Remaining != 1700 || !near(va.InputTokens.Reset, 1500*time.Second) || va.OutputTokens != (quota.Bucket{}) {
		t.Errorf("the second: %+v", va)
	}
	if vs, _ := s.ListQuotas(ctx, "s", 1); len(vs) != 1 || vs[0].Model != "m2" {
		t.Errorf("limit 1: %+v", vs)
	}
	if vs, _ := s.ListQuotas(ctx, "", 10); len(vs) != 1 || vs[0].Model != "m4" || vs[0].Scope != "" {
		t.Errorf("the unscoped calls: %+v", vs)
	}
	if vs, _ := s.ListQuotas(ctx, "s", 0); len(vs) != 0 {
		t.Errorf("limit 0: %+v", vs)
	}
	if _, err := s.DropScope(ctx, "s", false); err != nil {
		t.Fatal(err)
	}
	if vs, _ := s.ListQuotas(ctx, "s", 10); len(vs) != 0 {
		t.Errorf("after DropScope: %+v", vs)
	}
}

func TestListQuotasMemory(t *testing.T) {
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	checkListQuotas(t, &Memory{Fixtures: fixtures.NewStore(fixtures.StoreConfig{}), Attempts: simulation.NewAttemptCounter(10, time.Hour, time.Now),
		Quotas: quota.NewBuckets(10, func() time.Time { return at })}, 0)
}

func TestListQuotasRedis(t *testing.T) {
	r, _ := newTestRedis(t, RedisConfig{})
	checkListQuotas(t, r, 5*time.Second)
}

// checkReservationBounded: takes far ahead — further than the window, so that each bucket
// would be full by then — owe at most one whole bucket: past that debt they are refused,
// not admitted for nothing.
func checkReservationBounded(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	k, l := quota.Key{ID: "ahead"}, quota.Limits{Requests: 1, Window: time.Second}
	if st, err := s.TakeQuota(ctx, k, l, quota.Usage{}, 0); err != nil || st.Refused != "" {
		t.Fatalf("the first: %+v %v", st, err)
	}
	admitted := 0
	for range 30 {
		st, err := s.TakeQuota(ctx, k, l, quota.Usage{}, 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if st.Refused == "" {
			admitted++
		}
	}
	if admitted != 1 {
		t.Errorf("%d of 30 takes 3s ahead admitted on rpm 1 per second, want 1 (one bucket of debt)", admitted)
	}
}

func TestReservationBoundedMemory(t *testing.T) {
	at := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	checkReservationBounded(t, &Memory{Quotas: quota.NewBuckets(10, func() time.Time { return at })})
}

func TestReservationBoundedRedis(t *testing.T) {
	r, _ := newTestRedis(t, RedisConfig{})
	checkReservationBounded(t, r)
}
