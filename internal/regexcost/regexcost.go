// Package regexcost owns what a regular expression may cost the mock: the size of its compiled
// program, estimated from the parsed expression before anything is compiled, and the work of
// matching it, counted against a budget.
//
// Go's regexp is RE2: matching is linear in the text, but the constant is the program. Its NFA
// keeps up to one thread per instruction, so one match costs up to (instructions × bytes of
// text) steps, and a twelve-byte pattern such as "[^z]{0,999}y" compiles to two thousand
// instructions. A bound on the pattern's length bounds neither its program nor its matching:
// fixtures and schema checks bound the program's size (Cost.Size), count what they keep by its
// heap (Cost.Heap), and charge every match its worst case before it runs (Budget), since a match
// once started cannot be stopped. docs/fixtures.md ("What a regex may cost") has the figures.
package regexcost

import (
	"math"
	"regexp/syntax"
)

// Defaults of the bounds (the flags --max-regex-program and --regex-budget).
const (
	// DefaultMaxProgram admits "[a-z]{1,1000}" and "[^z]{0,999}y", and refuses either written
	// twice.
	DefaultMaxProgram = 5000
	// DefaultBudget is the steps (instructions × bytes) one request's fixture matching and
	// reply checks may take: BenchmarkWorstRequest measures the worst case it allows.
	DefaultBudget = 1 << 23
)

// What a compiled regexp holds on the heap: per instruction, and per rune of a character class
// in an instruction — an anchored pattern's one-pass program copies a class's ranges into each
// instruction, so "^\p{L}{400}$" holds far more than its instruction count says. Rounded up;
// TestHeapCoversCompiled holds them to what regexp.Compile allocates.
const (
	BytesPerInst = 160
	BytesPerRune = 28
)

// ceiling saturates the estimate: far above any bound, far below an overflow.
const ceiling = math.MaxInt32

// Cost is what a regex costs compiled: the instructions of its program (a match steps through up
// to all of them per byte of text) and the heap the compiled regexp holds.
type Cost struct {
	Insts int
	Heap  int
}

// Size is the program's size for the bounds, in instructions: its instructions, or what its heap
// amounts to at BytesPerInst an instruction when its character classes make it more.
func (c Cost) Size() int { return max(c.Insts, (c.Heap+BytesPerInst-1)/BytesPerInst) }

// Parse parses src as Go's regexp does (syntax.Perl) and estimates its cost. Parsing does not
// expand repetitions: it costs the pattern's length, whatever the program would be.
func Parse(src string) (Cost, error) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return Cost{}, err
	}
	return Of(re), nil
}

// Of estimates the cost of the program syntax.Compile makes of re (after Simplify, as
// regexp.Compile does): never below it, and within a few instructions of it for the shapes that
// make programs large (TestProgramEstimate). It saturates at a ceiling far above any bound
// instead of overflowing.
func Of(re *syntax.Regexp) Cost {
	insts, heap := program(re)
	insts += 2 // the entry's fail and the final match
	heap += 2 * BytesPerInst
	return Cost{Insts: int(min(insts, ceiling)), Heap: int(min(heap, ceiling))}
}

// program is re's instructions and heap, saturating.
func program(re *syntax.Regexp) (insts, heap int64) {
	switch re.Op {
	case syntax.OpLiteral:
		n := int64(max(len(re.Rune), 1))
		return n, n * BytesPerInst
	case syntax.OpCharClass:
		return 1, BytesPerInst + int64(len(re.Rune))*BytesPerRune
	case syntax.OpCapture:
		i, h := program(re.Sub[0])
		return i + 2, h + 2*BytesPerInst
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		i, h := program(re.Sub[0])
		return i + 1, h + loopHeap(re.Sub[0])
	case syntax.OpRepeat:
		// x{n,m} is n copies of x then m-n nested optional copies, each an alternation more;
		// x{n,} is n-1 copies and a plus.
		i, h := program(re.Sub[0])
		copies, optional := int64(re.Min), int64(1)
		if re.Max >= 0 {
			optional = int64(re.Max - re.Min)
		}
		insts = copies*i + optional*(i+1)
		heap = copies*h + optional*(h+loopHeap(re.Sub[0]))
		return max(min(insts, ceiling), 1), min(heap, ceiling)
	case syntax.OpConcat, syntax.OpAlternate:
		for _, s := range re.Sub {
			i, h := program(s)
			// An alternation's branch instruction; a concat's slack.
			insts, heap = min(insts+i+1, ceiling), min(heap+h+BytesPerInst, ceiling)
		}
		return insts, heap
	}
	return 1, BytesPerInst
}

// loopHeap is the heap of the alternation that repeats or skips sub: the one-pass program keeps
// in it the runes of the class it leads to.
func loopHeap(sub *syntax.Regexp) int64 {
	if sub.Op == syntax.OpCharClass {
		return BytesPerInst + int64(len(sub.Rune))*BytesPerRune
	}
	return BytesPerInst
}

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
