package generate

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"unicode/utf8"

	"mockgateway/internal/protocol"
)

// stringValue writes a string for a string schema: a realistic value for a known format, a match
// of a simple pattern, else one to three words from the word list stretched or cut to
// minLength/maxLength.
func (g *schemaGen) stringValue(s *jvalue) {
	minL := min(intKeyword(s, "minLength", 0), maxStringRunes)
	maxL := intKeyword(s, "maxLength", -1)
	var p *compiledPattern
	if pattern := s.str("pattern"); pattern != "" {
		p = g.compilePattern(pattern)
	}
	if format := s.str("format"); format != "" {
		var ok bool
		g.scratch, ok = g.appendFormat(g.scratch[:0], format)
		if ok && (p == nil || p.re.Match(g.scratch)) {
			g.b.buf = protocol.AppendString(g.b.buf, string(g.scratch))
			g.b.cut()
			return
		}
	}
	if p != nil {
		if v, ok := g.patterned(p, minL, maxL); ok {
			g.b.buf = protocol.AppendString(g.b.buf, v)
			g.b.cut()
			return
		}
	}
	g.plainString(minL, maxL)
}

// plainString writes one to three words as a string literal, padded with more words to minL
// runes and cut to maxL runes (maxL < 0: no maximum). Words are plain ASCII, so bytes are runes
// and nothing needs escaping.
func (g *schemaGen) plainString(minL, maxL int) {
	b := g.b
	b.buf = append(b.buf, '"')
	start := len(b.buf)
	n := g.r.between(1, 3)
	for i := 0; i < n || len(b.buf)-start < minL; i++ {
		if i > 0 {
			b.buf = append(b.buf, ' ')
		}
		b.buf = append(b.buf, g.r.word()...)
	}
	if maxL >= 0 && len(b.buf)-start > maxL {
		b.buf = b.buf[:start+maxL]
		// Do not end on a space when it can be dropped, and replace it when it cannot.
		for len(b.buf)-start > max(minL, 1) && b.buf[len(b.buf)-1] == ' ' {
			b.buf = b.buf[:len(b.buf)-1]
		}
		if len(b.buf) > start && b.buf[len(b.buf)-1] == ' ' {
			b.buf[len(b.buf)-1] = 'a'
		}
	}
	b.buf = append(b.buf, '"')
	b.cut()
}

// appendFormat appends a realistic value of a known string format; ok is false for formats it
// does not know.
func (g *schemaGen) appendFormat(dst []byte, format string) ([]byte, bool) {
	r := g.r
	switch format {
	case "date-time":
		dst = g.appendDate(dst)
		dst = append(dst, 'T')
		dst = g.appendTime(dst)
	case "date":
		dst = g.appendDate(dst)
	case "time":
		dst = g.appendTime(dst)
	case "email", "idn-email":
		dst = append(dst, r.word()...)
		dst = append(dst, '.')
		dst = append(dst, r.word()...)
		dst = append(dst, "@example.com"...)
	case "hostname", "idn-hostname":
		dst = append(dst, r.word()...)
		dst = append(dst, ".example.com"...)
	case "uri", "url", "iri", "uri-reference", "iri-reference":
		dst = append(dst, "https://example.com/"...)
		dst = append(dst, r.word()...)
		dst = append(dst, '/')
		dst = append(dst, r.word()...)
	case "uri-template":
		dst = append(dst, "https://example.com/"...)
		dst = append(dst, r.word()...)
		dst = append(dst, "/{id}"...)
	case "uuid":
		dst = g.appendUUID(dst)
	case "ipv4":
		// 192.0.2.0/24 is reserved for documentation (RFC 5737).
		dst = append(dst, "192.0.2."...)
		dst = strconv.AppendInt(dst, int64(r.between(1, 254)), 10)
	case "ipv6":
		// 2001:db8::/32 is reserved for documentation (RFC 3849).
		dst = append(dst, "2001:db8::"...)
		dst = strconv.AppendInt(dst, int64(r.between(1, 0xffff)), 16)
	case "duration":
		dst = append(dst, 'P')
		dst = strconv.AppendInt(dst, int64(r.between(1, 30)), 10)
		dst = append(dst, 'D')
	case "json-pointer":
		dst = append(dst, '/')
		dst = append(dst, r.word()...)
		dst = append(dst, '/')
		dst = append(dst, r.word()...)
	case "relative-json-pointer":
		dst = append(dst, "0/"...)
		dst = append(dst, r.word()...)
	case "regex":
		dst = append(dst, "^[a-z]+$"...)
	default:
		return dst, false
	}
	return dst, true
}

// appendDate appends a date between 2020 and 2029 (days 1–28 exist in every month).
func (g *schemaGen) appendDate(dst []byte) []byte {
	dst = appendPadded(dst, g.r.between(2020, 2029), 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, g.r.between(1, 12), 2)
	dst = append(dst, '-')
	return appendPadded(dst, g.r.between(1, 28), 2)
}

