package state

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"

	"mockgateway/internal/quota"
)

// A quota key's buckets live in one hash under its scope, mockgateway:{scope}:q:<id> (the id
// is a hash already: of the model, the client key, the scope and the limits): each bucket's
// level ("r", "t", "d", "i", "o": requests, tokens, daily, input and output tokens), when they
// were last replenished ("at", the store's clock), and what a listing shows of them — the
// model ("model"), the organization ("org", in hex) and the limits ("R", "T", "D", "I", "O",
// and "W" the window in ms). The scope's index, mockgateway:{scope}:qk, a sorted set of its
// ids by when their hash expires, is how a scope's buckets are listed and forgotten with it,
// without a SCAN; it expires with the last of them, and each take drops the ids whose hash has
// expired. The arithmetic is internal/quota's (refill, take, settle, clamp), here in Lua so
// that replicas draw from one bucket atomically: KEYS the hash and the index; ARGV the five
// sizes in that order, the window (ms), the input and the output tokens, "1" to take ("0" to
// settle), how far ahead the request comes (ms), the id, the model and the organization. The
// hash expires once every bucket would be full again, when it means nothing (buckets all full
// are not written).
//
// As in memory, at most QuotaKeys keys are kept across all scopes — a scope is any a client
// names, so a bound per scope would bound nothing: mockgateway:qk (KEYS[3], a sorted set of
// "<scope>/<id>" by when each hash expires, expiring with the last of them) indexes them all,
// and the script that writes a new key forgets the expired ones, then, past the bound, those
// that will be full soonest (they lose the least), from their scopes' indexes too — at most
// quotaDropBatch of each, so that no script's work grows with the index (a bound lowered since
// the index was filled is reached over the next new keys): ARGV the prefix, the scope,
// QuotaKeys and that batch after the others. A scope id holds no '/', nor does an id.
var quotaScript = newScript(luaNow + `
local size, win = {}, tonumber(ARGV[6])
for i = 1, 5 do size[i] = tonumber(ARGV[i]) end
local period = {win, win, 86400000, win, win}
local input, output, take, ahead = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9] == '1', tonumber(ARGV[10])
local names = {'r', 't', 'd', 'i', 'o'}
local v = redis.call('HMGET', KEYS[1], 'r', 't', 'd', 'i', 'o', 'at')
local last = tonumber(v[6])
local lv = {}
for i = 1, 5 do
  local l = tonumber(v[i])
  if l == nil or last == nil then l = size[i]
  elseif now > last then l = math.min(size[i], l + size[i] * (now - last) / period[i]) end
  lv[i] = l
end
local refused, large = 0, 0
if take then
  local need = {1, input + output, 1, input, output}
  for _, i in ipairs({2, 4, 5}) do
    if size[i] > 0 and need[i] > size[i] then refused, large = i, 1; break end
  end
  if refused == 0 then
    for i = 1, 5 do
      if size[i] > 0 then
        local at = lv[i]
        if ahead > 0 then at = math.min(size[i], at + size[i] * ahead / period[i]) end
        if at < need[i] or lv[i] - need[i] < -size[i] then refused = i; break end
      end
    end
    if refused == 0 then for i = 1, 5 do if size[i] > 0 then lv[i] = lv[i] - need[i] end end end
  end
else
  lv[2] = math.max(math.min(0, lv[2]), lv[2] - (input + output))
  lv[5] = math.max(math.min(0, lv[5]), lv[5] - output)
end
local f = function(x) return string.format('%.17g', x) end
local out = {refused - 1, large}
local ttl = 0
local set = {'at', now, 'model', ARGV[12], 'org', ARGV[13], 'R', size[1], 'T', size[2], 'D', size[3], 'I', size[4], 'O', size[5], 'W', win}
for i = 1, 5 do
  out[#out + 1] = f(lv[i])
  lv[i] = math.max(-size[i], math.min(size[i], lv[i]))
  if size[i] > 0 then ttl = math.max(ttl, math.ceil((size[i] - lv[i]) / size[i] * period[i])) end
  set[#set + 1] = names[i]
  set[#set + 1] = f(lv[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local P, m, max, batch = ARGV[14], ARGV[15] .. '/' .. ARGV[11], tonumber(ARGV[16]), tonumber(ARGV[17])
if ttl == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[11])
  redis.call('ZREM', KEYS[3], m)
  return out
end
if not redis.call('ZSCORE', KEYS[3], m) then
  local function forget(members)
    for _, o in ipairs(members) do
      local s, id = string.match(o, '^(.*)/([^/]*)$')
      if s then
        redis.call('DEL', P .. '{' .. s .. '}:q:' .. id)
        redis.call('ZREM', P .. '{' .. s .. '}:qk', id)
      end
    end
  end
  local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, batch)
  forget(expired)
  if #expired > 0 then redis.call('ZREM', KEYS[3], unpack(expired)) end
  local extra = math.min(redis.call('ZCARD', KEYS[3]) - max + 1, batch)
  if extra > 0 then
    forget(redis.call('ZRANGE', KEYS[3], 0, extra - 1))
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, extra - 1)
  end
end
redis.call('HSET', KEYS[1], unpack(set))
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[11])
redis.call('ZADD', KEYS[3], now + ttl, m)
for k = 2, 3 do
  if redis.call('PTTL', KEYS[k]) < ttl then redis.call('PEXPIRE', KEYS[k], ttl) end
end
return out
`)

