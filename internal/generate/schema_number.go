package generate

import (
	"math"
	"math/big"
	"strconv"
)

// parseRat parses a JSON number literal exactly. Literals whose magnitude float64 cannot hold are
// refused: big.Rat would happily expand "1e999999999" into a billion digits.
func parseRat(lit string) (*big.Rat, bool) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || f != 0 && math.Abs(f) < 1e-300 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(lit)
	return r, ok
}

func parseRatValue(v *jvalue) (*big.Rat, bool) {
	if v == nil || v.kind != jNumber {
		return nil, false
	}
	return parseRat(v.s)
}

// bounds returns the lower or upper bound of a numeric schema and whether it is exclusive. Both
// the 2020-12 numeric exclusiveMinimum/exclusiveMaximum and the draft-4 boolean form are read;
// when inclusive and exclusive bounds are both given, the tighter one wins.
func bounds(s *jvalue, inclusiveKey, exclusiveKey string, sign int) (*big.Rat, bool) {
	b, _ := parseRatValue(s.get(inclusiveKey))
	exclusive := false
	switch ex := s.get(exclusiveKey); {
	case ex == nil:
	case ex.kind == jBool:
		exclusive = ex.b && b != nil
	default:
		if e, ok := parseRatValue(ex); ok && (b == nil || e.Cmp(b)*sign >= 0) {
			b, exclusive = e, true
		}
	}
	return b, exclusive
}

// defaultSpan is the width of the range numbers are drawn from when a side is unbounded.
const defaultSpan = 100

// number writes an integer or a number that satisfies minimum, maximum, the exclusive bounds and
// multipleOf. It works in exact rationals, as validators do, so that 0.1*3 is "0.3" and passes a
// multipleOf 0.1 check; the common case of integer bounds and no multipleOf takes a shortcut
// that gives the same value (schema_number_fast.go).
func (g *schemaGen) number(s *jvalue, integer bool) {
	if g.numberFast(s, integer) {
		return
	}
	g.numberExact(s, integer)
}

func (g *schemaGen) numberExact(s *jvalue, integer bool) {
	lo, loEx := bounds(s, "minimum", "exclusiveMinimum", 1)
	hi, hiEx := bounds(s, "maximum", "exclusiveMaximum", -1)
	multiple, _ := parseRatValue(s.get("multipleOf"))
	if multiple != nil && multiple.Sign() <= 0 {
		multiple = nil
	}

	var step *big.Rat
	switch {
	case multiple != nil && integer:
		// Integers that are multiples of p/q (in lowest terms) are the multiples of p.
		step = new(big.Rat).SetInt(multiple.Num())
	case multiple != nil:
		step = multiple
	case integer:
		step = big.NewRat(1, 1)
	default:
		step = big.NewRat(1, 100) // two decimals read naturally
	}

	k, ok := g.pickMultiple(lo, loEx, hi, hiEx, step)
	// A narrow range of plain numbers needs finer steps: 0.001 < x < 0.002.
	for refine := 0; !ok && multiple == nil && !integer && refine < 12; refine++ {
		step = new(big.Rat).Quo(step, big.NewRat(10, 1))
		k, ok = g.pickMultiple(lo, loEx, hi, hiEx, step)
	}
	val := new(big.Rat).Mul(new(big.Rat).SetInt(k), step)
	g.b.add(formatRat(val))
}

// pickMultiple picks k uniformly such that k*step lies within the bounds. A missing side is
// replaced by a soft bound defaultSpan away from the other (or 0..defaultSpan when both are
// missing); ok is false when the hard bounds admit no multiple.
func (g *schemaGen) pickMultiple(lo *big.Rat, loEx bool, hi *big.Rat, hiEx bool,
	step *big.Rat) (*big.Int, bool) {
	loSoft, hiSoft := lo == nil, hi == nil
	span := big.NewRat(defaultSpan, 1)
	switch {
	case loSoft && hiSoft:
		lo, hi = new(big.Rat), span
	case loSoft:
		lo, loEx = new(big.Rat).Sub(hi, span), false
	case hiSoft:
		hi, hiEx = new(big.Rat).Add(lo, span), false
	}

	q := new(big.Rat).Quo(lo, step)
	kmin := ceilRat(q)
	if loEx && q.IsInt() {
		kmin.Add(kmin, big.NewInt(1))
	}
	q.Quo(hi, step)
	kmax := floorRat(q)
	if hiEx && q.IsInt() {
		kmax.Sub(kmax, big.NewInt(1))
	}

	if kmin.Cmp(kmax) > 0 {
		switch {
		case hiSoft:
			kmax.Set(kmin)
		case loSoft:
			kmin.Set(kmax)
		default:
			return kmin, false
		}
	}
	width := new(big.Int).Sub(kmax, kmin)
	width.Add(width, big.NewInt(1))
	var off uint64
	if width.IsUint64() {
		off = g.r.uint64n(width.Uint64())
	} else {
		off = g.r.uint64n(1 << 62)
	}
	return kmin.Add(kmin, new(big.Int).SetUint64(off)), true
}

func floorRat(r *big.Rat) *big.Int {
	// Div rounds towards negative infinity for a positive divisor (Euclidean division).
	return new(big.Int).Div(r.Num(), r.Denom())
}

func ceilRat(r *big.Rat) *big.Int {
	f := floorRat(r)
	if !r.IsInt() {
		f.Add(f, big.NewInt(1))
	}
	return f
}

// formatRat writes r as a JSON number with exactly as many decimals as it needs.
func formatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// A rational has a finite decimal expansion when 10^d is a multiple of its denominator.
	ten := big.NewInt(10)
	pow := big.NewInt(1)
	rem := new(big.Int)
	for d := 1; d <= 400; d++ {
		pow.Mul(pow, ten)
		if rem.Mod(pow, r.Denom()).Sign() == 0 {
			return r.FloatString(d)
		}
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
