package state

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"mockgateway/internal/fixtures"
)

// The runtime fixtures' keys. Per scope, under mockgateway:{scope}: — "meta" (a hash: gen, the
// generation of its runtime fixtures), "fx" (a list: the bodies as their authors wrote them, in
// the order they were added), "names" (a set: for names unique in the scope), "n" (a hash: the
// count of matches per fixture, "r:" a runtime fixture's — its hits, and its reply position —
// and "f:" a file fixture's with several replies), "att" (attempts), "j" (the journal), and the
// quota buckets with their index (redis_quota.go).
// Across scopes: mockgateway:fx (a sorted set: the fixture scopes, by when they expire),
// mockgateway:ct (a sorted set: the counting scopes, by last use), mockgateway:bytes (a hash:
// the bytes of each scope's bodies) and mockgateway:gen (the generation counter, started at
// the store's clock in microseconds, so that a generation is never given twice, even after
// every key expired: a script takes more than a microsecond).
//
// A fixture scope's keys expire TTL after its last add or counted match; a counting scope's
// ScopeTTL after its last count; so an abandoned scope never stays. The keys across scopes
// expire too, each with the scopes it indexes: fx, bytes and gen TTL after the last add or
// counted match of any fixture scope (no scope of theirs outlives that), ct ScopeTTL after the
// last count of any counting scope. The scripts run atomically:
// an add is all or nothing with every bound checked, and a count is one INCR — three replicas
// stepping a sequence at once each get their own step.
const prefix = "mockgateway:"

func key(scope, kind string) string { return prefix + "{" + scope + "}:" + kind }

const luaNow = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// sweep forgets the fixture scopes past their expiry (their keys expired with them) and the
// counting scopes idle for ScopeTTL, from the indexes.
const luaSweep = `local function sweep(P, now, sttl)
  for _, s in ipairs(redis.call('ZRANGEBYSCORE', P .. 'fx', '-inf', now)) do redis.call('HDEL', P .. 'bytes', s) end
  redis.call('ZREMRANGEBYSCORE', P .. 'fx', '-inf', now)
  redis.call('ZREMRANGEBYSCORE', P .. 'ct', '-inf', now - sttl)
  if redis.call('EXISTS', P .. '{}:meta') == 0 then redis.call('HDEL', P .. 'bytes', '') end
end
-- room makes room for a new scope: false when every scope kept holds runtime fixtures.
local function room(P, max)
  if redis.call('ZCARD', P .. 'fx') + redis.call('ZCARD', P .. 'ct') < max then return true end
  local lru = redis.call('ZRANGE', P .. 'ct', 0, 0)
  if #lru == 0 then return false end
  redis.call('ZREM', P .. 'ct', lru[1])
  redis.call('DEL', P .. '{' .. lru[1] .. '}:n')
  return true
end
`

// addScript: KEYS meta, fx, names, n; ARGV prefix, scope, TTL, ScopeTTL (ms), MaxScopes,
// MaxFixturesPerScope, MaxBytes, body, the bytes it holds (fixtures.Runtime.Held), names…
var addScript = newScript(luaNow + luaSweep + `
local P, id, ttl, sttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local maxScopes, maxPer, maxBytes, body, held = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8], tonumber(ARGV[9])
sweep(P, now, sttl)
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HDEL', P .. 'bytes', id) end
for i = 10, #ARGV do
  if redis.call('SISMEMBER', KEYS[3], ARGV[i]) == 1 then return {'dup', i - 10} end
end
if redis.call('SCARD', KEYS[3]) + #ARGV - 9 > maxPer then return {'many', 0} end
local total = 0
for _, v in ipairs(redis.call('HVALS', P .. 'bytes')) do total = total + tonumber(v) end
if total + held > maxBytes then return {'bytes', 0} end
if id ~= '' and not redis.call('ZSCORE', P .. 'fx', id) and not redis.call('ZSCORE', P .. 'ct', id) and not room(P, maxScopes) then
  return {'scopes', 0}
end
redis.call('ZREM', P .. 'ct', id)
redis.call('RPUSH', KEYS[2], body)
for i = 10, #ARGV do redis.call('SADD', KEYS[3], ARGV[i]) end
redis.call('HINCRBY', P .. 'bytes', id, held)
if redis.call('EXISTS', P .. 'gen') == 0 then redis.call('SET', P .. 'gen', string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))) end
local gen = redis.call('INCR', P .. 'gen')
redis.call('HSET', KEYS[1], 'gen', gen)
if id ~= '' then redis.call('ZADD', P .. 'fx', now + ttl, id) end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ttl) end
for _, k in ipairs({'fx', 'bytes', 'gen'}) do redis.call('PEXPIRE', P .. k, ttl) end
return {'ok', gen}
`)