func quotaKey(k *quota.Key) string { return key(k.Scope, "q:"+k.ID) }

// quotaIndex is the key of a scope's index of its quota keys.
func quotaIndex(scope string) string { return key(scope, "qk") }

// quotaKeys is the key of the index of every scope's quota keys, which bounds them.
const quotaKeys = prefix + "qk"

// TakeQuota draws from the buckets in the store, as if the request came ahead after now
// (quota.Buckets.Take): every replica draws from the same ones.
func (r *Redis) TakeQuota(ctx context.Context, k quota.Key, l quota.Limits, u quota.Usage, ahead time.Duration) (quota.Status, error) {
	var st quota.Status
	err := r.call(ctx, "quota", func(ctx context.Context) error {
		res, err := r.runQuota(ctx, &k, &l, u, true, ahead)
		if err != nil {
			return err
		}
		refused, _ := res[0].(int64)
		large, _ := res[1].(int64)
		var lv quota.Levels
		for i := range lv {
			s, _ := res[2+i].(string)
			lv[i], _ = strconv.ParseFloat(s, 64)
		}
		st = quota.StatusOf(&l, lv, int(refused), large == 1, u, ahead)
		return nil
	})
	return st, err
}

// SettleQuota corrects the token buckets in the store; a failure only leaves the admission's
// estimate, which the buckets replenish like any other.
func (r *Redis) SettleQuota(ctx context.Context, k quota.Key, l quota.Limits, delta quota.Usage) {
	if l.Tokens == 0 && l.OutputTokens == 0 || delta == (quota.Usage{}) {
		return
	}
	_ = r.call(ctx, "quota", func(ctx context.Context) error {
		_, err := r.runQuota(ctx, &k, &l, delta, false, 0)
		return err
	})
}

func (r *Redis) runQuota(ctx context.Context, k *quota.Key, l *quota.Limits, u quota.Usage, take bool, ahead time.Duration) ([]any, error) {
	t := "0"
	if take {
		t = "1"
	}
	return quotaScript.Run(ctx, r.client, []string{quotaKey(k), quotaIndex(k.Scope), quotaKeys},
		l.Requests, l.Tokens, l.Daily, l.InputTokens, l.OutputTokens, l.Period().Milliseconds(),
		u.Input, u.Output, t, strconv.FormatFloat(float64(ahead)/float64(time.Millisecond), 'g', -1, 64),
		k.ID, k.Model, hex.EncodeToString(k.Org[:]), prefix, k.Scope, max(1, r.cfg.QuotaKeys), quotaDropBatch).Slice()
}

