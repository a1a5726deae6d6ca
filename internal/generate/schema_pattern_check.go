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
