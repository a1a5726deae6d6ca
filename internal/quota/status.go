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
	Requests Kind = "requests" // requests per window
	Tokens   Kind = "tokens"   // tokens per window
	Daily    Kind = "daily"    // requests per day
)

// Overloaded is the word for a request its model's simulated capacity and queue had no room
// for: not a bucket's limit, but counted and journaled beside them.
const Overloaded Kind = "overloaded"

// Refusals are every word a refusal has: each bucket's, and Overloaded.
func Refusals() []Kind { return []Kind{Requests, Tokens, Daily, Overloaded} }

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

// Status is what the buckets said of one request: admitted (Refused "") or refused, and each
// bucket after it. A dialect shows it in its provider's words.
type Status struct {
	Limits                  Limits
	Requests, Tokens, Daily Bucket
	Refused                 Kind          // "" when admitted
	TooLarge                bool          // refused: it asks more tokens than the whole bucket holds
	RetryAfter              time.Duration // refused: until the bucket holds what it asks
	Requested               int           // refused: what it asked of the refusing bucket
}

// Bucket is the refusing bucket of a refused request (the requests bucket otherwise).
func (s *Status) Bucket() Bucket {
	switch s.Refused {
	case Tokens:
		return s.Tokens
	case Daily:
		return s.Daily
	}
	return s.Requests
}

// The three buckets, in the order a request is checked against them: their index in Levels.
const (
	iRequests = iota
	iTokens
	iDaily
)

// Levels is what the buckets hold, in requests and tokens, fractions included.
type Levels [3]float64

// caps are l's bucket sizes and periods, in the Levels order.
func caps(l *Limits) (c [3]float64, p [3]time.Duration) {
	return [3]float64{float64(l.Requests), float64(l.Tokens), float64(l.Daily)},
		[3]time.Duration{l.Period(), l.Period(), Day}
}

// refill is a bucket's level after elapsed: it replenishes continuously, at its size per
// period, up to its size.
func refill(level, size float64, period, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return level
	}
	return math.Min(size, level+size*float64(elapsed)/float64(period))
}

// take is the admission of a request asking tokens of buckets at levels lv (replenished to
// now), as if it came ahead after now: it is checked against the levels replenished to
// now+ahead, and what it takes is taken from lv, which may so go below zero (a reservation:
// requests before now+ahead see the debt). It returns the levels after it and the refusing
// bucket's index (-1: admitted; a refused request takes nothing). A request asking more tokens
// than the token bucket holds when full is refused whatever the levels (tooLarge).
func take(l *Limits, lv Levels, tokens int, ahead time.Duration) (after Levels, refused int, tooLarge bool) {
	size, period := caps(l)
	need := [3]float64{1, float64(tokens), 1}
	if size[iTokens] > 0 && need[iTokens] > size[iTokens] {
		return lv, iTokens, true
	}
	for i := range lv {
		if size[i] > 0 && refill(lv[i], size[i], period[i], ahead) < need[i] {
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

// clamp is a bucket's level kept within what it can hold: its size, and as much debt as one
// whole bucket (a reservation's).
func clamp(level, size float64) float64 { return max(-size, min(size, level)) }

// StatusOf is the status of a request that asked tokens as if it came ahead after now, from
// the levels after it (at now, before they are clamped) and the refusing bucket (-1:
// admitted): what the buckets say at now+ahead, the request taken then — remaining, reset and
// retry counted from then. The store computes levels with the same arithmetic and hands them
// here.
func StatusOf(l *Limits, lv Levels, refused int, tooLarge bool, tokens int, ahead time.Duration) Status {
	size, period := caps(l)
	need := [3]float64{1, float64(tokens), 1}
	s := Status{Limits: *l, TooLarge: tooLarge}
	bs := [3]*Bucket{&s.Requests, &s.Tokens, &s.Daily}
	for i, b := range bs {
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
		s.Refused = [3]Kind{Requests, Tokens, Daily}[refused]
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
