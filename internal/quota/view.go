package quota

import (
	"cmp"
	"slices"
	"time"
)

// View is one key's buckets as a store holds them, replenished to now, for a console or an
// admin endpoint: whose they are (the model, the scope, the organization — OpenAI's org-… id,
// derived from the client key's hash: never the key), the limits in effect (Window the period
// of rpm and tpm, a minute when none was given) and each bucket as a Status has it.
type View struct {
	Model, Scope, Org         string
	Limits                    Limits
	Requests, Tokens, Daily   Bucket
	InputTokens, OutputTokens Bucket
}

// ViewOf is the view of key's buckets under l at levels lv, last replenished elapsed ago.
func ViewOf(key *Key, l Limits, lv Levels, elapsed time.Duration) View {
	size, period := caps(&l)
	l.Window = l.Period()
	v := View{Model: key.Model, Scope: key.Scope, Org: key.Org.String(), Limits: l}
	bs := [nBuckets]*Bucket{&v.Requests, &v.Tokens, &v.Daily, &v.InputTokens, &v.OutputTokens}
	for i, b := range bs {
		if size[i] > 0 {
			*b = bucket(clamp(refill(lv[i], size[i], period[i], elapsed), size[i]), size[i], period[i])
		}
	}
	return v
}

// List is the views of scope's keys whose buckets are not all full (a full bucket is one never
// drawn from, as the store forgets it), at most limit (none below 1): those that will be full
// last first. It looks at every key kept, a bounded number.
func (b *Buckets) List(scope string, limit int) []View {
	if limit < 1 {
		return nil
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	var es []*entry
	for _, el := range b.keys {
		if e := el.Value.(*entry); e.key.Scope == scope && now.Before(e.full) {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(x, y *entry) int {
		return cmp.Or(y.full.Compare(x.full), cmp.Compare(y.key.ID, x.key.ID))
	})
	vs := make([]View, 0, min(limit, len(es)))
	for _, e := range es[:min(limit, len(es))] {
		vs = append(vs, ViewOf(&e.key, e.limits, e.levels, now.Sub(e.last)))
	}
	return vs
}
