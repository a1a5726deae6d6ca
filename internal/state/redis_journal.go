package state

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"mockgateway/internal/journal"
)

// The journal's keys: mockgateway:{scope}:j, a list of entries (their JSON, newest first, at
// most JournalEntries), expiring TTL after the scope's last call; and mockgateway:js, the named
// scopes by last call, at most JournalScopes (beyond, the least recently used goes, as in
// memory).
//
// The journal reads its writes: once a client holds a whole answer, a read on any replica holds
// its entry. A scoped call's entry is written before RecordCall returns, which the server calls
// before the answer's last byte (one round trip, on a request that makes round trips already).
// An unscoped call only queues its entry, and one goroutine writes what is queued in one script
// per batch; a read of the unscoped journal first has every replica's writer write what it had
// queued when asked, and waits for their acknowledgements (flushJournals,
// redis_journal_flush.go). The queue holds journalQueue entries: when it is full, or the store
// does not answer, entries are dropped and counted (mockgateway_journal_dropped_total).
//
// ARGV: the prefix and the three bounds, then per scope its id, its count n and its n entries,
// oldest first: one LPUSH, LTRIM and PEXPIRE a scope and batch, not a call each (the batched
// journal write, docs/performance.md).
var journalScript = newScript(luaNow + `
local P, per, max, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local i = 5
while i <= #ARGV do
  local id, n = ARGV[i], tonumber(ARGV[i + 1])
  local k = P .. '{' .. id .. '}:j'
  redis.call('LPUSH', k, unpack(ARGV, i + 2, i + 1 + n))
  redis.call('LTRIM', k, 0, per - 1)
  redis.call('PEXPIRE', k, ttl)
  if id ~= '' then redis.call('ZADD', P .. 'js', now, id) end
  i = i + 2 + n
end
redis.call('ZREMRANGEBYSCORE', P .. 'js', '-inf', now - ttl)
local extra = redis.call('ZCARD', P .. 'js') - max
if extra > 0 then
  for _, s in ipairs(redis.call('ZRANGE', P .. 'js', 0, extra - 1)) do redis.call('DEL', P .. '{' .. s .. '}:j') end
  redis.call('ZREMRANGEBYRANK', P .. 'js', 0, extra - 1)
end
redis.call('PEXPIRE', P .. 'js', ttl)
return 0
`)

// journalQueue bounds the entries waiting to be written (docs/fixtures.md gives its memory).
const journalQueue = 4096

// journalLinger is how long the writer waits for more entries before a write.
const journalLinger = 5 * time.Millisecond

// maxBatch bounds one journal write: the script runs atomically, and other commands wait for it.
const maxBatch = 512

// RecordCall writes a scoped entry at once and queues an unscoped one; a full queue, or a
// write the store did not take, drops it.
func (r *Redis) RecordCall(ctx context.Context, scope string, e journal.Entry) {
	if r.cfg.JournalEntries <= 0 || !journal.ValidScope(scope) {
		return
	}
	e.Scope = scope
	e.Bound()
	if scope != "" {
		r.writeNow(ctx, e)
		return
	}
	select {
	case r.calls <- e:
	default:
		r.dropped.Inc()
	}
}

// writeNow writes one entry in the batch's script, even for a client that has gone: its call
// is journaled as in memory.
func (r *Redis) writeNow(ctx context.Context, e journal.Entry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	var buf []byte
	var ends []int
	args := journalArgs(make([]any, 0, 7), []journal.Entry{e}, &buf, &ends, r.cfg)
	if r.writeArgs(ctx, args) != nil {
		r.dropped.Inc()
	}
}

func (r *Redis) writeArgs(ctx context.Context, args []any) error {
	return r.call(ctx, "journal_write", func(ctx context.Context) error {
		return journalScript.Run(ctx, r.client, []string{prefix + "js"}, args...).Err()
	})
}

