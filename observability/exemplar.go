package observability

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// exemplarLabels returns the trace id of a sampled span in ctx, or nil. Only sampled spans are
// exported, so an exemplar never points at a trace that no backend has.
func exemplarLabels(ctx context.Context) prometheus.Labels {
	rec, _ := ctx.Value(recordKey{}).(*Record)
	if rec != nil && rec.exemplarChecked {
		return rec.exemplar
	}
	var labels prometheus.Labels
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() {
		labels = prometheus.Labels{"trace_id": sc.TraceID().String()}
	}
	if rec != nil {
		rec.exemplar, rec.exemplarChecked = labels, true
	}
	return labels
}

// exemplarGate samples exemplars: a family takes at most one every exemplarInterval. Prometheus
// keeps only the latest exemplar of a series per scrape, and building one costs several
// allocations, so at light traffic every request leaves its trace id and under load a steady
// sample does, without making telemetry the request's largest cost.
type exemplarGate struct{ last atomic.Int64 }

const exemplarInterval = int64(100 * time.Millisecond)

// open takes the slot if the interval has passed since the last exemplar at now (unix ns). The
// common answer under load, "no", costs one atomic load.
func (g *exemplarGate) open(now int64) bool {
	last := g.last.Load()
	return now-last >= exemplarInterval && g.last.CompareAndSwap(last, now)
}

// exemplarFor returns the exemplar to attach at now, or nil: the gate is looked at before the
// trace id is, so most observations under load cost neither a context walk nor labels. now is
// passed in: a request's observations share one clock reading.
func exemplarFor(ctx context.Context, now int64, g *exemplarGate) prometheus.Labels {
	if now-g.last.Load() < exemplarInterval {
		return nil
	}
	if ex := exemplarLabels(ctx); ex != nil && g.open(now) {
		return ex
	}
	return nil
}

// addWithExemplar adds v to c, with the exemplar when the gate gives one and c takes it (the
// no-op Metrics' discard takes none).
func addWithExemplar(ctx context.Context, now int64, g *exemplarGate, c counter, v float64) {
	if ex := exemplarFor(ctx, now, g); ex != nil {
		if ea, ok := c.(prometheus.ExemplarAdder); ok {
			ea.AddWithExemplar(v, ex)
			return
		}
	}
	c.Add(v)
}

func observeWithExemplar(ctx context.Context, now int64, g *exemplarGate, o prometheus.Observer, v float64) {
	if ex := exemplarFor(ctx, now, g); ex != nil {
		if eo, ok := o.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(v, ex)
			return
		}
	}
	o.Observe(v)
}