// listQuotaScript: KEYS the scope's index; ARGV the prefix of its hashes, the limit. It answers
// the store's clock, then for each key (those that will be full last first) its id, and its
// fields in quotaFields' order.
var listQuotaScript = newScript(luaNow + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {now}
for _, id in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  local v = redis.call('HMGET', ARGV[1] .. id, 'at', 'model', 'org', 'W', 'R', 'T', 'D', 'I', 'O', 'r', 't', 'd', 'i', 'o')
  if v[1] then
    out[#out + 1] = id
    for i = 1, #v do out[#out + 1] = v[i] or '' end
  end
end
return out
`)

// quotaFields is how many fields listQuotaScript answers for each key, its id included.
const quotaFields = 15

// ListQuotas reads the scope's index and the hashes it names in one script.
func (r *Redis) ListQuotas(ctx context.Context, scope string, limit int) ([]quota.View, error) {
	if limit < 1 {
		return nil, nil
	}
	var res []any
	err := r.call(ctx, "quota", func(ctx context.Context) (err error) {
		res, err = listQuotaScript.Run(ctx, r.client, []string{quotaIndex(scope)}, key(scope, "q:"), limit).Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	now, _ := res[0].(int64)
	var vs []quota.View
	for row := res[1:]; len(row) >= quotaFields; row = row[quotaFields:] {
		f := func(i int) string { s, _ := row[i].(string); return s }
		n := func(i int) int { v, _ := strconv.Atoi(f(i)); return v }
		k := quota.Key{ID: f(0), Model: f(2), Scope: scope}
		_, _ = hex.Decode(k.Org[:], []byte(f(3)))
		l := quota.Limits{Window: time.Duration(n(4)) * time.Millisecond, Requests: n(5), Tokens: n(6), Daily: n(7), InputTokens: n(8), OutputTokens: n(9)}
		var lv quota.Levels
		for i := range lv {
			lv[i], _ = strconv.ParseFloat(f(10+i), 64)
		}
		vs = append(vs, quota.ViewOf(&k, l, lv, time.Duration(now-int64(n(1)))*time.Millisecond))
	}
	return vs, nil
}

// quotaDropBatch is how many quota keys one script forgets at most — in a scope's deletion, and
// expired or past the bound when a new key is written: a scope holds up to QuotaKeys of them,
// and a script blocks the store while it runs, so a deletion is a few short scripts rather
// than one as long as the scope is large.
const quotaDropBatch = 256

// dropQuotaScript: KEYS the scope's index, mockgateway:qk; ARGV the prefix, the scope, the
// batch. It forgets the first keys of the index, at most the batch, and answers how many of
// them were held (not expired) and how many the index has left.
var dropQuotaScript = newScript(`
local P, id = ARGV[1], ARGV[2]
local ids = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[3]) - 1)
local held = 0
for _, q in ipairs(ids) do
  held = held + redis.call('DEL', P .. '{' .. id .. '}:q:' .. q)
  redis.call('ZREM', KEYS[2], id .. '/' .. q)
end
if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
return {held, redis.call('ZCARD', KEYS[1])}
`)

// dropQuotas forgets the scope's quota keys, a batch per script, until its index is empty;
// it reports whether any was held.
func (r *Redis) dropQuotas(ctx context.Context, scope string) (bool, error) {
	held := false
	for {
		var res []any
		err := r.call(ctx, "drop", func(ctx context.Context) (err error) {
			res, err = dropQuotaScript.Run(ctx, r.client, []string{quotaIndex(scope), quotaKeys}, prefix, scope, quotaDropBatch).Slice()
			return err
		})
		if err != nil {
			return held, err
		}
		n, _ := res[0].(int64)
		left, _ := res[1].(int64)
		held = held || n > 0
		if left == 0 {
			return held, nil
		}
	}
}
