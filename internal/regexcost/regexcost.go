// Package regexcost owns what a regular expression may cost the mock: the size of its compiled
// program, estimated from the parsed expression before anything is compiled, and the work of
// matching it, counted against a budget.
//
// Go's regexp is RE2: matching is linear in the text, but the constant is the program. Its NFA
// keeps up to one thread per instruction, so one match costs up to (instructions × bytes of
// text) steps, and a twelve-byte pattern such as "[^z]{0,999}y" compiles to two thousand
// instructions. A bound on the pattern's length bounds neither its program nor its matching:
// fixtures and schema checks bound the program (Program), count what they keep by it
// (HeapBytes), and charge every match its worst case before it runs (Budget), since a match
// once started cannot be stopped. docs/fixtures.md ("What a regex may cost") has the figures.
package regexcost

import (
	"math"
	"regexp/syntax"
)

// Defaults of the bounds (the flags --max-regex-program and --regex-budget).
const (
	// DefaultMaxProgram admits "[a-z]{1,1000}" and about two such repetitions, and refuses
	// "[^z]{0,999}y" written three times.
	DefaultMaxProgram = 5000
	// DefaultBudget is the steps (instructions × bytes) one request's fixture matching and
	// reply checks may take: BenchmarkWorstRequest measures the worst case it allows.
	DefaultBudget = 1 << 23
)

// BytesPerInst is what one instruction of a compiled regexp holds on the heap, rounded up
// (TestHeapBytesCoversCompiled holds it to what regexp.Compile allocates).
const BytesPerInst = 64

// ceiling saturates the estimate: far above any bound, far below an overflow.
const ceiling = math.MaxInt32

// Size parses src as Go's regexp does (syntax.Perl) and estimates its program. Parsing does not
// expand repetitions: it costs the pattern's length, whatever the program would be.
func Size(src string) (int, error) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return 0, err
	}
	return Program(re), nil
}

// Program estimates the instructions of the program syntax.Compile makes of re (after
// Simplify, as regexp.Compile does): never below it, and within a few instructions of it for
// the shapes that make programs large (TestProgramEstimate). It saturates at a ceiling far
// above any bound instead of overflowing.
func Program(re *syntax.Regexp) int {
	return min(program(re)+2, ceiling) // the entry's fail and the final match
}

func program(re *syntax.Regexp) int {
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = max(len(re.Rune), 1)
	case syntax.OpCapture:
		n = 2 + program(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		n = 1 + program(re.Sub[0])
	case syntax.OpRepeat:
		// x{n,m} is n copies of x then m-n nested optional copies, each an alternation more;
		// x{n,} is n-1 copies and a plus.
		body := program(re.Sub[0])
		copies, optional := re.Min, 0
		if re.Max < 0 {
			optional = 1
		} else {
			optional = re.Max - re.Min
		}
		total := int64(copies)*int64(body) + int64(optional)*int64(body+1)
		if total >= ceiling {
			return ceiling
		}
		n = max(int(total), 1)
	case syntax.OpConcat, syntax.OpAlternate:
		n = 0
		for _, s := range re.Sub {
			n += program(s) + 1 // an alternation's branch instruction; a concat's slack
			if n >= ceiling {
				return ceiling
			}
		}
	}
	return min(n, ceiling)
}

// HeapBytes is what a compiled regexp of insts instructions from a pattern of srcLen bytes is
// counted for in a memory budget.
func HeapBytes(insts, srcLen int) int { return insts*BytesPerInst + srcLen }

// Steps is the worst case of one match: every instruction on every byte, and once more at the
// end of the text.
func Steps(insts, textLen int) int64 { return int64(insts) * (int64(textLen) + 1) }

// Budget is what is left of one request's matching work, in steps. The zero Budget allows
// nothing; a Budget is used by one goroutine.
type Budget struct {
	left int64
}

// NewBudget returns a budget of steps (at most DefaultBudget when steps <= 0).
func NewBudget(steps int64) Budget {
	if steps <= 0 {
		steps = DefaultBudget
	}
	return Budget{left: steps}
}

// Spend takes the worst case of matching a program of insts instructions against textLen bytes
// and reports whether the budget had it; when it had not, nothing is taken, and the match must
// not run.
func (b *Budget) Spend(insts, textLen int) bool {
	s := Steps(insts, textLen)
	if s > b.left {
		return false
	}
	b.left -= s
	return true
}

// Left is the steps not spent yet.
func (b *Budget) Left() int64 { return b.left }
