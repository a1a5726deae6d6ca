package regexcost

import (
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
)

func compiled(t *testing.T, src string) int {
	t.Helper()
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	p, err := syntax.Compile(re.Simplify())
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Inst)
}

// The estimate is what the bounds compare: it must never be below the program regexp compiles,
// or a pattern over the bound would be compiled; and near it, or patterns under the bound would
// be refused.
func TestProgramEstimate(t *testing.T) {
	for _, src := range []string{
		`a`, `weather`, `weather|sunny`, `(?i)weather in (paris|london)`, `^[a-z]+$`, `\d{3}-\d{4}`,
		`[^b]{1000}`, `[^z]{0,999}y`, `(ab){2,5}c`, `x{3,}`, `(a|b)*c`, `a{0,10}`, `(?:[^b]{10}){100}`,
		`^\s*$`, `\bfoo\b`, `((a)(b))+`, strings.Repeat(`[^b]{100}`, 7),
	} {
		got, want := mustParse(t, src).Insts, compiled(t, src)
		if got < want || got > want+want/4+8 {
			t.Errorf("%q: estimate %d, compiled %d", src, got, want)
		}
	}
}

func mustParse(t *testing.T, src string) Cost {
	t.Helper()
	c, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The issue's pattern, "[^b]{1000}" written three thousand times (30 KB), is estimated at its
// three million instructions from the parse alone: it is refused before regexp compiles it.
func TestProgramOfTheIssuesPattern(t *testing.T) {
	if n := mustParse(t, strings.Repeat(`[^b]{1000}`, 3000)).Size(); n < 3_000_000 {
		t.Fatalf("estimate %d", n)
	}
}

// Cost.Heap must cover what a compiled regexp holds, or the budgets would undercount it:
// anchored patterns (a one-pass program besides the plain one) and large classes included.
func TestHeapCoversCompiled(t *testing.T) {
	for _, src := range []string{`[^b]{1000}`, `[^z]{0,999}y`, strings.Repeat(`[a-z]{400}`, 10),
		`^[a-z]{1,400}$`, `^(?:[a-c]x){300}$`, `(?i)^[a-z]{1,400}$`, `^[\p{L}]{1,400}$`, `^[\p{Greek}]{1,400}$`,
		`^[^\p{L}]{400}$`, `^\p{L}+$`, `^(?i:[a-zäöü]){1,400}$`, `^[\p{Han}\p{Hiragana}]{1,200}$`} {
		// Ten copies, so that what other goroutines allocate meanwhile is lost in the average.
		var kept [10]*regexp.Regexp
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range kept {
			kept[i] = regexp.MustCompile(src)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := (int(after.HeapAlloc) - int(before.HeapAlloc)) / len(kept)
		if c := mustParse(t, src); c.Heap < held {
			t.Errorf("%q: counted %d bytes, holds %d", src, c.Heap, held)
		} else if c.Heap > 8*held+4096 {
			t.Errorf("%q: counted %d bytes, holds only %d", src, c.Heap, held)
		}
		runtime.KeepAlive(kept)
	}
}

func TestBudgetSpend(t *testing.T) {
	b := NewBudget(1000)
	if !b.Spend(9, 99) || b.Left() != 100 {
		t.Fatalf("left %d after 900 steps of 1000", b.Left())
	}
	if b.Spend(1, 100) || b.Left() != 100 {
		t.Fatalf("a spend of 101 of 100 left steps was allowed, or took something (left %d)", b.Left())
	}
	if d := NewBudget(0); d.Left() != DefaultBudget {
		t.Fatalf("default budget %d", d.Left())
	}
}
