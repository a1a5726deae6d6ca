package generate

import "regexp/syntax"

// anchorsOnlyAtEnds reports whether the only assertions in re are text or line anchors at its
// very start or end, which a string that is exactly one match always satisfies. Then every
// successful walk is a match and needs no check.
func anchorsOnlyAtEnds(re *syntax.Regexp) bool {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	i, j := 0, len(subs)
	for i < j && (subs[i].Op == syntax.OpBeginText || subs[i].Op == syntax.OpBeginLine) {
		i++
	}
	for j > i && (subs[j-1].Op == syntax.OpEndText || subs[j-1].Op == syntax.OpEndLine) {
		j--
	}
	for _, s := range subs[i:j] {
		if hasAssertion(s) {
			return false
		}
	}
	return true
}

func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range re.Sub {
		if hasAssertion(s) {
			return true
		}
	}
	return false
}

// progSize estimates the instructions the compiled pattern has (a repetition is expanded into
// copies of its body), saturating rather than overflowing, so that compiling can be refused
// before it costs anything: "[a-z]{1000}" repeated 3,000 times is 33 KB of pattern, compiles
// to three million instructions and takes seconds and hundreds of megabytes.
func progSize(re *syntax.Regexp) int {
	const ceiling = 1 << 30
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = max(len(re.Rune), 1)
	case syntax.OpCapture:
		n = 2 + progSize(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		n = 1 + progSize(re.Sub[0])
	case syntax.OpRepeat:
		copies := re.Max
		if copies < 0 {
			copies = re.Min + 1
		}
		copies = max(copies, 1)
		body := progSize(re.Sub[0])
		if body > ceiling/copies {
			return ceiling
		}
		n = 1 + copies*body
	case syntax.OpConcat, syntax.OpAlternate:
		n = 0
		for _, s := range re.Sub {
			n += progSize(s)
			if n >= ceiling {
				return ceiling
			}
		}
		n++
	}
	return min(n, ceiling)
}
