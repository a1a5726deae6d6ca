package generate

import (
	"regexp"
	"strings"
	"testing"
)

// TestPatternWalkMatches: a pattern the walk vouches for (no assertion but anchors at its ends)
// is not checked with the compiled regexp, so every string it builds must match; one with an
// assertion in the middle is checked, and falls back to words when it cannot match.
func TestPatternWalkMatches(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		trusted bool
	}{
		{`^[0-9]{5}$`, true}, {`(?i)ab+c?`, true}, {`^(\w+)@(\w+)\.com$`, true}, {`[^a-z]{3,}`, true},
		{`(?m)^x|y$`, false}, {`a\bb`, false}, {`\bfoo\b`, false}, {`(a|b)*c{3,5}`, true}, {`[\p{Greek}]+`, true},
	} {
		schema := `{"type":"string","pattern":` + quote(tt.pattern) + `}`
		re := regexp.MustCompile(tt.pattern)
		for stream := range uint64(20) {
			var r rng
			r.seed(subSeed([32]byte{}, "pattern", stream, 0))
			var b pieceBuilder
			g := schemaGen{r: &r, b: &b, cache: newRequestCache()}
			p := g.pattern(tt.pattern)
			if p.trusted != tt.trusted {
				t.Fatalf("%s: trusted = %v", tt.pattern, p.trusted)
			}
			v, ok := g.patterned(p, 0, -1)
			if ok && !re.MatchString(v) {
				t.Fatalf("%s: %q does not match", tt.pattern, v)
			}
			if tt.pattern == `a\bb` && ok {
				t.Fatalf("%s: %q passed off as a match", tt.pattern, v)
			}
		}
		if tt.pattern != `a\bb` { // no string matches it
			validateInstance(t, schema, strings.Join(instance(schema, 3), ""))
		}
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// TestPatternBudgets: a pattern whose program would be huge is never compiled, and checks stop
// when the request's budget is spent.
func TestPatternBudgets(t *testing.T) {
	huge := `\b` + strings.Repeat(`[a-z]{1000}`, 3000) // 33 KB; 3 million instructions
	var r rng
	var b pieceBuilder
	g := schemaGen{r: &r, b: &b, cache: newRequestCache()}
	p := g.pattern(huge)
	if p.trusted || p.insts < 3_000_000 {
		t.Fatalf("trusted %v, %d instructions", p.trusted, p.insts)
	}
	if g.matches(p, []byte("abc")) || p.re != nil || g.cache.compileInsts != maxCompileInsts {
		t.Fatal("the huge pattern was compiled")
	}

	small := g.pattern(`\bab\b`)
	for g.matches(small, []byte("ab")) {
	}
	if g.cache.matchSteps < 0 || g.cache.matchSteps >= small.insts*3 {
		t.Fatalf("%d steps left after the budget ran out", g.cache.matchSteps)
	}
}

// TestPatternClampedByCeiling: near the choice's ceiling the walk stops where the answer is cut,
// instead of building the whole match.
func TestPatternClampedByCeiling(t *testing.T) {
	var r rng
	var b pieceBuilder
	b.limit(100, 50)
	g := schemaGen{r: &r, b: &b, cache: newRequestCache()}
	v, ok := g.patterned(g.pattern(`[a-z]{1000}`), 0, -1)
	if !ok || len(v) != 51 || g.steps > 60 {
		t.Fatalf("got %d bytes after %d steps, want 51 (one past the room)", len(v), g.steps)
	}
}
