package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"mockgateway/internal/fixtures"
	"mockgateway/internal/journal"
)

// RedisConfig is what a Redis store needs: the URL, the bounds it keeps in the store (the same
// flags as in memory), the local fixture store (file fixtures and matching), and telemetry.
type RedisConfig struct {
	URL      string // redis:// or rediss://; it may hold a password, which nothing here prints
	Fixtures *fixtures.Store

	MaxScopes, MaxFixturesPerScope, MaxBytes int
	ScopeTTL                                 time.Duration // a counting scope, after its last count
	TTL                                      time.Duration // any scope's state, after its last write
	AttemptKeys                              int
	AttemptTTL                               time.Duration
	QuotaKeys                                int // across all scopes (redis_quota.go); 0: 1
	JournalEntries, JournalScopes            int // JournalEntries 0: no journal
	// MaxFlushReads bounds the reads of the unscoped journal waiting for the replicas' writers
	// at once (beyond: ErrBusy); 0: 64.
	MaxFlushReads int
	// Refresh is how often the unscoped runtime fixtures' generation is read and the store's
	// health checked: the staleness an unscoped request's view of other replicas' unscoped
	// fixtures may have, and how soon a returning store is noticed.
	Refresh    time.Duration
	Registerer prometheus.Registerer // nil: no metrics
	Logger     *slog.Logger
}

// Redis keeps the runtime state in a Redis or Valkey server (standalone or a primary; not
// Cluster: the scripts touch keys of several scopes). Every key is under the prefix
// "mockgateway:", a scope's keys under "mockgateway:{scope}:", and every key expires.
// The layout and the scripts are in redis_fixtures.go, redis_attempts.go and redis_journal.go.
type Redis struct {
	cfg    RedisConfig
	client *redis.Client
	log    *slog.Logger

	up atomic.Bool // the last command or ping got an answer

	// Compiled runtime sets by scope, each with the generation it was compiled from: a
	// replica recompiles a scope only when its generation changes. Bounded by MaxScopes.
	mu       sync.Mutex
	compiled map[string]*compiled
	unscoped atomic.Pointer[compiled] // scope "", refreshed every Refresh (and by this replica's writes)

	calls chan journal.Entry // the journal's queue: bounded, written by one goroutine

	// Flushes (redis_journal_flush.go). The writer's side: the requests heard, and a wake-up.
	askMu      sync.Mutex
	askedList  []string
	flushAsked chan struct{}
	// The reading side: a random id naming this replica's ack channel, the round the next reads
	// share, whether one runs, the acknowledgements it waits for, and the bound on its reads.
	replica       string
	ctx           context.Context // the store's: a round outlives the read that started it
	roundMu       sync.Mutex
	nextRound     *flushRound
	roundRunning  bool
	ackMu         sync.Mutex
	ackWait       *ackWait
	flushReads    chan struct{}
	flushesMissed atomic.Int64 // rounds that ended without every acknowledgement

	latency *prometheus.HistogramVec
	errs    *prometheus.CounterVec
	dropped prometheus.Counter
	done    chan struct{}
}

type compiled struct {
	gen string
	set *fixtures.Set
}

// The operations the latency histogram and the error counter are labelled with: a closed set.
var ops = []string{"fetch", "count", "add", "list", "drop", "attempt", "quota", "journal_write", "journal_read", "ping"}

// NewRedis connects to the store (without waiting for it: a store that is down at start-up is
// reported and retried like one that goes down later) and starts its background work, which
// ends with ctx; Wait waits for it. It returns once its subscription to the journal's flushes
// is up (at most subscribeWait): from then on every unscoped read counts this replica.
func NewRedis(ctx context.Context, cfg RedisConfig) (*Redis, error) {
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		// Not err's text: it may quote the URL.
		return nil, errors.New("state-store: not a valid redis:// or rediss:// URL")
	}
	// Short timeouts and no retries: a request that needs the store waits little before its
	// 503, and the ping loop, not the request, finds out when the store is back.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, time.Second, time.Second
	opt.PoolTimeout, opt.MaxRetries, opt.DialerRetries = time.Second, -1, 1
	opt.DisableIdentity = true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if cfg.Refresh <= 0 {
		cfg.Refresh = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxFlushReads <= 0 {
		cfg.MaxFlushReads = 64
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r := &Redis{cfg: cfg, client: redis.NewClient(opt), log: cfg.Logger, compiled: map[string]*compiled{},
		calls: make(chan journal.Entry, journalQueue), flushAsked: make(chan struct{}, 1),
		replica: hex.EncodeToString(id[:]), ctx: ctx, flushReads: make(chan struct{}, cfg.MaxFlushReads),
		done: make(chan struct{})}
	r.unscoped.Store(&compiled{gen: "0"})
	r.metrics(cfg.Registerer)
	r.up.Store(true) // until the first ping says otherwise
	r.refresh(ctx)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); r.loop(ctx) }()
	go func() { defer wg.Done(); r.writeCalls(ctx) }()
	subscribed := make(chan struct{})
	go func() { defer wg.Done(); r.listenFlushes(ctx, subscribed) }()
	go func() { wg.Wait(); _ = r.client.Close(); close(r.done) }()
	t := time.NewTimer(subscribeWait)
	defer t.Stop()
	select {
	case <-subscribed:
	case <-t.C:
		r.log.Warn("state store: the journal's flush subscription is not up yet; until it is, reads of the unscoped journal on other replicas may miss this replica's newest unscoped calls")
	case <-ctx.Done():
	}
	return r, nil
}