// fetchScript: KEYS meta, fx; ARGV the generation the replica compiled. It answers the
// generation alone when it is the same, else the generation and the bodies.
var fetchScript = newScript(`
local gen = redis.call('HGET', KEYS[1], 'gen') or '0'
if gen == ARGV[1] then return {gen} end
local out = redis.call('LRANGE', KEYS[2], 0, -1)
table.insert(out, 1, gen)
return out
`)

// countScript: KEYS n; ARGV prefix, scope, field, TTL, ScopeTTL (ms), MaxScopes. It counts a
// match in the scope and answers its number, from 1; 0 when the scope could not be kept (every
// scope kept holds runtime fixtures: the first reply, as in memory).
var countScript = newScript(luaNow + luaSweep + `
local P, id, field, ttl, sttl, maxScopes = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local base = P .. '{' .. id .. '}:'
local exp = id ~= '' and redis.call('ZSCORE', P .. 'fx', id)
if id == '' or (exp and tonumber(exp) > now) then
  local v = redis.call('HINCRBY', KEYS[1], field, 1)
  if id ~= '' then redis.call('ZADD', P .. 'fx', now + ttl, id) end
  for _, k in ipairs({'meta', 'fx', 'names', 'n'}) do redis.call('PEXPIRE', base .. k, ttl) end
  for _, k in ipairs({'fx', 'bytes', 'gen'}) do redis.call('PEXPIRE', P .. k, ttl) end
  return v
end
local last = redis.call('ZSCORE', P .. 'ct', id)
if not last or tonumber(last) < now - sttl then
  redis.call('ZREM', P .. 'ct', id)
  redis.call('DEL', KEYS[1])
  sweep(P, now, sttl)
  if not room(P, maxScopes) then return 0 end
end
redis.call('ZADD', P .. 'ct', now, id)
local v = redis.call('HINCRBY', KEYS[1], field, 1)
redis.call('PEXPIRE', KEYS[1], sttl)
redis.call('PEXPIRE', P .. 'ct', sttl)
return v
`)

// dropScript: KEYS meta, fx, names, n, att, j; ARGV prefix, scope, "1" to drop the journal. The
// quota keys are dropped before, in batches (dropQuotas).
var dropScript = newScript(`
local P, id = ARGV[1], ARGV[2]
local had = redis.call('EXISTS', KEYS[1], KEYS[4], KEYS[5])
for _, f in ipairs(redis.call('HKEYS', KEYS[5])) do redis.call('ZREM', P .. 'att', id .. '/' .. f) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('ZREM', P .. 'fx', id)
redis.call('ZREM', P .. 'ct', id)
redis.call('HDEL', P .. 'bytes', id)
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[6])
  redis.call('ZREM', P .. 'js', id)
end
return had
`)

func ms(d interface{ Milliseconds() int64 }) int64 { return max(d.Milliseconds(), 1) }

