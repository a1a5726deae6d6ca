package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// A read of the unscoped journal holds every call answered before it, on every replica,
// although unscoped entries are written in batches: the reader publishes a nonce on
// flushChannel, which every replica's writer hears (its subscription, listenFlushes); each
// writes its whole queue and then pushes an acknowledgement to mockgateway:jack:<nonce>; the
// reader waits for as many as PUBLISH counted subscribers, at most flushWait, and then reads.
// A replica whose subscription is down at that moment (reconnecting) is not counted: its
// unscoped entries may then come up to journalLinger late.
const flushChannel = prefix + "journal-flush"

// flushWait bounds how long a read waits for the replicas' writers.
const flushWait = 2 * time.Second

// listenFlushes hands the nonces of the reads asking for a flush to the writer until ctx ends.
func (r *Redis) listenFlushes(ctx context.Context) {
	ps := r.client.Subscribe(ctx, flushChannel)
	defer func() { _ = ps.Close() }()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			select {
			case r.flushes <- m.Payload:
			case <-ctx.Done():
				return
			}
		}
	}
}

func ackKey(nonce string) string { return prefix + "jack:" + nonce }

// acknowledge tells the reads waiting for this replica's writer that its queue is written.
func (r *Redis) acknowledge(ctx context.Context, nonces []string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = r.call(ctx, "journal_write", func(ctx context.Context) error {
		p := r.client.Pipeline()
		for _, n := range nonces {
			p.RPush(ctx, ackKey(n), 1)
			p.PExpire(ctx, ackKey(n), flushWait)
		}
		_, err := p.Exec(ctx)
		return err
	})
}

// flushJournals asks every replica's writer to write its queue and waits for them (at most
// about flushWait; a replica that does not answer by then is read without).
func (r *Redis) flushJournals(ctx context.Context) error {
	var b [12]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	var n int64
	err := r.call(ctx, "journal_read", func(ctx context.Context) (err error) {
		n, err = r.client.Publish(ctx, flushChannel, nonce).Result()
		return err
	})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(flushWait)
	for ; n > 0 && time.Now().Before(deadline); n-- {
		err := r.call(ctx, "journal_read", func(ctx context.Context) error {
			// A second at a time: the client takes BLPOP's timeout in whole seconds.
			return r.client.BLPop(ctx, time.Second, ackKey(nonce)).Err()
		})
		if err != nil {
			break // redis.Nil: the wait is over
		}
	}
	_ = r.call(ctx, "journal_read", func(ctx context.Context) error { return r.client.Del(ctx, ackKey(nonce)).Err() })
	return nil
}
