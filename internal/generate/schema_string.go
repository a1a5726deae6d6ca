package generate

import (
	"strconv"

	"mockgateway/internal/jsonenc"
)

// stringValue writes a string for a string schema: a realistic value for a known format, a match
// of a simple pattern, else one to three words from the word list stretched or cut to
// minLength/maxLength.
func (g *schemaGen) stringValue(s *jvalue) {
	minL := min(intKeyword(s, "minLength", 0), maxStringRunes)
	maxL := intKeyword(s, "maxLength", -1)
	var p *pattern
	if src := s.str("pattern"); src != "" {
		p = g.pattern(src)
	}
	if format := s.str("format"); format != "" {
		var ok bool
		g.scratch, ok = g.appendFormat(g.scratch[:0], format)
		if ok && (p == nil || g.matches(p, g.scratch)) {
			g.b.buf = jsonenc.AppendString(g.b.buf, string(g.scratch))
			g.b.cut()
			return
		}
	}
	if p != nil {
		if v, ok := g.patterned(p, minL, maxL); ok {
			g.b.buf = jsonenc.AppendString(g.b.buf, v)
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