// RouteClientLogs sends the Redis client's own log lines (a pool that cannot dial, …) to
// logger, as warnings, instead of its default: unstructured lines on stderr. The client has one
// logger for the whole process, so run calls this once, when --state-store is set. Its lines
// name addresses and commands, never the URL's password.
func RouteClientLogs(logger *slog.Logger) { redis.SetLogger(clientLog{logger}) }

type clientLog struct{ log *slog.Logger }

func (c clientLog) Printf(_ context.Context, format string, v ...any) {
	c.log.Warn("state store client", slog.String("message", strings.TrimSpace(fmt.Sprintf(format, v...))))
}

// Wait returns once the background work has ended (after its context) and the client closed.
func (r *Redis) Wait() { <-r.done }

func (r *Redis) metrics(reg prometheus.Registerer) {
	r.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mockgateway_state_store_duration_seconds",
		Help:    "Round trips to the shared state store (--state-store), by operation.",
		Buckets: []float64{.0002, .0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"op"})
	r.errs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mockgateway_state_store_errors_total",
		Help: "Round trips to the shared state store that failed, by operation.",
	}, []string{"op"})
	r.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mockgateway_journal_dropped_total",
		Help: "Journal entries not written to the shared state store: its queue was full or the store did not answer.",
	})
	for _, op := range ops {
		r.latency.WithLabelValues(op)
		r.errs.WithLabelValues(op)
	}
	if reg == nil {
		return
	}
	reg.MustRegister(r.latency, r.errs, r.dropped, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mockgateway_state_store_up",
		Help: "1 when the shared state store (--state-store) answers, 0 when it does not.",
	}, func() float64 {
		if r.up.Load() {
			return 1
		}
		return 0
	}))
}

// Health says whether the store answered last.
func (r *Redis) Health() Health { return Health{Store: "redis", Available: r.up.Load()} }

// Files are the file fixtures this replica loaded.
func (r *Redis) Files() *fixtures.Store { return r.cfg.Fixtures }

// Journaling: in the store, unless --journal-entries is 0.
func (r *Redis) Journaling() bool { return r.cfg.JournalEntries > 0 }

// call runs one round trip, measured: it fails at once while the store is known to be down (the
// ping loop finds out when it is back), and marks it down when it does not answer. A script's
// own refusal (a Lua error reply) is not the store being down.
func (r *Redis) call(ctx context.Context, op string, f func(ctx context.Context) error) error {
	if !r.up.Load() {
		return ErrUnavailable
	}
	start := time.Now()
	err := f(ctx)
	r.latency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err // the client went away: nothing to say about the store
	}
	r.errs.WithLabelValues(op).Inc()
	if errors.Is(err, redis.ErrPoolTimeout) {
		return fmt.Errorf("%w (%s: this replica's connections to the store are all busy)", ErrUnavailable, op)
	}
	if isDown(err) {
		r.setUp(false, err)
		return fmt.Errorf("%w (%s)", ErrUnavailable, op)
	}
	return fmt.Errorf("%w (%s: the store refused the command)", ErrUnavailable, op)
}

// isDown reports whether err means the store did not answer (as opposed to an error reply).
func isDown(err error) bool {
	if errors.Is(err, redis.ErrPoolTimeout) {
		return false // this replica's connections are all busy: the store may be fine
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return true // no answer: a refused or lost connection, a timeout, a closed pool
	}
	// An error reply. These mean a store that cannot serve yet (loading its data, a replica
	// promoted late, a password not yet accepted); any other is a refusal of the command.
	for _, p := range [...]string{"LOADING", "READONLY", "NOAUTH", "WRONGPASS", "MASTERDOWN"} {
		if strings.HasPrefix(re.Error(), p) {
			return true
		}
	}
	return false
}

func (r *Redis) setUp(up bool, err error) {
	if r.up.Swap(up) == up {
		return
	}
	if up {
		r.log.Info("state store available again")
		return
	}
	// go-redis's errors name the address, never the URL's password.
	r.log.Warn("state store unavailable; requests that need shared state answer 503 state_unavailable until it returns",
		slog.String("error", err.Error()))
}

// loop pings the store and refreshes the unscoped runtime fixtures every Refresh.
func (r *Redis) loop(ctx context.Context) {
	t := time.NewTicker(r.cfg.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.refresh(ctx)
		}
	}
}

// refresh pings the store when it is down and reads the unscoped fixtures' generation (and
// bodies when it changed) — which is a ping when it is up.
func (r *Redis) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if !r.up.Load() {
		start := time.Now()
		err := r.client.Ping(ctx).Err()
		r.latency.WithLabelValues("ping").Observe(time.Since(start).Seconds())
		if err != nil {
			return
		}
		r.forgetCompiled() // what changed while it was away is read again
		r.setUp(true, nil)
	}
	if c, err := r.fetch(ctx, ""); err == nil {
		r.unscoped.Store(c)
	}
}