// AddFixtures validates the body here, then adds it in one script: all or nothing.
func (r *Redis) AddFixtures(ctx context.Context, scope string, body []byte) ([]string, error) {
	rt, err := r.cfg.Fixtures.ParseRuntime(scope, body)
	if err != nil {
		return nil, err
	}
	args := []any{prefix, scope, ms(r.cfg.TTL), ms(r.cfg.ScopeTTL), r.cfg.MaxScopes, r.cfg.MaxFixturesPerScope, r.cfg.MaxBytes, body, rt.Held}
	for _, n := range rt.Names {
		args = append(args, n)
	}
	var res []any
	err = r.call(ctx, "add", func(ctx context.Context) (err error) {
		res, err = addScript.Run(ctx, r.client, []string{key(scope, "meta"), key(scope, "fx"), key(scope, "names"), key(scope, "n")}, args...).Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	verdict, _ := res[0].(string)
	n, _ := res[1].(int64)
	switch verdict {
	case "dup":
		return nil, fixtures.DuplicateName(int(n), rt.Names[n])
	case "many":
		return nil, fixtures.TooManyFixtures(r.cfg.MaxFixturesPerScope)
	case "bytes":
		return nil, fixtures.TooManyBytes(r.cfg.MaxBytes)
	case "scopes":
		return nil, fixtures.TooManyScopes(r.cfg.MaxScopes)
	}
	if scope == "" {
		if c, err := r.fetch(ctx, ""); err == nil {
			r.unscoped.Store(c) // this replica sees its own add at once
		}
	}
	return rt.Names, nil
}

// fetch is the scope's runtime Set, compiled from the store's bodies when their generation is
// not the one compiled last: one round trip, and no compiling, while the scope is unchanged.
func (r *Redis) fetch(ctx context.Context, scope string) (*compiled, error) {
	var have *compiled
	if scope == "" {
		have = r.unscoped.Load()
	} else {
		r.mu.Lock()
		have = r.compiled[scope]
		r.mu.Unlock()
	}
	gen := "0"
	if have != nil {
		gen = have.gen
	}
	var res []any
	err := r.call(ctx, "fetch", func(ctx context.Context) (err error) {
		res, err = fetchScript.Run(ctx, r.client, []string{key(scope, "meta"), key(scope, "fx")}, gen).Slice()
		return err
	})
	if err != nil {
		return nil, err
	}
	if have != nil && toString(res[0]) == gen {
		return have, nil
	}
	c := &compiled{gen: toString(res[0])}
	bodies := make([][]byte, 0, len(res)-1)
	for _, b := range res[1:] {
		bodies = append(bodies, []byte(toString(b)))
	}
	if c.set, err = r.cfg.Fixtures.CompileRuntime(bodies); err != nil {
		return nil, ErrUnavailable // bodies this version cannot read: not a request's fault
	}
	if scope != "" {
		r.mu.Lock()
		if len(r.compiled) >= r.cfg.MaxScopes {
			for k := range r.compiled { // any one: a cache, refilled on the next request
				delete(r.compiled, k)
				break
			}
		}
		r.compiled[scope] = c
		r.mu.Unlock()
	}
	return c, nil
}

func (r *Redis) forgetCompiled() {
	r.mu.Lock()
	clear(r.compiled)
	r.mu.Unlock()
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// Match reads the scope's runtime fixtures (an unscoped request uses the set the refresh keeps,
// so it costs no round trip) and counts a match that needs counting.
func (r *Redis) Match(ctx context.Context, q fixtures.Query) (fixtures.Hit, bool, *fixtures.Miss, error) {
	c := r.unscoped.Load()
	if q.Scope != "" {
		var err error
		if c, err = r.fetch(ctx, q.Scope); err != nil {
			return fixtures.Hit{}, false, nil, err
		}
	}
	return r.cfg.Fixtures.MatchShared(q, c.set, func(m fixtures.Counted) (int64, error) {
		return r.count(ctx, q.Scope, m)
	})
}

func (r *Redis) count(ctx context.Context, scope string, m fixtures.Counted) (int64, error) {
	field := "f:" + m.Name
	if m.Origin == fixtures.OriginRuntime {
		field = "r:" + m.Name
	}
	var n int64
	err := r.call(ctx, "count", func(ctx context.Context) (err error) {
		n, err = countScript.Run(ctx, r.client, []string{key(scope, "n")}, prefix, scope, field, ms(r.cfg.TTL), ms(r.cfg.ScopeTTL), r.cfg.MaxScopes).Int64()
		return err
	})
	return n, err
}

// ListFixtures lists the scope's runtime fixtures with the hits the store counted, then the
// file fixtures.
func (r *Redis) ListFixtures(ctx context.Context, scope string) ([]fixtures.Info, error) {
	c, err := r.fetch(ctx, scope)
	if err != nil {
		return nil, err
	}
	var counts map[string]string
	if c.set != nil {
		err = r.call(ctx, "list", func(ctx context.Context) (err error) {
			counts, err = r.client.HGetAll(ctx, key(scope, "n")).Result()
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return r.cfg.Fixtures.ListShared(c.set, func(name string) int64 {
		n, _ := strconv.ParseInt(counts["r:"+name], 10, 64)
		return n
	}), nil
}

// DropScope forgets the scope's quota keys, a batch per script, then its other keys in one.
func (r *Redis) DropScope(ctx context.Context, scope string, withJournal bool) (bool, error) {
	j := "0"
	if withJournal {
		j = "1"
	}
	quotas, err := r.dropQuotas(ctx, scope)
	if err != nil {
		return false, err
	}
	var had int64
	err = r.call(ctx, "drop", func(ctx context.Context) (err error) {
		had, err = dropScript.Run(ctx, r.client, []string{key(scope, "meta"), key(scope, "fx"), key(scope, "names"), key(scope, "n"), key(scope, "att"), key(scope, "j")}, prefix, scope, j).Int64()
		return err
	})
	if err != nil {
		return false, err
	}
	if scope == "" {
		r.unscoped.Store(&compiled{gen: "0"})
	} else {
		r.mu.Lock()
		delete(r.compiled, scope)
		r.mu.Unlock()
	}
	return quotas || had > 0, nil
}

func newScript(src string) *redis.Script { return redis.NewScript(src) }
