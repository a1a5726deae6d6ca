package state

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"mockgateway/internal/quota"
)

// TestRedisQuotaMatchesMemory: the store's script does the buckets' arithmetic as
// quota.Buckets does — counting down, refusing with the same retry, settling, too large —
// and its key expires once the buckets would be full again.
func TestRedisQuotaMatchesMemory(t *testing.T) {
	ctx := context.Background()
	r, rs := newTestRedis(t, RedisConfig{})
	l := quota.Limits{Requests: 2, Tokens: 1000, Window: time.Minute}
	for i, want := range []struct {
		remaining, tokens int
		refused           quota.Kind
	}{{1, 700, ""}, {0, 400, ""}, {0, 400, quota.Requests}} {
		st, err := r.TakeQuota(ctx, quota.Key{ID: "k"}, l, quota.Usage{Input: 300}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Requests.Remaining != want.remaining || st.Tokens.Remaining != want.tokens || st.Refused != want.refused {
			t.Fatalf("take %d: %+v", i, st)
		}
		if st.Refused != "" && (st.RetryAfter < 29*time.Second || st.RetryAfter > 30*time.Second) {
			t.Errorf("retry after %v, want about 30s", st.RetryAfter)
		}
	}
	r.SettleQuota(ctx, quota.Key{ID: "k"}, l, quota.Usage{Output: -250})
	st, err := r.TakeQuota(ctx, quota.Key{ID: "other"}, l, quota.Usage{Input: 1001}, 0)
	if err != nil || st.Refused != quota.Tokens || !st.TooLarge {
		t.Errorf("too large: %+v %v", st, err)
	}
	ttl := rs.Client().PTTL(ctx, quotaKey(&quota.Key{ID: "k"})).Val()
	if ttl <= 0 || ttl > time.Minute {
		t.Errorf("the key expires in %v, want within the window", ttl)
	}
	if v := rs.Client().HGet(ctx, quotaKey(&quota.Key{ID: "k"}), "t").Val(); v[:3] != "650" {
		t.Errorf("tokens after the refund: %s, want 650", v)
	}
}

// TestRedisQuotaKeysBound: at most QuotaKeys quota keys are kept in the store across all
// scopes, as in memory — however many client keys one scope or many scopes mint — and past it
// the key that will be full soonest goes first (it loses the least).
func TestRedisQuotaKeysBound(t *testing.T) {
	ctx := context.Background()
	const max = 10
	r, rs := newTestRedis(t, RedisConfig{QuotaKeys: max})
	l := quota.Limits{Requests: 2, Window: time.Minute}
	drained := quota.Key{ID: "drained", Scope: "a"}
	for range 2 {
		if _, err := r.TakeQuota(ctx, drained, l, quota.Usage{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 * max {
		if _, err := r.TakeQuota(ctx, quota.Key{ID: fmt.Sprintf("k%d", i), Scope: "a"}, l, quota.Usage{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 * max {
		if _, err := r.TakeQuota(ctx, quota.Key{ID: "k", Scope: fmt.Sprintf("s%d", i)}, l, quota.Usage{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	c := rs.Client()
	defer c.Close()
	hashes := c.Keys(ctx, prefix+"{*}:q:*").Val()
	indexed := 0
	for _, k := range c.Keys(ctx, prefix+"{*}:qk").Val() {
		indexed += int(c.ZCard(ctx, k).Val())
	}
	if len(hashes) > max || indexed > max {
		t.Fatalf("past %d quota keys: %d hashes, %d indexed in their scopes", max, len(hashes), indexed)
	}
	if c.Exists(ctx, quotaKey(&drained)).Val() != 1 {
		t.Errorf("the key that will be full last is forgotten")
	}
	st, err := r.TakeQuota(ctx, drained, l, quota.Usage{}, 0)
	if err != nil || st.Refused != quota.Requests {
		t.Errorf("the drained key starts full again: %+v %v", st, err)
	}
}

// TestRedisDropScopeQuotaBatches: a scope with more quota keys than one script deletes is
// dropped wholly, in several scripts, none of which deletes more than quotaDropBatch keys.
func TestRedisDropScopeQuotaBatches(t *testing.T) {
	ctx := context.Background()
	n := 2*quotaDropBatch + 7
	r, rs := newTestRedis(t, RedisConfig{QuotaKeys: 10 * quotaDropBatch})
	l := quota.Limits{Requests: 5, Window: time.Minute}
	for i := range n {
		if _, err := r.TakeQuota(ctx, quota.Key{ID: fmt.Sprintf("k%d", i), Scope: "big"}, l, quota.Usage{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.TakeQuota(ctx, quota.Key{ID: "k", Scope: "other"}, l, quota.Usage{}, 0); err != nil {
		t.Fatal(err)
	}
	c := rs.Client()
	defer c.Close()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	had, err := r.DropScope(ctx, "big", false)
	if err != nil || !had {
		t.Fatalf("drop: %v %v", had, err)
	}
	if left := c.Keys(ctx, prefix+"{big}:q*").Val(); len(left) > 0 {
		t.Fatalf("%d keys of the dropped scope are left", len(left))
	}
	if c.Exists(ctx, quotaKey(&quota.Key{ID: "k", Scope: "other"})).Val() != 1 {
		t.Errorf("another scope's key is dropped")
	}
	scripts := 0
	for _, line := range strings.Split(c.Info(ctx, "commandstats").Val(), "\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if v, ok := strings.CutPrefix(line, cmd); ok {
				k, _ := strconv.Atoi(v[:strings.IndexByte(v, ',')])
				scripts += k
			}
		}
	}
	if want := (n + quotaDropBatch - 1) / quotaDropBatch; scripts < want {
		t.Errorf("%d keys dropped in %d scripts, want at least %d of at most %d keys", n, scripts, want, quotaDropBatch)
	}
}

// TestRedisQuotaKeysLowered: a replica started with a lower --quota-keys than the store's
// index holds forgets at most quotaDropBatch keys per new key, and so reaches its bound over
// the next few new keys rather than in one long script.
func TestRedisQuotaKeysLowered(t *testing.T) {
	ctx := context.Background()
	n := 2*quotaDropBatch + 50
	r, rs := newTestRedis(t, RedisConfig{QuotaKeys: 10 * quotaDropBatch})
	l := quota.Limits{Requests: 5, Window: time.Minute}
	for i := range n {
		if _, err := r.TakeQuota(ctx, quota.Key{ID: fmt.Sprintf("k%d", i), Scope: "a"}, l, quota.Usage{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	cfg := r.cfg
	cfg.QuotaKeys = 10
	lctx, cancel := context.WithCancel(ctx)
	low, err := NewRedis(lctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); low.Wait() }()
	c := rs.Client()
	defer c.Close()
	for i := 0; ; i++ {
		before := c.ZCard(ctx, quotaKeys).Val()
		if _, err := low.TakeQuota(ctx, quota.Key{ID: fmt.Sprintf("new%d", i), Scope: "b"}, l, quota.Usage{}, 0); err != nil {
			t.Fatal(err)
		}
		after := c.ZCard(ctx, quotaKeys).Val()
		if before-after+1 > quotaDropBatch {
			t.Fatalf("one new key forgot %d keys, more than %d", before-after+1, quotaDropBatch)
		}
		if after <= 10 {
			break
		}
		if i > n/quotaDropBatch+1 {
			t.Fatalf("%d keys after %d new ones, want at most 10", after, i+1)
		}
	}
	if hashes := c.Keys(ctx, prefix+"{*}:q:*").Val(); len(hashes) > 10 {
		t.Errorf("%d hashes, want at most 10", len(hashes))
	}
}