// writeCalls writes the queued entries until ctx ends. When reads ask (flushAsked), it takes
// every waiting request at once, notes how many entries are queued, writes exactly those (and
// what it holds already), and then acknowledges: entries that keep coming never hold an
// acknowledgement back.
func (r *Redis) writeCalls(ctx context.Context) {
	batch := make([]journal.Entry, 0, maxBatch)
	args := make([]any, 0, 4+3*maxBatch)
	// The batch's entries, encoded one after the other into one buffer kept across batches;
	// ends[i] is where entry i's JSON ends.
	var buf []byte
	ends := make([]int, 0, maxBatch)
	var asked []string // the requests of the reads waiting for this write
	linger := time.NewTimer(journalLinger)
	linger.Stop()
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return
		case <-r.flushAsked:
		case e := <-r.calls:
			batch = append(batch, e)
			// Entries that come within journalLinger join the batch: under load one round
			// trip carries many, and an entry waits that long at most before it is written.
			// The writer sleeps through the linger and then takes what was queued (the journal
			// writer's sleep, docs/performance.md): waiting on the queue instead would wake it
			// for every entry, a wake-up per request. A queue that already holds a batch is
			// written at once, and so is one a read is waiting for.
			if len(r.calls) < maxBatch-1 {
				linger.Reset(journalLinger)
				select {
				case <-linger.C:
				case <-r.flushAsked:
					linger.Stop()
				case <-ctx.Done():
					linger.Stop()
					return
				}
			}
		}
		// A read waits for the entries queued when its request was taken, not for the queue
		// to be empty, which steady traffic may never let it be.
		asked = r.takeAsked(asked[:0])
		owed := 0
		if len(asked) > 0 {
			owed = len(r.calls)
		}
		for {
		fill:
			for len(batch) < maxBatch {
				select {
				case e := <-r.calls:
					batch = append(batch, e)
					owed--
				default:
					break fill
				}
			}
			if len(batch) > 0 {
				args = journalArgs(args[:0], batch, &buf, &ends, r.cfg)
				wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				if r.writeArgs(wctx, args) != nil {
					r.dropped.Add(float64(len(batch)))
				}
				cancel()
				clear(batch) // no entry outlives its write
				batch = batch[:0]
			}
			if owed <= 0 || ctx.Err() != nil {
				break
			}
		}
		if len(asked) > 0 {
			r.acknowledge(ctx, asked)
			clear(asked)
		}
	}
}

// journalArgs is the journal script's ARGV for batch: the entries grouped by scope (each
// scope's in the order they came), encoded by journal.Entry.AppendJSON into *buf, which it
// reuses. The []byte arguments point into *buf: they are good until the next call.
func journalArgs(args []any, batch []journal.Entry, buf *[]byte, ends *[]int, cfg RedisConfig) []any {
	slices.SortStableFunc(batch, func(a, b journal.Entry) int { return strings.Compare(a.Scope, b.Scope) })
	b, e := (*buf)[:0], (*ends)[:0]
	for i := range batch {
		b = batch[i].AppendJSON(b)
		e = append(e, len(b))
	}
	*buf, *ends = b, e
	args = append(args, prefix, cfg.JournalEntries, cfg.JournalScopes, ms(cfg.TTL))
	start := 0
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].Scope == batch[i].Scope {
			j++
		}
		args = append(args, batch[i].Scope, j-i)
		for k := i; k < j; k++ {
			args = append(args, b[start:e[k]])
			start = e[k]
		}
		i = j
	}
	return args
}

// readJournal reads the scope's newest entries as stored (at most limit; 0: all).
func (r *Redis) readJournal(ctx context.Context, scope string, limit int) (raw []string, err error) {
	end := int64(limit) - 1
	if limit <= 0 {
		end = -1 // all of them, as in memory
	}
	err = r.call(ctx, "journal_read", func(ctx context.Context) (err error) {
		raw, err = r.client.LRange(ctx, key(scope, "j"), 0, end).Result()
		return err
	})
	return raw, err
}

// AppendJournal reads the scope's entries, newest first as in memory: filed when answered,
// shown by when they started.
func (r *Redis) AppendJournal(ctx context.Context, buf []byte, scope string, limit int) ([]byte, error) {
	if !journal.ValidScope(scope) {
		return journal.AppendList(buf, "", nil), nil // its id is not echoed
	}
	var raw []string
	var err error
	if scope == "" {
		// At most MaxFlushReads reads wait for a round at once.
		select {
		case r.flushReads <- struct{}{}:
			defer func() { <-r.flushReads }()
		default:
			return nil, ErrBusy
		}
		raw, err = r.flushJournals(ctx, limit)
	} else {
		raw, err = r.readJournal(ctx, scope, limit)
	}
	if err != nil {
		return nil, err
	}
	entries := make([]journal.Entry, 0, len(raw))
	for _, s := range raw {
		var e journal.Entry
		if json.Unmarshal([]byte(s), &e) == nil {
			entries = append(entries, e)
		}
	}
	slices.SortStableFunc(entries, func(a, b journal.Entry) int { return b.Time.Compare(a.Time) })
	return journal.AppendList(buf, scope, entries), nil
}
