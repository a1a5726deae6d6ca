package main

import (
	"fmt"
	"time"
)

const (
	goroutineSlack = 10               // goroutines allowed above the idle count once idle again
	rssSlack       = 16 << 20         // bytes of RSS growth always allowed
	rssGrowth      = 1.20             // and this factor
	minWarmup      = 30 * time.Second // the span buffer (4096 spans) fills in the first minute
	goroutineGrow  = 1.5              // during traffic: second half's max vs first half's max
)

// judgeSoak decides whether RSS or goroutines grow without bound, and whether anything
// unexpected happened.
//
//   - Warm-up: samples before max(30s, 20% of the duration) are not judged: the span buffer and
//     the runtime's heap fill up to their steady state there.
//   - RSS: the median of the second half of the judged samples must stay within 1.2× the
//     median of the first half plus 16 MiB. A bounded process plateaus; a leak keeps climbing,
//     and at 50 req/s over minutes it climbs by far more than that.
//   - Goroutines under traffic: the second half's maximum within 1.5× the first half's plus 50.
//   - Goroutines after traffic, with the client's connections closed: back to the idle count
//     before the soak plus 10, within 30s. This is the sharpest leak check.
//   - Unexpected outcomes (a wrong status or code, a stream without [DONE], a transport error
//     where none was asked for): none.
func judgeSoak(samples []soakSample, idle, after soakSample, unexpected int64, duration time.Duration) ([]string, bool) {
	var v []string
	failed := false
	warm := max(minWarmup, duration/5)
	var judged []soakSample
	for _, s := range samples {
		if s.Label == "" && s.At >= warm {
			judged = append(judged, s)
		}
	}
	if len(judged) >= 4 {
		h := len(judged) / 2
		first, second := judged[:h], judged[len(judged)-h:]
		medRSS := func(ss []soakSample) float64 {
			var x []float64
			for _, s := range ss {
				x = append(x, float64(s.RSS))
			}
			return median(x)
		}
		maxG := func(ss []soakSample) float64 {
			m := 0.0
			for _, s := range ss {
				m = max(m, s.Goroutines)
			}
			return m
		}
		r1, r2 := medRSS(first), medRSS(second)
		limit := r1*rssGrowth + rssSlack
		if r2 > limit {
			failed = true
			v = append(v, fmt.Sprintf("FAIL: RSS grows: median %s MB in the second half vs %s MB in the first (limit %s MB)", mb(int64(r2)), mb(int64(r1)), mb(int64(limit))))
		} else {
			v = append(v, fmt.Sprintf("ok: RSS bounded: median %s MB in the second half vs %s MB in the first (limit %s MB)", mb(int64(r2)), mb(int64(r1)), mb(int64(limit))))
		}
		g1, g2 := maxG(first), maxG(second)
		glimit := g1*goroutineGrow + 50
		if g2 > glimit {
			failed = true
			v = append(v, fmt.Sprintf("FAIL: goroutines grow under traffic: max %.0f in the second half vs %.0f in the first (limit %.0f)", g2, g1, glimit))
		} else {
			v = append(v, fmt.Sprintf("ok: goroutines bounded under traffic: max %.0f in the second half vs %.0f in the first (limit %.0f)", g2, g1, glimit))
		}
	} else {
		v = append(v, fmt.Sprintf("note: growth under traffic not judged: %d samples after the %s warm-up (need 4; run longer)", len(judged), warm))
	}
	if after.Goroutines > idle.Goroutines+goroutineSlack {
		failed = true
		v = append(v, fmt.Sprintf("FAIL: goroutines did not return to idle: %.0f after vs %.0f before (slack %d)", after.Goroutines, idle.Goroutines, goroutineSlack))
	} else {
		v = append(v, fmt.Sprintf("ok: goroutines back to idle: %.0f after vs %.0f before", after.Goroutines, idle.Goroutines))
	}
	if after.StreamsActive != 0 {
		failed = true
		v = append(v, fmt.Sprintf("FAIL: %.0f streams still active after the traffic", after.StreamsActive))
	}
	if unexpected > 0 {
		failed = true
		v = append(v, fmt.Sprintf("FAIL: %d unexpected outcomes", unexpected))
	} else {
		v = append(v, "ok: no unexpected outcome")
	}
	return v, failed
}
