package state

import (
	"context"
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
