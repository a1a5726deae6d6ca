package quota

import (
	"encoding/hex"
	"math"
	"time"
)

// Kind is the limit a refusal hit, the label of the refusals counter and the journal's word.
type Kind string

// The limits a request can hit.
const (
	Requests     Kind = "requests"      // requests per window
	Tokens       Kind = "tokens"        // tokens per window: input and output
	Daily        Kind = "daily"         // requests per day
	InputTokens  Kind = "input_tokens"  // input tokens per window
	OutputTokens Kind = "output_tokens" // output tokens per window
)

// Overloaded is the word for a request its model's simulated capacity and queue had no room
// for: not a bucket's limit, but counted and journaled beside them.
const Overloaded Kind = "overloaded"

// Refusals are every word a refusal has: each bucket's, and Overloaded.
func Refusals() []Kind { return []Kind{Requests, Tokens, Daily, InputTokens, OutputTokens, Overloaded} }

// Fault is the access line's fault word for a refusal: quota_ and its bucket, or overloaded.
func (k Kind) Fault() string {
	if k == Overloaded {
		return string(k)
	}
	return "quota_" + string(k)
}

// Bucket is what one bucket says after a request: its limit, what is left, and how long until
// it is full again. Limit 0: the model has no limit of this kind.
type Bucket struct {
	Limit     int
	Remaining int
	Reset     time.Duration
}

// Usage is what a request asks of the token buckets at admission — its input tokens and its
// output budget — or how far what it used differs from that when it ends.
type Usage struct {
	Input, Output int
}

// Status is what the buckets said of one request: admitted (Refused "") or refused, and each
// bucket after it. A dialect shows it in its provider's words.
type Status struct {
	Limits                    Limits
	Requests, Tokens, Daily   Bucket
	InputTokens, OutputTokens Bucket
	Refused                   Kind          // "" when admitted
	TooLarge                  bool          // refused: it asks more tokens than the whole bucket holds
	RetryAfter                time.Duration // refused: until the bucket holds what it asks
	Requested                 int           // refused: what it asked of the refusing bucket
}

// Bucket is the refusing bucket of a refused request (the requests bucket otherwise).
func (s *Status) Bucket() Bucket {
	switch s.Refused {
	case Tokens:
		return s.Tokens
	case Daily:
		return s.Daily
	case InputTokens:
		return s.InputTokens
	case OutputTokens:
		return s.OutputTokens
	}
	return s.Requests
}

// TokenBucket is the most restrictive of the token buckets in effect (tokens, input tokens,
// output tokens): the one with the least remaining, the later reset of two alike. What a
// provider that shows one token count shows.
func (s *Status) TokenBucket() Bucket {
	var t Bucket
	for _, b := range [...]Bucket{s.Tokens, s.InputTokens, s.OutputTokens} {
		if b.Limit > 0 && (t.Limit == 0 || b.Remaining < t.Remaining || b.Remaining == t.Remaining && b.Reset > t.Reset) {
			t = b
		}
	}
	return t
}

// The buckets, in the order a request is checked against them: their index in Levels.
const (
	iRequests = iota
	iTokens
	iDaily
	iInput
	iOutput
	nBuckets
)

// kinds are the buckets' kinds, in the Levels order.
var kinds = [nBuckets]Kind{Requests, Tokens, Daily, InputTokens, OutputTokens}

// Levels is what the buckets hold, in requests and tokens, fractions included.
type Levels [nBuckets]float64

// caps are l's bucket sizes and periods, in the Levels order.
func caps(l *Limits) (c [nBuckets]float64, p [nBuckets]time.Duration) {
	w := l.Period()
	return [nBuckets]float64{float64(l.Requests), float64(l.Tokens), float64(l.Daily), float64(l.InputTokens), float64(l.OutputTokens)},
		[nBuckets]time.Duration{w, w, Day, w, w}
}

// needs is what a request asking u takes of each bucket, in the Levels order.
func needs(u Usage) [nBuckets]float64 {
	return [nBuckets]float64{1, float64(u.Input + u.Output), 1, float64(u.Input), float64(u.Output)}
}

// buckets are s's buckets, in the Levels order.
func (s *Status) buckets() [nBuckets]*Bucket {
	return [nBuckets]*Bucket{&s.Requests, &s.Tokens, &s.Daily, &s.InputTokens, &s.OutputTokens}
}

// refill is a bucket's level after elapsed: it replenishes continuously, at its size per
// period, up to its size.
func refill(level, size float64, period, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return level
	}
	return math.Min(size, level+size*float64(elapsed)/float64(period))
}

