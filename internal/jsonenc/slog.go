package jsonenc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendSlogString appends s as a JSON string as log/slog's JSON handler writes it: quotes,
// backslashes and control characters escaped (\n \r \t short, the rest \u00XX), invalid UTF-8
// replaced by \ufffd, and U+2028 and U+2029 escaped.
func AppendSlogString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	// Most values (ids, routes, model names) need no escaping: copy them in one go.
	plain := 0
	for plain < len(s) {
		if c := s[plain]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		plain++
	}
	buf = append(buf, s[:plain]...)
	for i := plain; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, "\\ufffd"...)
		} else if r == '\u2028' || r == '\u2029' {
			// Valid JSON either way, but JavaScript line terminators: escaped, as slog and
			// encoding/json escape them.
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// AppendSlogFloat appends f as log/slog's JSON handler writes a float64 attribute. slog calls
// encoding/json for it: 'f' notation, or 'e' without a leading zero in the exponent for very
// small or large values. NaN and ±Inf, which encoding/json rejects, become the "!ERROR:..."
// string slog writes in their place.
func AppendSlogFloat(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return AppendSlogString(buf, "!ERROR:json: unsupported value: "+strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}
