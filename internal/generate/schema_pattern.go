package generate

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"mockgateway/internal/regexcost"
)

// Limits of pattern generation. A pattern is cheap to send and was expensive to honor: "[a-z]
// {1000}" sixteen times is 300 bytes, compiles to 16,000 instructions, and checking one 16,000
// byte candidate against it costs 256 million steps. So the walk that builds a candidate is
// bounded in bytes and steps, a candidate is checked with the compiled regexp only when the walk
// cannot vouch for it, and compiling and checking draw on budgets shared by the whole request.
const (
	patternAttempts = 6
	maxPatternBytes = 4 * maxStringRunes // longest candidate built
	maxWalkSteps    = 1 << 16            // nodes one walk may visit (empty repetitions write nothing)
	maxCompileInsts = 1 << 16            // instructions a request may compile for checks
	maxMatchSteps   = 1 << 22            // bytes × instructions a request may spend on checks
)

// pattern is a pattern parsed for generation, shared by the request's choices. It is compiled
// for checking only when first needed.
type pattern struct {
	src  string
	tree *syntax.Regexp
	// trusted is set when every walk that succeeds builds a match (no assertion such as \b or a
	// ^ in the middle can fail it), so candidates need no check.
	trusted  bool
	insts    int // the program size, estimated from the tree
	re       *regexp.Regexp
	compiled bool
	classes  map[*syntax.Regexp][]rune // preferred members of each character class
}

// pattern returns the request's parsed pattern, or nil when Go cannot read it (then the pattern
// is ignored). Parsing does not expand repetitions, so it costs the pattern's length.
func (g *schemaGen) pattern(src string) *pattern {
	if p, ok := g.cache.patterns[src]; ok {
		return p
	}
	var p *pattern
	if tree, err := syntax.Parse(src, syntax.Perl); err == nil {
		p = &pattern{src: src, tree: tree, trusted: anchorsOnlyAtEnds(tree), insts: regexcost.Of(tree).Size()}
	}
	if g.cache.patterns == nil {
		g.cache.patterns = make(map[string]*pattern)
	}
	g.cache.patterns[src] = p
	return p
}

// matches checks s against the compiled pattern within the request's budgets; false when the
// budgets do not allow the check, so an unverifiable candidate is never passed off as a match.
func (g *schemaGen) matches(p *pattern, s []byte) bool {
	if !p.compiled {
		p.compiled = true
		if p.insts <= g.cache.compileInsts {
			g.cache.compileInsts -= p.insts
			p.re, _ = regexp.Compile(p.src)
		}
	}
	cost := (len(s) + 1) * p.insts
	if p.re == nil || cost > g.cache.matchSteps {
		return false
	}
	g.cache.matchSteps -= cost
	return p.re.Match(s)
}

// patterned builds a string that matches the pattern (read as a Go regular expression, as the
// Go JSON Schema validators do) and fits the length bounds, by walking the parsed expression:
// literals are copied, classes yield a member (letters and digits first), repetitions repeat a
// few times, alternations pick a branch. A pattern this cannot satisfy (assertions that fail,
// conflicting lengths) falls back to plain words instead of producing a wrong match.
//
// When the choice's ceiling is nearer than maxPatternBytes the walk stops there, which clamps
// every repetition to what can still be shown: the string is then cut with the answer.
func (g *schemaGen) patterned(p *pattern, minL, maxL int) (string, bool) {
	limit := maxPatternBytes
	capped := false
	if room := g.b.room(); room < limit {
		limit, capped = room, true
	}
	for attempt := range patternAttempts {
		// Later attempts stretch unbounded repetitions towards minLength.
		stretch := 0
		if attempt >= patternAttempts/2 {
			stretch = minL
		}
		g.scratch = g.scratch[:0]
		g.steps = 0
		if !g.regexWalk(p, p.tree, stretch, limit) {
			if capped && len(g.scratch) > limit {
				return string(g.scratch), true // runs past the ceiling: only its start is seen
			}
			continue
		}
		n := utf8.RuneCount(g.scratch)
		if n >= minL && (maxL < 0 || n <= maxL) && (p.trusted || g.matches(p, g.scratch)) {
			return string(g.scratch), true
		}
	}
	return "", false
}

