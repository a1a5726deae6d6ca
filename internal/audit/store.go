package audit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"mockgateway/internal/state"
)

// storeSource is the service's shared state store (--state-store of the service, docs/fixtures.md
// "Shared state"): every key under the store's prefix, read after the traffic and before the
// audit's scope is deleted. Runtime fixtures hold what their authors wrote, so the fixture bodies
// of the audit's own scope — where it planted canaries itself — are left out; everything else
// (the journal, counters, attempts, indexes) must hold no canary.
type storeSource struct {
	url   string // with its password; never printed (location is redacted)
	scope string // the audit's own scope
	c     *redis.Client
}

// parseStoreURL checks a redis:// or rediss:// URL and returns its password ("" when none).
// The error never quotes the URL: it may hold the password.
func parseStoreURL(s string) (string, error) {
	opt, err := redis.ParseURL(s)
	if err != nil {
		return "", errors.New("want a redis:// or rediss:// URL")
	}
	return opt.Password, nil
}

func (s *storeSource) name() string { return "store" }
func (s *storeSource) kind() string { return "store" }

func (s *storeSource) location() string {
	u, err := url.Parse(s.url)
	if err != nil {
		return "the state store"
	}
	return u.Redacted()
}

func (s *storeSource) close() {
	if s.c != nil {
		_ = s.c.Close()
	}
}

func (s *storeSource) start(ctx context.Context) error {
	opt, err := redis.ParseURL(s.url)
	if err != nil {
		return errors.New("not a redis:// or rediss:// URL")
	}
	opt.DisableIdentity = true
	s.c = redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// go-redis's errors name the address, never the password (and the report masks secrets).
	if err := s.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("the state store does not answer: %v", err)
	}
	return nil
}

// collect waits for the service's journal writes (asynchronous, batched) to reach the store —
// until the scope's journal holds every /v1 request the audit filed there, or its length has held
// still for a second — then reads every key.
func (s *storeSource) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	want := 0
	for _, p := range exp.probes {
		if p.RequestID != "" && strings.HasPrefix(p.Path, "/v1/") && p.Header.Get(headerScope) == s.scope {
			want++
		}
	}
	jkey := strings.TrimSuffix(state.FixturesKey(s.scope), "fx") + "j"
	last, since := int64(-1), time.Now()
	for {
		n, err := s.c.LLen(ctx, jkey).Result()
		if err != nil {
			return nil, fmt.Errorf("LLEN: %v", err)
		}
		if n != last {
			last, since = n, time.Now()
		}
		if n >= int64(want) || time.Since(since) >= time.Second || time.Now().After(deadline) || !sleepCtx(ctx, 200*time.Millisecond) {
			break
		}
	}
	c, err := s.read(ctx, exp.corr)
	if err == nil {
		c.capturedBy = fmt.Sprintf("%d of the audit's requests named in it (the journal, by request id)", len(c.probesSeen))
	}
	return c, err
}

// read is one record per key: its name and every value in it (a list's elements, a hash's fields
// and values, a set's or sorted set's members), JSON values field by field.
func (s *storeSource) read(ctx context.Context, corr *correlator) (*collection, error) {
	c := &collection{}
	excluded := state.FixturesKey(s.scope)
	var keys []string
	iter := s.c.Scan(ctx, 0, state.KeyPrefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("SCAN: %v", err)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // SCAN may return a key twice
	for _, k := range keys {
		if k == excluded {
			c.add("excluded_keys", 1)
			continue
		}
		parts, err := s.readKey(ctx, k)
		if errors.Is(err, redis.Nil) {
			continue // expired between SCAN and the read
		}
		if err != nil {
			c.problems = append(c.problems, fmt.Sprintf("key %s: %v", k, err))
			continue
		}
		n := int64(len(k))
		for _, p := range parts {
			n += int64(len(p.text))
		}
		c.add("keys", 1)
		c.add("bytes", n)
		c.records = append(c.records, record{id: "key " + k, key: "store " + k, parts: append([]part{{where: "key name", text: k}}, parts...)})
	}
	c.add("keys", 0)
	c.correlate(corr)
	c.notes = append(c.notes, fmt.Sprintf("every key under %q searched but %s: the runtime fixtures the audit added to its own scope, canaries planted by the audit as their author", state.KeyPrefix, excluded))
	return c, nil
}

func (s *storeSource) readKey(ctx context.Context, k string) ([]part, error) {
	typ, err := s.c.Type(ctx, k).Result()
	if err != nil {
		return nil, err
	}
	var parts []part
	value := func(where, text string) {
		if doc, err := parseJSON([]byte(text)); err == nil && (doc.kind == 'o' || doc.kind == 'a') {
			parts = append(parts, flattenParts(doc, where)...)
			return
		}
		parts = append(parts, part{where: where, text: text})
	}
	switch typ {
	case "none":
		return nil, redis.Nil
	case "string":
		v, err := s.c.Get(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		value("value", v)
	case "list":
		vs, err := s.c.LRange(ctx, k, 0, -1).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			value(fmt.Sprintf("[%d]", i), v)
		}
	case "hash":
		m, err := s.c.HGetAll(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		for f, v := range m {
			parts = append(parts, part{where: "field name", text: f})
			value("["+f+"]", v)
		}
	case "set":
		vs, err := s.c.SMembers(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			value("member", v)
		}
	case "zset":
		vs, err := s.c.ZRange(ctx, k, 0, -1).Result()
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			value("member", v)
		}
	default:
		return nil, fmt.Errorf("of type %s, which the audit does not read", typ)
	}
	return parts, nil
}
