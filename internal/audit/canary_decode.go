package audit

import "strings"

// asciiLower lowercases ASCII letters only, so that byte offsets stay the same.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func unhex(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

// percentDecode decodes every %XX, leaving anything else as it is; ok is false when there was
// nothing to decode.
func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return "", false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(h<<4 | l)
				i += 2
				changed = true
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), changed
}

// unicodeUnescape decodes \uXXXX, \xXX and &#NN; / &#xNN; escapes of ASCII characters (an
// encoder that escapes every character would otherwise hide a canary from the exact search).
func unicodeUnescape(s string) (string, bool) {
	if !strings.Contains(s, `\u`) && !strings.Contains(s, `\x`) && !strings.Contains(s, "&#") {
		return "", false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U'):
			if v, ok := hexValue(s[i+2 : i+6]); ok && v < 0x80 {
				b.WriteByte(byte(v))
				i += 5
				changed = true
				continue
			}
		case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x':
			if v, ok := hexValue(s[i+2 : i+4]); ok && v < 0x80 {
				b.WriteByte(byte(v))
				i += 3
				changed = true
				continue
			}
		case s[i] == '&' && i+3 < len(s) && s[i+1] == '#':
			end := strings.IndexByte(s[i:min(len(s), i+10)], ';')
			if end > 2 {
				num := s[i+2 : i+end]
				var v int
				var ok bool
				if num[0] == 'x' || num[0] == 'X' {
					v, ok = hexValue(num[1:])
				} else {
					v, ok = decValue(num)
				}
				if ok && v < 0x80 {
					b.WriteByte(byte(v))
					i += end
					changed = true
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), changed
}

func hexValue(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		d, ok := unhex(s[i])
		if !ok {
			return 0, false
		}
		v = v<<4 | int(d)
	}
	return v, true
}

func decValue(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}
