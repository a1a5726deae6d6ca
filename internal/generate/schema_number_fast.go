package generate

import "strconv"

// The exact path of number allocates a dozen big.Rat values per number. Most schemas give
// integer bounds or none and no multipleOf; then the same choice is made in int64 arithmetic,
// drawing the same random numbers, so the answer is unchanged and an array of thousands of
// numbers costs what it writes.

// maxFastBound keeps scaled bounds and spans far from overflowing int64.
const maxFastBound = 1 << 40

// numberFast writes what numberExact would write, when it can do so without rationals; false
// (having written and drawn nothing) when the schema needs the exact path.
func (g *schemaGen) numberFast(s *jvalue, integer bool) bool {
	if s.get("multipleOf") != nil {
		return false
	}
	lo, loEx, loOK, ok1 := intBound(s, "minimum", "exclusiveMinimum", 1)
	hi, hiEx, hiOK, ok2 := intBound(s, "maximum", "exclusiveMaximum", -1)
	if !ok1 || !ok2 {
		return false
	}
	scale := int64(100) // numbers have two decimals
	if integer {
		scale = 1
	}
	switch {
	case !loOK && !hiOK:
		lo, hi = 0, defaultSpan
	case !loOK:
		lo, loEx = hi-defaultSpan, false
	case !hiOK:
		hi, hiEx = lo+defaultSpan, false
	}
	kmin, kmax := lo*scale, hi*scale
	if loEx {
		kmin++
	}
	if hiEx {
		kmax--
	}
	if kmin > kmax {
		switch {
		case !hiOK:
			kmax = kmin
		case !loOK:
			kmin = kmax
		case integer:
			g.b.add(strconv.FormatInt(kmin, 10)) // no integer fits: the exact path writes kmin too
			return true
		default:
			return false // the exact path refines the step
		}
	}
	k := kmin + int64(g.r.uint64n(uint64(kmax-kmin+1)))
	if integer {
		g.b.add(strconv.FormatInt(k, 10))
	} else {
		g.b.add(formatHundredths(k))
	}
	return true
}

// intBound reads a bound as bounds does, when every literal involved is an integer within
// maxFastBound; ok is false otherwise. present is false when the schema has no such bound.
func intBound(s *jvalue, inclusiveKey, exclusiveKey string, sign int64) (v int64, exclusive, present, ok bool) {
	if b := s.get(inclusiveKey); b != nil && b.kind == jNumber {
		if v, ok = smallInt(b.s); !ok {
			return 0, false, false, false
		}
		present = true
	}
	switch ex := s.get(exclusiveKey); {
	case ex == nil:
	case ex.kind == jBool:
		exclusive = ex.b && present
	case ex.kind == jNumber:
		e, ok := smallInt(ex.s)
		if !ok {
			return 0, false, false, false
		}
		if !present || (e-v)*sign >= 0 {
			v, exclusive, present = e, true, true
		}
	}
	return v, exclusive, present, true
}

func smallInt(lit string) (int64, bool) {
	v, err := strconv.ParseInt(lit, 10, 64)
	return v, err == nil && -maxFastBound <= v && v <= maxFastBound
}

// formatHundredths writes k/100 as formatRat does: as few decimals as the value needs.
func formatHundredths(k int64) string {
	var buf [24]byte
	out := buf[:0]
	if k < 0 {
		out = append(out, '-')
		k = -k
	}
	out = strconv.AppendInt(out, k/100, 10)
	switch frac := k % 100; {
	case frac == 0:
	case frac%10 == 0:
		out = append(out, '.', byte('0'+frac/10))
	default:
		out = append(out, '.', byte('0'+frac/10), byte('0'+frac%10))
	}
	return string(out)
}
