package jsonscan

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote returns the string a valid JSON string literal q (quotes included) stands for. A
// literal without escapes and of valid UTF-8 — nearly every key and most values — is its own
// inner text: when q is a string, a substring of it, no copy. Anything else is unescaped as
// encoding/json unescapes it, invalid UTF-8 and lone surrogates becoming U+FFFD
// (FuzzUnquoteMatchesEncodingJSON holds the two to each other).
func Unquote[T Text](q T) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	inner := string(q[1 : len(q)-1]) // a string's own text; raw bytes' copy
	if strings.IndexByte(inner, '\\') < 0 && utf8.ValidString(inner) {
		return inner, true
	}
	return unescape(inner)
}

// unescape is encoding/json's unquoteBytes (Go 1.26) for a literal's inner text s, writing to
// one exactly-sized builder instead of going through json.Unmarshal, which costs an escaped
// string four allocations. ok is false where encoding/json's is.
func unescape(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s)) // the result is no longer, unless invalid UTF-8 is replaced
	for r := 0; r < len(s); {
		// A run of plain ASCII is copied as it is.
		run := r
		for run < len(s) {
			if c := s[run]; c == '\\' || c == '"' || c < ' ' || c >= utf8.RuneSelf {
				break
			}
			run++
		}
		b.WriteString(s[r:run])
		if r = run; r == len(s) {
			break
		}
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				b.WriteByte(s[r])
				r++
			case 'b':
				b.WriteByte('\b')
				r++
			case 'f':
				b.WriteByte('\f')
				r++
			case 'n':
				b.WriteByte('\n')
				r++
			case 'r':
				b.WriteByte('\r')
				r++
			case 't':
				b.WriteByte('\t')
				r++
			case 'u':
				rr := getu4(s[r-1:])
				if rr < 0 {
					return "", false
				}
				r += 5 // past the \uXXXX that began at r-1
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6 // a valid pair: its second half is consumed too
						b.WriteRune(dec)
						break
					}
					rr = unicode.ReplacementChar // a lone or broken surrogate
				}
				b.WriteRune(rr)
			default:
				return "", false
			}
		case c == '"', c < ' ':
			return "", false // a quote or a control character cannot be in a literal
		default:
			// Coerce to well-formed UTF-8: an invalid byte becomes U+FFFD.
			rr, size := utf8.DecodeRuneInString(s[r:])
			r += size
			b.WriteRune(rr)
		}
	}
	return b.String(), true
}

// getu4 decodes \uXXXX from the beginning of s, returning the hex value, or -1.
func getu4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for i := 2; i < 6; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
