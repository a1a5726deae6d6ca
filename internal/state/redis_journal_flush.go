package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A read of the unscoped journal holds every call answered before it, on every replica,
// although unscoped entries are written in batches. A replica asks in rounds: it publishes
// "<replica> <nonce>" on flushChannel, which every replica's writer hears (listenFlushes); each
// writes the entries it had queued when it took the request, then publishes the nonce on the
// asking replica's ack channel; the asking replica hears the acknowledgements on the same
// subscription, counts as many as PUBLISH counted subscribers, at most flushWait, and then reads
// the unscoped list once for all the reads of the round. One round is in flight a replica; the
// reads that arrive meanwhile share the next (runRounds), so a waiting read holds no
// connection, the reads of a round share its round trips, and at most MaxFlushReads reads wait.
// A replica whose subscription is down at that moment (reconnecting) is not counted: its
// unscoped entries may then come up to journalLinger late.
const flushChannel = prefix + "journal-flush"

func ackChannel(replica string) string { return prefix + "journal-ack:" + replica }

// flushWait bounds how long a round waits for the replicas' writers.
const flushWait = 2 * time.Second

// subscribeWait bounds how long NewRedis waits for its subscription before it returns.
const subscribeWait = 2 * time.Second

// maxAsked bounds the flush requests waiting for the writer: beyond, a request is not
// acknowledged, and its round ends at flushWait.
const maxAsked = 1024

// ErrBusy is a read of the unscoped journal beyond MaxFlushReads: the caller answers 429.
var ErrBusy = errors.New("state: too many reads of the unscoped journal waiting for the replicas")

// flushRound is one round: the reads sharing it note the most entries any of them wants (0:
// all), wait for done, and then take their first entries of raw, the unscoped list as the
// round read it once written — one read for all of them, not one each.
type flushRound struct {
	limit int
	done  chan struct{}
	raw   []string
	err   error
}

// ackWait is the acknowledgements the running round has heard and wants (-1: not known yet).
type ackWait struct {
	nonce     string
	got, want int64
	done      chan struct{}
}

// listenFlushes subscribes to the flush requests and this replica's acknowledgements, and
// hands them on until ctx ends; it closes subscribed when the subscription is first up.
func (r *Redis) listenFlushes(ctx context.Context, subscribed chan<- struct{}) {
	ps := r.client.Subscribe(ctx, flushChannel, ackChannel(r.replica))
	defer func() { _ = ps.Close() }()
	ch := ps.ChannelWithSubscriptions()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" && m.Count == 2 && subscribed != nil {
					close(subscribed)
					subscribed = nil
				}
			case *redis.Message:
				if m.Channel == flushChannel {
					r.asked(m.Payload)
				} else {
					r.heard(m.Payload)
				}
			}
		}
	}
}

// asked queues a flush request for the writer without ever blocking the subscription.
func (r *Redis) asked(req string) {
	r.askMu.Lock()
	if len(r.askedList) < maxAsked {
		r.askedList = append(r.askedList, req)
	}
	r.askMu.Unlock()
	select {
	case r.flushAsked <- struct{}{}:
	default:
	}
}

// takeAsked moves every waiting request into dst.
func (r *Redis) takeAsked(dst []string) []string {
	r.askMu.Lock()
	dst = append(dst, r.askedList...)
	clear(r.askedList)
	r.askedList = r.askedList[:0]
	r.askMu.Unlock()
	return dst
}

// heard counts an acknowledgement for the running round.
func (r *Redis) heard(nonce string) {
	r.ackMu.Lock()
	defer r.ackMu.Unlock()
	w := r.ackWait
	if w == nil || w.nonce != nonce {
		return // a round that ended already
	}
	w.got++
	if w.want >= 0 && w.got == w.want {
		close(w.done)
	}
}

// acknowledge publishes each request's nonce on its replica's ack channel, in one round trip.
func (r *Redis) acknowledge(ctx context.Context, asked []string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = r.call(ctx, "journal_write", func(ctx context.Context) error {
		p := r.client.Pipeline()
		for _, a := range asked {
			if replica, nonce, ok := strings.Cut(a, " "); ok {
				p.Publish(ctx, ackChannel(replica), nonce)
			}
		}
		_, err := p.Exec(ctx)
		return err
	})
}

// flushJournals returns the unscoped journal's newest entries (at most limit; 0: all), read
// once every replica's writer has written what it held when this read arrived (or flushWait
// has passed): it joins the next round, starting it if none runs.
func (r *Redis) flushJournals(ctx context.Context, limit int) ([]string, error) {
	r.roundMu.Lock()
	next := r.nextRound
	if next == nil {
		next = &flushRound{limit: limit, done: make(chan struct{})}
		r.nextRound = next
	} else if next.limit > 0 && (limit <= 0 || limit > next.limit) {
		next.limit = limit
	}
	if !r.roundRunning {
		r.roundRunning = true
		go r.runRounds()
	}
	r.roundMu.Unlock()
	select {
	case <-next.done:
		if next.err != nil {
			return nil, next.err
		}
		if limit > 0 && limit < len(next.raw) {
			return next.raw[:limit], nil
		}
		return next.raw, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runRounds runs the rounds the reads ask for, one at a time, until none waits.
func (r *Redis) runRounds() {
	for {
		r.roundMu.Lock()
		round := r.nextRound
		r.nextRound = nil
		if round == nil {
			r.roundRunning = false
			r.roundMu.Unlock()
			return
		}
		r.roundMu.Unlock()
		round.err = r.flushRound(r.ctx)
		if round.err == nil {
			round.raw, round.err = r.readJournal(r.ctx, "", round.limit)
		}
		close(round.done)
	}
}

// flushRound publishes one request and waits for the acknowledgements.
func (r *Redis) flushRound(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err // the store is closing: its client may be closed already
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	w := &ackWait{nonce: hex.EncodeToString(b[:]), want: -1, done: make(chan struct{})}
	r.ackMu.Lock()
	r.ackWait = w
	r.ackMu.Unlock()
	defer func() {
		r.ackMu.Lock()
		r.ackWait = nil
		r.ackMu.Unlock()
	}()
	var n int64
	err := r.call(ctx, "journal_read", func(ctx context.Context) (err error) {
		n, err = r.client.Publish(ctx, flushChannel, r.replica+" "+w.nonce).Result()
		return err
	})
	if err != nil {
		return err
	}
	r.ackMu.Lock()
	w.want = n
	if w.got >= n {
		close(w.done) // every acknowledgement came before PUBLISH's answer, or none is due
	}
	r.ackMu.Unlock()
	t := time.NewTimer(flushWait)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
		r.flushesMissed.Add(1)
	case <-ctx.Done():
	}
	return nil
}
