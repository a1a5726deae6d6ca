package state

import (
	"context"
	"strconv"
)

// Attempts live in one hash per scope, mockgateway:{scope}:att: per request key its count and
// when it was last seen ("<key>:t", the store's clock), so that a count is forgotten AttemptTTL
// after its last attempt as in memory. The hash expires AttemptTTL after its last write. A scope
// holds at most AttemptKeys keys: a new key beyond that forgets the scope's counts and starts
// again (in memory the key seen longest ago goes; a scope that many requests retrying at once
// is past what a test needs).
var attemptScript = newScript(luaNow + `
local k, ttl, max = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local last = redis.call('HGET', KEYS[1], k .. ':t')
local c = 0
if last and now - tonumber(last) <= ttl then c = tonumber(redis.call('HGET', KEYS[1], k) or '0') end
if not last and redis.call('HLEN', KEYS[1]) >= 2 * max then redis.call('DEL', KEYS[1]) end
c = c + 1
redis.call('HSET', KEYS[1], k, c, k .. ':t', now)
redis.call('PEXPIRE', KEYS[1], ttl)
return c
`)

// NextAttempt counts the attempt in the store: a retry on another replica is attempt 2.
func (r *Redis) NextAttempt(ctx context.Context, k uint64, scope string) (int, error) {
	if r.cfg.AttemptKeys < 1 {
		return 1, nil
	}
	var n int64
	err := r.call(ctx, "attempt", func(ctx context.Context) (err error) {
		n, err = attemptScript.Run(ctx, r.client, []string{key(scope, "att")}, strconv.FormatUint(k, 16), ms(r.cfg.AttemptTTL), r.cfg.AttemptKeys).Int64()
		return err
	})
	return int(n), err
}

// AttemptDone forgets the key; a failure only leaves a count that expires with AttemptTTL.
func (r *Redis) AttemptDone(ctx context.Context, k uint64, scope string) {
	if r.cfg.AttemptKeys < 1 {
		return
	}
	h := strconv.FormatUint(k, 16)
	_ = r.call(ctx, "attempt", func(ctx context.Context) error {
		return r.client.HDel(ctx, key(scope, "att"), h, h+":t").Err()
	})
}
