// Package state owns where the runtime state lives: the scopes' runtime fixtures, their reply
// positions, the attempt counts of clients that retry without saying so, the simulated quota
// buckets, and the call journal. Memory keeps them in this process (the default, nothing else to run); Redis keeps them in a
// Redis or Valkey the replicas share (--state-store), so that behind a load balancer a test's
// fixtures, sequences, retries, quotas and journal behave as on one process.
//
// File fixtures, the catalog and everything generated stay per replica: they come from the same
// files and depend on nothing shared. What the store holds is what fixture authors wrote and the
// journal's content-free entries, never a prompt or a completion.
package state

import (
	"context"
	"errors"
	"time"

	"mockgateway/internal/fixtures"
	"mockgateway/internal/journal"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
)

// Store is the runtime state the handlers read and write. Memory and Redis are its two
// implementations. An error is a *fixtures.Error (an Add refused) or wraps ErrUnavailable.
type Store interface {
	// Match matches the request against its scope's runtime fixtures and the file fixtures,
	// counting the position of a `replies` fixture (fixtures.Store.Match).
	Match(ctx context.Context, q fixtures.Query) (fixtures.Hit, bool, *fixtures.Miss, error)
	// AddFixtures adds a runtime body to a scope, all of its fixtures or none.
	AddFixtures(ctx context.Context, scope string, body []byte) ([]string, error)
	// ListFixtures describes the fixtures the scope's requests see.
	ListFixtures(ctx context.Context, scope string) ([]fixtures.Info, error)
	// DropScope forgets a scope's runtime fixtures, reply positions, attempt counts and quota
	// buckets, and its journal too when withJournal; it reports whether there was anything to
	// forget.
	DropScope(ctx context.Context, scope string, withJournal bool) (bool, error)
	// NextAttempt numbers an attempt of the request with this key (simulation.AttemptCounter);
	// AttemptDone forgets the key once an attempt got through.
	NextAttempt(ctx context.Context, key uint64, scope string) (int, error)
	AttemptDone(ctx context.Context, key uint64, scope string)
	// TakeQuota admits a request asking u (its input tokens and its output budget) of the quota
	// buckets of key (its ID covers the model, the client key, the scope and the limits) or
	// refuses it, as if it came ahead after now (quota.Buckets.Take; 0: a request of now);
	// SettleQuota corrects the token buckets once the answer is made (quota.Buckets.Settle).
	TakeQuota(ctx context.Context, key quota.Key, l quota.Limits, u quota.Usage, ahead time.Duration) (quota.Status, error)
	SettleQuota(ctx context.Context, key quota.Key, l quota.Limits, delta quota.Usage)
	// ListQuotas lists the quota buckets the store holds for scope ("": the unscoped calls'),
	// replenished to now, at most limit of them (none below 1), those that will be full last
	// first; buckets all full are not held (quota.Buckets.List).
	ListQuotas(ctx context.Context, scope string, limit int) ([]quota.View, error)
	// RecordCall files a call in the journal; the server calls it before the answer's last
	// byte, and a read of the journal on any replica holds the entry once it has returned (or
	// once the read has asked for it, for an unscoped call in the shared store). It never fails;
	// it waits on the network only for a scoped call in the shared store.
	RecordCall(ctx context.Context, scope string, e journal.Entry)
	// AppendJournal appends GET /_mock/journal's answer (journal.AppendList) to buf.
	AppendJournal(ctx context.Context, buf []byte, scope string, limit int) ([]byte, error)
	// Health is what /health says of the store.
	Health() Health
	// Files are the file fixtures, which every replica loads for itself, and their checks
	// (fixtures.Store's Check, with its schema cache).
	Files() *fixtures.Store
	// Journaling reports whether calls are journaled.
	Journaling() bool
}

// Health is the store's part of /health.
type Health struct {
	Store     string `json:"store"` // memory or redis
	Available bool   `json:"available"`
}

// ErrUnavailable is the error of a request that needs the shared store while it does not
// answer: the server's 503 state_unavailable.
var ErrUnavailable = errors.New("the state store is unavailable")

// Memory is the in-process state: the fixture store's scopes, the attempt counter and the
// journal, as they were before there was a choice.
type Memory struct {
	Fixtures *fixtures.Store
	Attempts *simulation.AttemptCounter
	Quotas   *quota.Buckets
	Calls    *journal.Journal // nil: no journal
}

// Match is Fixtures.Match.
func (m *Memory) Match(_ context.Context, q fixtures.Query) (fixtures.Hit, bool, *fixtures.Miss, error) {
	hit, ok, miss := m.Fixtures.Match(q)
	return hit, ok, miss, nil
}

// AddFixtures is Fixtures.Add.
func (m *Memory) AddFixtures(_ context.Context, scope string, body []byte) ([]string, error) {
	return m.Fixtures.Add(scope, body)
}

// ListFixtures is Fixtures.List.
func (m *Memory) ListFixtures(_ context.Context, scope string) ([]fixtures.Info, error) {
	return m.Fixtures.List(scope), nil
}

// DropScope drops the scope from the fixture store, the attempt counter and the quota
// buckets, and from the journal when withJournal.
func (m *Memory) DropScope(_ context.Context, scope string, withJournal bool) (bool, error) {
	deleted := m.Fixtures.DropScope(scope)
	if m.Attempts.DropScope(scope) {
		deleted = true
	}
	if m.Quotas.DropScope(scope) {
		deleted = true
	}
	if withJournal && m.Calls != nil {
		m.Calls.Drop(scope)
	}
	return deleted, nil
}

// NextAttempt is Attempts.Next.
func (m *Memory) NextAttempt(_ context.Context, key uint64, scope string) (int, error) {
	return m.Attempts.Next(key, scope), nil
}

// AttemptDone is Attempts.Done.
func (m *Memory) AttemptDone(_ context.Context, key uint64, _ string) { m.Attempts.Done(key) }

// TakeQuota is Quotas.Take.
func (m *Memory) TakeQuota(_ context.Context, key quota.Key, l quota.Limits, u quota.Usage, ahead time.Duration) (quota.Status, error) {
	return m.Quotas.Take(key, l, u, ahead), nil
}

// SettleQuota is Quotas.Settle.
func (m *Memory) SettleQuota(_ context.Context, key quota.Key, l quota.Limits, delta quota.Usage) {
	m.Quotas.Settle(key, l, delta)
}

// ListQuotas is Quotas.List.
func (m *Memory) ListQuotas(_ context.Context, scope string, limit int) ([]quota.View, error) {
	return m.Quotas.List(scope, limit), nil
}

// RecordCall is Calls.Add.
func (m *Memory) RecordCall(_ context.Context, scope string, e journal.Entry) {
	if m.Calls != nil {
		m.Calls.Add(scope, e)
	}
}

// AppendJournal is Calls.AppendJSON.
func (m *Memory) AppendJournal(_ context.Context, buf []byte, scope string, limit int) ([]byte, error) {
	return m.Calls.AppendJSON(buf, scope, limit), nil
}

// Health: memory is always available.
func (m *Memory) Health() Health { return Health{Store: "memory", Available: true} }

// Files are the file fixtures, beside the runtime ones in the same store.
func (m *Memory) Files() *fixtures.Store { return m.Fixtures }

// Journaling: in memory, when there is a journal.
func (m *Memory) Journaling() bool { return m.Calls != nil }