// take is the admission of a request asking u of buckets at levels lv (replenished to now),
// as if it came ahead after now: it is checked against the levels replenished to now+ahead,
// and what it takes is taken from lv, which may so go below zero (a reservation: requests
// before now+ahead see the debt). It returns the levels after it and the refusing bucket's
// index (-1: admitted; a refused request takes nothing). A request asking more tokens than a
// token bucket holds when full is refused whatever the levels (tooLarge).
func take(l *Limits, lv Levels, u Usage, ahead time.Duration) (after Levels, refused int, tooLarge bool) {
	size, period := caps(l)
	need := needs(u)
	for _, i := range [...]int{iTokens, iInput, iOutput} {
		if size[i] > 0 && need[i] > size[i] {
			return lv, i, true
		}
	}
	for i := range lv {
		// Held by the bucket by then, and owing at most one whole bucket now: a reservation
		// beyond that debt would be forgiven by the clamp, and admitted for nothing.
		if size[i] > 0 && (refill(lv[i], size[i], period[i], ahead) < need[i] || lv[i]-need[i] < -size[i]) {
			return lv, i, false
		}
	}
	for i := range lv {
		if size[i] > 0 {
			lv[i] -= need[i]
		}
	}
	return lv, -1, false
}

// settle is the levels lv corrected by delta, what an answer used beyond what its admission
// took: the token bucket by all of it, the output bucket by its output (input tokens count at
// admission only). A correction never takes a bucket below zero, or deeper into a debt.
func settle(lv Levels, delta Usage) Levels {
	for _, c := range [...]struct{ i, d int }{{iTokens, delta.Input + delta.Output}, {iOutput, delta.Output}} {
		lv[c.i] = max(min(0, lv[c.i]), lv[c.i]-float64(c.d))
	}
	return lv
}

// clamp is a bucket's level kept within what it can hold: its size, and as much debt as one
// whole bucket (a reservation's).
func clamp(level, size float64) float64 { return max(-size, min(size, level)) }

// StatusOf is the status of a request that asked u as if it came ahead after now, from the
// levels after it (at now, before they are clamped) and the refusing bucket (-1: admitted):
// what the buckets say at now+ahead, the request taken then — remaining, reset and retry
// counted from then. The store computes levels with the same arithmetic and hands them here.
func StatusOf(l *Limits, lv Levels, refused int, tooLarge bool, u Usage, ahead time.Duration) Status {
	size, period := caps(l)
	need := needs(u)
	s := Status{Limits: *l, TooLarge: tooLarge}
	for i, b := range s.buckets() {
		if size[i] == 0 {
			continue
		}
		if ahead > 0 {
			var taken float64
			if refused < 0 {
				taken = need[i]
			}
			lv[i] = refill(lv[i]+taken, size[i], period[i], ahead) - taken
		}
		lv[i] = clamp(lv[i], size[i])
		*b = bucket(lv[i], size[i], period[i])
	}
	if refused >= 0 {
		s.Refused = kinds[refused]
		s.Requested = int(need[refused])
		if !tooLarge {
			s.RetryAfter = until(need[refused]-lv[refused], size[refused], period[refused])
		}
	}
	return s
}

// bucket is what a bucket of size per period at level (clamped) says: never less than nothing
// remaining, and full again once any debt has refilled too.
func bucket(level, size float64, period time.Duration) Bucket {
	return Bucket{Limit: int(size), Remaining: int(max(0, level)), Reset: until(size-level, size, period)}
}

// until is how long a bucket of size per period takes to gain amount, rounded up to the
// millisecond.
func until(amount, size float64, period time.Duration) time.Duration {
	if amount <= 0 {
		return 0
	}
	d := time.Duration(math.Ceil(amount / size * float64(period)))
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// Org is the organization a client key stands for, as the providers name the owner of a
// limit: derived from the key's hash, so that each distinct key is its own organization and
// the key itself is never shown.
type Org [16]byte

// String is the organization as OpenAI's refusals name it: org- and 24 hex digits.
func (o Org) String() string { return "org-" + hex.EncodeToString(o[:12]) }

// Key names one model's buckets for one client key in one scope under one set of limits: ID
// tells them apart (a hash of all four, the client key hashed first), and the rest is what the
// store keeps beside the levels to list them (View) and forget a scope's — never the client
// key, only its organization.
type Key struct {
	ID    string
	Model string
	Scope string
	Org   Org
}

// Seconds is d in whole seconds, rounded up: what retry-after says.
func Seconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
