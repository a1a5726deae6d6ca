package jsonscan

// SkipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func SkipSpace[T Text](v T, i int) int {
	for i < len(v) {
		switch v[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the index just past the string literal starting at v[i] == '"'.
func SkipString[T Text](v T, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// SkipValue returns the index just past the value starting at v[i]; i itself when there is none.
func SkipValue[T Text](v T, i int) int {
	if i >= len(v) {
		return i
	}
	switch v[i] {
	case '"':
		return SkipString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				j = SkipString(v, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(v)
	case ',', ':', '}', ']':
		return i
	}
	// A number or a literal runs to the next delimiter.
	j := i
	for j < len(v) {
		switch v[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// AppendCompact appends the valid JSON value v without the whitespace between its tokens: what
// json.Compact makes of it (FuzzAppendCompactMatchesEncodingJSON), without copying v into the
// bytes json.Compact reads.
func AppendCompact(buf []byte, v string) []byte {
	start := 0 // v[start:i] is yet to be appended
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			i = SkipString(v, i) - 1
		case ' ', '\t', '\r', '\n':
			buf = append(buf, v[start:i]...)
			start = i + 1
		}
	}
	return append(buf, v[start:]...)
}