// appendTime appends an RFC 3339 full-time in UTC.
func (g *schemaGen) appendTime(dst []byte) []byte {
	dst = appendPadded(dst, g.r.between(0, 23), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, g.r.between(0, 59), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, g.r.between(0, 59), 2)
	return append(dst, 'Z')
}

func appendPadded(dst []byte, v, width int) []byte {
	var tmp [20]byte
	digits := strconv.AppendInt(tmp[:0], int64(v), 10)
	for i := len(digits); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// appendUUID appends a version 4 UUID made of the choice's random bits.
func (g *schemaGen) appendUUID(dst []byte) []byte {
	const hex = "0123456789abcdef"
	var raw [16]byte
	for i := 0; i < 16; i += 8 {
		v := g.r.uint64()
		for j := range 8 {
			raw[i+j] = byte(v >> (8 * j))
		}
	}
	raw[6] = raw[6]&0x0f | 0x40 // version 4
	raw[8] = raw[8]&0x3f | 0x80 // RFC 4122 variant
	for i, c := range raw {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[c>>4], hex[c&0xf])
	}
	return dst
}

// Limits of pattern matching: attempts before giving up, and the longest string built.
const (
	patternAttempts = 6
	maxPatternBytes = 4 * maxStringRunes
)

// compiledPattern is a pattern parsed for generation and compiled for checking.
type compiledPattern struct {
	re   *regexp.Regexp
	tree *syntax.Regexp
}

// compilePattern returns the cached compiled pattern, or nil when Go cannot read it (then the
// pattern is ignored).
func (g *schemaGen) compilePattern(pattern string) *compiledPattern {
	if p, ok := g.patterns[pattern]; ok {
		return p
	}
	var p *compiledPattern
	re, err := regexp.Compile(pattern)
	if err == nil {
		if tree, err := syntax.Parse(pattern, syntax.Perl); err == nil {
			p = &compiledPattern{re: re, tree: tree}
		}
	}
	if g.patterns == nil {
		g.patterns = make(map[string]*compiledPattern)
	}
	g.patterns[pattern] = p
	return p
}

// patterned builds a string that matches pattern (read as a Go regular expression, as the Go
// JSON Schema validators do) and fits the length bounds, by walking the parsed expression:
// literals are copied, classes yield a member (letters and digits first), repetitions repeat a
// few times, alternations pick a branch. Every candidate is checked with the compiled regexp, so
// a pattern this cannot satisfy (backreference-like tricks, conflicting lengths) falls back to
// plain words instead of producing a wrong match.
func (g *schemaGen) patterned(p *compiledPattern, minL, maxL int) (string, bool) {
	for attempt := range patternAttempts {
		// Later attempts stretch unbounded repetitions towards minLength.
		stretch := 0
		if attempt >= patternAttempts/2 {
			stretch = minL
		}
		g.scratch = g.scratch[:0]
		if !g.regexWalk(p.tree, stretch) {
			continue
		}
		n := utf8.RuneCount(g.scratch)
		if n >= minL && (maxL < 0 || n <= maxL) && p.re.Match(g.scratch) {
			return string(g.scratch), true
		}
	}
	return "", false
}

func (g *schemaGen) regexWalk(re *syntax.Regexp, stretch int) bool {
	if len(g.scratch) > maxPatternBytes {
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
		c, ok := g.classMember(re.Rune)
		if !ok {
			return false
		}
		g.scratch = utf8.AppendRune(g.scratch, c)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		g.scratch = append(g.scratch, byte('a'+g.r.intn(26)))
	case syntax.OpCapture:
		return g.regexWalk(re.Sub[0], stretch)
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
		for range g.r.between(lo, max(top, lo)) {
			if !g.regexWalk(re.Sub[0], stretch) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !g.regexWalk(sub, stretch) {
				return false
			}
		}
	case syntax.OpAlternate:
		return g.regexWalk(re.Sub[g.r.intn(len(re.Sub))], stretch)
	}
	// Anchors, word boundaries and the empty match write nothing.
	return true
}

// classMember picks a rune of a character class (pairs of inclusive ranges): an ASCII letter or
// digit when the class has one, else printable ASCII, else the first valid rune of a range.
func (g *schemaGen) classMember(ranges []rune) (rune, bool) {
	in := func(c rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= c && c <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	var cand [95]rune
	n := 0
	for _, span := range [...][2]rune{{'a', 'z'}, {'A', 'Z'}, {'0', '9'}} {
		for c := span[0]; c <= span[1]; c++ {
			if in(c) {
				cand[n] = c
				n++
			}
		}
	}
	if n == 0 {
		for c := rune(' '); c <= '~'; c++ {
			if in(c) {
				cand[n] = c
				n++
			}
		}
	}
	if n > 0 {
		return cand[g.r.intn(n)], true
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for c := ranges[i]; c <= ranges[i+1] && c-ranges[i] < 4096; c++ {
			if utf8.ValidRune(c) && c >= 0x20 {
				return c, true
			}
		}
	}
	return 0, false
}
