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
		got, want := mustSize(t, src), compiled(t, src)
		if got < want || got > want+want/4+8 {
			t.Errorf("%q: estimate %d, compiled %d", src, got, want)
		}
	}
}

func mustSize(t *testing.T, src string) int {
	t.Helper()
	n, err := Size(src)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The issue's pattern, "[^b]{1000}" written three thousand times (30 KB), is estimated at its
// three million instructions from the parse alone: it is refused before regexp compiles it.
func TestProgramOfTheIssuesPattern(t *testing.T) {
	if n := mustSize(t, strings.Repeat(`[^b]{1000}`, 3000)); n < 3_000_000 {
		t.Fatalf("estimate %d", n)
	}
}

// HeapBytes must cover what a compiled regexp holds, or the fixture budget would undercount it.
func TestHeapBytesCoversCompiled(t *testing.T) {
	for _, src := range []string{`[^b]{1000}`, `[^z]{0,999}y`, strings.Repeat(`[a-z]{400}`, 10)} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		re := regexp.MustCompile(src)
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := int(after.HeapAlloc) - int(before.HeapAlloc)
		if n := mustSize(t, src); HeapBytes(n, len(src)) < held {
			t.Errorf("%q: counted %d bytes, holds %d", src, HeapBytes(n, len(src)), held)
		}
		runtime.KeepAlive(re)
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
