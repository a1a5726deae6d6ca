package observability

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize bounds a client-controlled string that the contract allows into a signal or an error
// message (a user agent, a catalog model id): at most max runes, and every non-printable rune
// (control characters, invalid UTF-8, line breaks that could forge a log line) replaced by '?'.
func Sanitize(s string, max int) string {
	clean := len(s) <= max
	if clean {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f {
				clean = false
				break
			}
		}
	}
	if clean {
		return s // the common case, printable ASCII within bounds, costs no allocation
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s) && n < max; n++ {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}
