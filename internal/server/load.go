package server

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/catalog"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// loadGate is a model's simulated capacity (catalog capacity, queue): at most capacity
// requests are served at once, at most queue more wait for a place, in the order they came,
// and any beyond are refused as overloaded. A waiting request parks its own goroutine on its
// place's channel and nothing else: a client that leaves gives its place up. One gate per
// model, shared by every dialect's routes.
type loadGate struct {
	capacity, queue int
	factor          float64 // the model's load_factor
	running, queued interface {
		Inc()
		Dec()
	}

	mu      sync.Mutex
	serving int
	waiting list.List // of chan struct{}: closed when the place is handed over
}

// newLoadGates are the gates of the catalog's models that have a capacity, by id.
func newLoadGates(c *catalog.Catalog, m *observability.Metrics) map[string]*loadGate {
	gates := map[string]*loadGate{}
	for _, model := range c.Executable() {
		if model.Capacity > 0 {
			g := &loadGate{capacity: model.Capacity, queue: model.Queue, factor: model.LoadFactor}
			g.running, g.queued = m.ModelLoad(model.ID)
			gates[model.ID] = g
		}
	}
	return gates
}

// enter takes a place: at once if one is free, else after waiting in the queue (queued). It
// returns how many requests are served with this one, and false when the request is refused
// (the queue is full) or its client left while it waited (ctx done).
func (g *loadGate) enter(ctx context.Context) (serving int, queued, ok bool) {
	g.mu.Lock()
	if g.serving < g.capacity {
		g.serving++
		n := g.serving
		g.mu.Unlock()
		g.running.Inc()
		return n, false, true
	}
	if g.waiting.Len() >= g.queue {
		g.mu.Unlock()
		return 0, false, false
	}
	place := make(chan struct{})
	el := g.waiting.PushBack(place)
	g.mu.Unlock()
	g.queued.Inc()
	defer g.queued.Dec()
	select {
	case <-place:
		return g.capacity, true, true // handed over by leave: serving is unchanged, full
	case <-ctx.Done():
		g.mu.Lock()
		select {
		case <-place: // handed over as the client left: pass it on
			g.mu.Unlock()
			g.leave()
		default:
			g.waiting.Remove(el)
			g.mu.Unlock()
		}
		return 0, true, false
	}
}

// leave gives the place up: to the request that has waited longest, else to no one.
func (g *loadGate) leave() {
	g.running.Dec()
	g.mu.Lock()
	defer g.mu.Unlock()
	if front := g.waiting.Front(); front != nil {
		g.waiting.Remove(front)
		g.running.Inc()
		close(front.Value.(chan struct{}))
		return
	}
	g.serving--
}

// loaded is latency l as it grows with load: each of its durations times
// f = 1 + (F−1)·(serving−1)/(capacity−1), so that a request alone waits as it would on a model
// without a capacity, and one among capacity others F times as long.
func (g *loadGate) loaded(l simulation.Latency, serving int) simulation.Latency {
	if g.factor <= 1 || serving <= 1 || g.capacity < 2 {
		return l
	}
	f := 1 + (g.factor-1)*float64(serving-1)/float64(g.capacity-1)
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	return simulation.Latency{FirstChunk: scale(l.FirstChunk), BetweenChunks: scale(l.BetweenChunks), Jitter: scale(l.Jitter)}
}

// enterLoad takes the served model's place (sim.held, given up in finish), its wait recorded in
// the span and the access line and part of the time to first chunk; the latency grows with
// the requests served (loaded). A request the queue has no room for is refused as the
// dialect refuses an overloaded model; false with a nil error: the client left while waiting.
//
//go:noinline
func (h *chatHandler) enterLoad(ctx context.Context, w http.ResponseWriter, sim *simulated, span trace.Span) (bool, error) {
	g := h.loads[sim.served.ID]
	start := time.Now()
	serving, queued, ok := g.enter(ctx)
	rec := observability.RecordFrom(ctx)
	if queued {
		waited := time.Since(start)
		rec.QueueWait = waited
		span.SetAttributes(attribute.Int64("mockgateway.simulation.queue_wait_ms", waited.Milliseconds()))
	}
	if !ok {
		if ctx.Err() != nil {
			rec.Status = 499 // client closed the request
			return false, nil
		}
		rec.Fault = quota.Overloaded.Fault()
		h.metrics.ObserveQuotaRefusal(sim.served.ID, string(quota.Overloaded))
		noteLimit(rec, string(quota.Overloaded))
		return false, h.dialect.OverloadError(w.Header())
	}
	if sim.held == nil {
		sim.held = &held{}
	}
	sim.held.gate = g
	sim.latency = g.loaded(sim.latency, serving)
	return true, nil
}

// held is what a call holds of its model's simulated quota and capacity until it ends.
type held struct {
	quota *quotaAdmission // what it drew from the requested model's quota; nil: no limits
	gate  *loadGate       // the served model's capacity, whose place it holds; nil: none
}

// finish is what a call that drew from its model's quota or took a place does when it ends:
// the quota settled to what it used (settleQuota), the place given up.
func (h *chatHandler) finish(ctx context.Context, sim *simulated, rec *observability.Record) {
	if sim.held == nil {
		return
	}
	h.settleQuota(ctx, sim.held.quota, rec)
	if g := sim.held.gate; g != nil {
		g.leave()
		sim.held.gate = nil
	}
}
