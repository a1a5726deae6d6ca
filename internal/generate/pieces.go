package generate

import (
	"unicode"
	"unicode/utf8"
)

// SplitPieces splits s into the pieces (tokens) the generator emits: each piece is any leading
// whitespace followed by one maximal run of non-whitespace, and trailing whitespace is a piece of
// its own. strings.Join(SplitPieces(s), "") == s; "" gives no pieces. The pieces are substrings
// of s, so splitting does not copy the text.
func SplitPieces(s string) []string {
	if s == "" {
		return nil
	}
	pieces := make([]string, 0, countRuns(s)+1)
	start, i := 0, 0
	for i < len(s) {
		// Leading whitespace belongs to the piece it precedes.
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += size
		}
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += size
		}
		pieces = append(pieces, s[start:i])
		start = i
	}
	return pieces
}

// countRuns returns the number of maximal runs of non-whitespace in s, so callers can size a
// slice once.
func countRuns(s string) int {
	n, inWord := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			inWord = false
			continue
		}
		if !inWord {
			n++
			inWord = true
		}
	}
	return n
}

// pieceBuilder accumulates text and the boundaries of its pieces in one byte buffer, so a whole
// choice costs one string allocation (and one slice) however many pieces it has: every piece is
// a substring of the same backing string.
type pieceBuilder struct {
	buf  []byte
	ends []int // ends[k] is the end offset of piece k in buf
}

// add appends s as one piece; empty strings are ignored so no empty piece is ever emitted.
func (b *pieceBuilder) add(s string) {
	b.buf = append(b.buf, s...)
	b.cut()
}

// cut closes the piece that was appended directly to buf since the last boundary, if any.
func (b *pieceBuilder) cut() {
	last := 0
	if n := len(b.ends); n > 0 {
		last = b.ends[n-1]
	}
	if len(b.buf) > last {
		b.ends = append(b.ends, len(b.buf))
	}
}

// mark and reset let a caller undo what it appended (used to retry a non-unique array item).
type builderMark struct{ buf, ends int }

func (b *pieceBuilder) mark() builderMark { return builderMark{len(b.buf), len(b.ends)} }

func (b *pieceBuilder) reset(m builderMark) {
	b.buf = b.buf[:m.buf]
	b.ends = b.ends[:m.ends]
}

// text returns the bytes appended since m (valid until the next append).
func (b *pieceBuilder) since(m builderMark) []byte { return b.buf[m.buf:] }

// pieces converts the buffer into a string once and returns the pieces as substrings of it.
func (b *pieceBuilder) pieces() []string {
	text := string(b.buf)
	out := make([]string, len(b.ends))
	start := 0
	for k, end := range b.ends {
		out[k] = text[start:end]
		start = end
	}
	return out
}
