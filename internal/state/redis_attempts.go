package state

import (
	"context"
	"strconv"
)

// Attempts live in one hash per scope, mockgateway:{scope}:att: per request key its count and
// when it was last seen ("<key>:t", the store's clock), so that a count is forgotten AttemptTTL
// after its last attempt as in memory. The hash expires AttemptTTL after its last write. As in
// memory, at most AttemptKeys keys are kept across all scopes, the least recently seen going
// first: mockgateway:att (a sorted set: "<scope>/<key>" by when it was last seen, in
// microseconds so that no two scripts tie and the order is the order they ran in; expiring
// AttemptTTL after its last write) indexes them, and the script that counts a new key forgets
// the expired ones and those past the bound, in their scopes' hashes too. A scope id holds no
// '/', so the member's last '/' ends its scope.
var attemptScript = newScript(luaNow + `
local P, id, k, ttl, max = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local idx, m = P .. 'att', id .. '/' .. k
local us, old = tonumber(t[1]) * 1000000 + tonumber(t[2]), '(' .. string.format('%d', (now - ttl) * 1000)
local function forget(members)
  for _, o in ipairs(members) do
    local s, ok = string.match(o, '^(.*)/([^/]*)$')
    if s then redis.call('HDEL', P .. '{' .. s .. '}:att', ok, ok .. ':t') end
  end
end
local last = redis.call('HGET', KEYS[1], k .. ':t')
local c = 0
if last and now - tonumber(last) <= ttl then c = tonumber(redis.call('HGET', KEYS[1], k) or '0') end
if not redis.call('ZSCORE', idx, m) then
  forget(redis.call('ZRANGEBYSCORE', idx, '-inf', old))
  redis.call('ZREMRANGEBYSCORE', idx, '-inf', old)
  local extra = redis.call('ZCARD', idx) - max + 1
  if extra > 0 then
    forget(redis.call('ZRANGE', idx, 0, extra - 1))
    redis.call('ZREMRANGEBYRANK', idx, 0, extra - 1)
  end
end
c = c + 1
redis.call('HSET', KEYS[1], k, c, k .. ':t', now)
redis.call('ZADD', idx, string.format('%d', us), m)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', idx, ttl)
return c
`)

// NextAttempt counts the attempt in the store: a retry on another replica is attempt 2.
func (r *Redis) NextAttempt(ctx context.Context, k uint64, scope string) (int, error) {
	if r.cfg.AttemptKeys < 1 {
		return 1, nil
	}
	var n int64
	err := r.call(ctx, "attempt", func(ctx context.Context) (err error) {
		n, err = attemptScript.Run(ctx, r.client, []string{key(scope, "att"), prefix + "att"}, prefix, scope, strconv.FormatUint(k, 16), ms(r.cfg.AttemptTTL), r.cfg.AttemptKeys).Int64()
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
		p := r.client.TxPipeline()
		p.HDel(ctx, key(scope, "att"), h, h+":t")
		p.ZRem(ctx, prefix+"att", scope+"/"+h)
		_, err := p.Exec(ctx)
		return err
	})
}