// regexWalk appends to g.scratch a string matched by re; false when it cannot, or when the
// string would pass limit bytes or the walk maxWalkSteps steps.
func (g *schemaGen) regexWalk(p *pattern, re *syntax.Regexp, stretch, limit int) bool {
	g.steps++
	if len(g.scratch) > limit || g.steps > maxWalkSteps {
		return false
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return false
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			g.scratch = utf8.AppendRune(g.scratch, c)
		}
	case syntax.OpCharClass:
		cand := p.classMembers(re)
		if len(cand) == 0 {
			return false
		}
		g.scratch = utf8.AppendRune(g.scratch, cand[g.r.intn(len(cand))])
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		g.scratch = append(g.scratch, byte('a'+g.r.intn(26)))
	case syntax.OpCapture:
		return g.regexWalk(p, re.Sub[0], stretch, limit)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 {
			// Unbounded: a few repetitions, or minLength more when stretching.
			lo += stretch
		}
		lo = min(lo, maxStringRunes)
		top := lo + 2
		if hi >= 0 {
			top = min(top, hi)
		}
		count := g.r.between(lo, max(top, lo))
		if sub := re.Sub[0]; sub.Op == syntax.OpCharClass {
			return g.repeatClass(p, sub, count, limit)
		}
		for range count {
			if !g.regexWalk(p, re.Sub[0], stretch, limit) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !g.regexWalk(p, sub, stretch, limit) {
				return false
			}
		}
	case syntax.OpAlternate:
		return g.regexWalk(p, re.Sub[g.r.intn(len(re.Sub))], stretch, limit)
	}
	// Anchors, word boundaries and the empty match write nothing.
	return true
}

// repeatClass is count walks of the class node sub, step for step and draw for draw, without a
// call and a cache lookup per character: "[a-z]{1000}" is the common long pattern.
func (g *schemaGen) repeatClass(p *pattern, sub *syntax.Regexp, count, limit int) bool {
	cand := p.classMembers(sub)
	for range count {
		g.steps++
		if len(g.scratch) > limit || g.steps > maxWalkSteps || len(cand) == 0 {
			return false
		}
		g.scratch = utf8.AppendRune(g.scratch, cand[g.r.intn(len(cand))])
	}
	return true
}

// classMembers returns the runes a character class (pairs of inclusive ranges) yields: its ASCII
// letters and digits when it has any, else its printable ASCII, else the first valid rune of a
// range. They are computed once per class node: "[a-z]{1000}" visits one node a thousand times.
func (p *pattern) classMembers(re *syntax.Regexp) []rune {
	if cand, ok := p.classes[re]; ok {
		return cand
	}
	ranges := re.Rune
	in := func(c rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= c && c <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	var cand []rune
	for _, span := range [...][2]rune{{'a', 'z'}, {'A', 'Z'}, {'0', '9'}} {
		for c := span[0]; c <= span[1]; c++ {
			if in(c) {
				cand = append(cand, c)
			}
		}
	}
	if len(cand) == 0 {
		for c := rune(' '); c <= '~'; c++ {
			if in(c) {
				cand = append(cand, c)
			}
		}
	}
	if len(cand) == 0 {
	search:
		for i := 0; i+1 < len(ranges); i += 2 {
			for c := ranges[i]; c <= ranges[i+1] && c-ranges[i] < 4096; c++ {
				if utf8.ValidRune(c) && c >= 0x20 {
					cand = append(cand, c)
					break search
				}
			}
		}
	}
	if p.classes == nil {
		p.classes = make(map[*syntax.Regexp][]rune)
	}
	p.classes[re] = cand
	return cand
}
