package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"mockgateway/internal/journal"
)

// TestRedisJournalFlushUnderTraffic: with unscoped calls queued on a replica without a pause,
// every read of the unscoped journal on another replica holds the entry recorded before it, and
// so do many reads at once, sharing rounds; every round is acknowledged by both writers: one
// that waits for an empty queue would never acknowledge. The writers then stop with their
// context though entries keep coming.
func TestRedisJournalFlushUnderTraffic(t *testing.T) {
	ctx := context.Background()
	a, rs := newTestRedis(t, RedisConfig{JournalEntries: 1000, JournalScopes: 8})
	cfg := a.cfg
	cfg.URL = rs.URL()
	bctx, cancel := context.WithCancel(context.Background())
	b, err := NewRedis(bctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); b.Wait() })

	stop := make(chan struct{})
	var traffic sync.WaitGroup
	traffic.Add(1)
	go func() {
		defer traffic.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			a.RecordCall(ctx, "", journal.Entry{RequestID: fmt.Sprintf("req_bg%d", i), Time: time.Now()})
			if i%16 == 0 {
				// Steady, not a flood that pushes the entries checked out of the journal's
				// last 1000 before they are read.
				time.Sleep(time.Millisecond)
			}
		}
	}()
	stopped := false
	stopTraffic := func() {
		if !stopped {
			stopped = true
			close(stop)
			traffic.Wait()
		}
	}
	defer stopTraffic()

	check := func(id string, limit int) error {
		got, err := b.AppendJournal(ctx, nil, "", limit)
		if err != nil {
			return err
		}
		if !strings.Contains(string(got), `"`+id+`"`) {
			return fmt.Errorf("%s is not in the read right after it", id)
		}
		return nil
	}
	for i := range 10 {
		id := fmt.Sprintf("req_one%d", i)
		a.RecordCall(ctx, "", journal.Entry{RequestID: id, Time: time.Now().Add(time.Hour)}) // listed first
		if err := check(id, 1000); err != nil {
			t.Fatal(err)
		}
	}
	// Many at once, each a read of its own; the traffic stops first, so that each read's list
	// is short and the test measures the rounds, not 64 lists read on a busy machine.
	stopTraffic()
	trips := func() uint64 {
		var m dto.Metric
		_ = b.latency.WithLabelValues("journal_read").(prometheus.Histogram).Write(&m)
		return m.GetHistogram().GetSampleCount()
	}
	before := trips()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("req_many%d", i)
			a.RecordCall(ctx, "", journal.Entry{RequestID: id, Time: time.Now().Add(2 * time.Hour)})
			b.RecordCall(ctx, "", journal.Entry{RequestID: id + "b", Time: time.Now().Add(2 * time.Hour)})
			if err := check(id, 200); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Two a round (the request's publish, the list's read), and the reads share rounds.
	if n := trips() - before; n >= 64 {
		t.Errorf("64 reads at once made %d journal_read round trips, want fewer than one a read", n)
	}
	if n := a.flushesMissed.Load() + b.flushesMissed.Load(); n != 0 {
		t.Errorf("%d rounds ended without every writer's acknowledgement", n)
	}
}

// TestRedisJournalFlushReadsBound: a read of the unscoped journal beyond MaxFlushReads is
// refused with ErrBusy at once; a scoped read is not counted.
func TestRedisJournalFlushReadsBound(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRedis(t, RedisConfig{MaxFlushReads: 2})
	r.flushReads <- struct{}{}
	r.flushReads <- struct{}{}
	if _, err := r.AppendJournal(ctx, nil, "", 10); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third waiting read: %v, want ErrBusy", err)
	}
	if _, err := r.AppendJournal(ctx, nil, "s", 10); err != nil {
		t.Fatalf("a scoped read: %v", err)
	}
	<-r.flushReads
	if _, err := r.AppendJournal(ctx, nil, "", 10); err != nil {
		t.Fatalf("a read within the bound: %v", err)
	}
}

// TestPoolTimeoutIsNotDown: a replica whose connections are all busy has not lost the store;
// taking it for down would refuse every store-backed request until the next ping.
func TestPoolTimeoutIsNotDown(t *testing.T) {
	if isDown(redis.ErrPoolTimeout) || isDown(fmt.Errorf("fetch: %w", redis.ErrPoolTimeout)) {
		t.Fatal("a pool timeout is taken for the store being down")
	}
	if !isDown(context.DeadlineExceeded) {
		t.Fatal("a command that timed out is not taken for the store being down")
	}
}
