package jsonscan

// Valid reports whether data is one valid JSON value: encoding/json.Valid's verdict on every
// input, nesting limit included (FuzzValidMatchesEncodingJSON holds the two to each other). It
// is the decoder's check of the whole body before any member is read, so that a body is refused
// as invalid JSON before any of its fields are judged, and the schema parser's before it
// descends. encoding/json's scanner calls a function per byte; this loop reads a string's run of
// plain bytes, or a number's digits, in a tight loop (BenchmarkValidJSON in internal/protocol
// compares the two; BenchmarkDecodeChatRequest shows what it is worth a request).
func Valid(data []byte) bool {
	// The open containers, innermost last, as their opening bytes: a request nests a few levels,
	// which fit the array on this stack; deeper JSON spills to the heap.
	var room [32]byte
	open := room[:0]
	i := SkipSpace(data, 0)
	for {
		// A value begins at i.
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '{', '[':
			if len(open) == maxNestingDepth {
				return false // encoding/json's limit, which a body that deep is refused by
			}
			open = append(open, data[i])
			i = SkipSpace(data, i+1)
			if i < len(data) && data[i] == closing(open[len(open)-1]) {
				open = open[:len(open)-1]
				i++
				break // an empty container is a whole value
			}
			if open[len(open)-1] == '{' {
				if i = validKey(data, i); i < 0 {
					return false
				}
			}
			continue // the first member's or element's value
		case '"':
			i = validString(data, i)
		case 't':
			i = validLiteral(data, i, "true")
		case 'f':
			i = validLiteral(data, i, "false")
		case 'n':
			i = validLiteral(data, i, "null")
		default:
			i = validNumber(data, i)
		}
		if i < 0 {
			return false
		}
		// After a value: the containers it ends are closed, up to the separator before the next.
		for {
			i = SkipSpace(data, i)
			if len(open) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			if data[i] == ',' {
				i = SkipSpace(data, i+1)
				if open[len(open)-1] == '{' {
					if i = validKey(data, i); i < 0 {
						return false
					}
				}
				break
			}
			if data[i] != closing(open[len(open)-1]) {
				return false
			}
			open = open[:len(open)-1]
			i++
		}
	}
}

// maxNestingDepth is encoding/json's: more open objects and arrays than this is invalid.
const maxNestingDepth = 10000

// closing is the byte that closes a container opened by open: '{'+2 is '}', '['+2 is ']'.
func closing(open byte) byte { return open + 2 }

// validKey reads an object member's key and colon from i, returning where its value begins, or
// -1.
func validKey(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = validString(data, i); i < 0 {
		return -1
	}
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return SkipSpace(data, i+1)
}

// validString reads the string literal at data[i] == '"', returning the index past it, or -1.
// As with encoding/json, bytes of invalid UTF-8 are accepted; control characters and unknown
// escapes are not.
func validString(data []byte, i int) int {
	j := i + 1
	for j < len(data) {
		c := data[j]
		switch {
		case c == '"':
			return j + 1
		case c == '\\':
			if j+1 >= len(data) {
				return -1
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(data) {
					return -1
				}
				for _, h := range data[j+2 : j+6] {
					if !isHex(h) {
						return -1
					}
				}
				j += 6
			default:
				return -1
			}
		case c < ' ':
			return -1
		default:
			j++
		}
	}
	return -1
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// validLiteral reads lit (true, false or null) at i, returning the index past it, or -1.
func validLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// validNumber reads a number at i — -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? — returning the
// index past it, or -1.
func validNumber(data []byte, i int) int {
	digits := func(j int) int { // past the run of digits at j, which must not be empty; or -1
		if j >= len(data) || !isDigit(data[j]) {
			return -1
		}
		for j < len(data) && isDigit(data[j]) {
			j++
		}
		return j
	}
	if data[i] == '-' {
		i++
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if i = digits(i); i < 0 {
		return -1
	}
	if i < len(data) && data[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		return digits(i)
	}
	return i
}
