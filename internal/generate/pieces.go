package generate

import (
	"math"
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
//
// A builder may have a ceiling (limit): once it holds more pieces or bytes than the choice may
// show, full reports true and the generators stop, because everything after would be cut. That
// is what keeps generation linear in the answer rather than in what the request asks for.
type pieceBuilder struct {
	buf  []byte
	ends []int // ends[k] is the end offset of piece k in buf

	limited   bool
	maxPieces int
	maxBytes  int
}

// limit sets the ceiling: at most maxPieces pieces and maxBytes bytes will be shown.
func (b *pieceBuilder) limit(maxPieces, maxBytes int) {
	b.limited, b.maxPieces, b.maxBytes = true, maxPieces, maxBytes
}

// full reports whether the builder holds more than its ceiling allows, so that whatever is
// appended from now on lies past the cut.
func (b *pieceBuilder) full() bool {
	return b.limited && (len(b.ends) > b.maxPieces || len(b.buf) > b.maxBytes)
}

// room returns how many more bytes fit under the ceiling (a large number without one).
func (b *pieceBuilder) room() int {
	if !b.limited {
		return math.MaxInt / 2
	}
	return max(b.maxBytes-len(b.buf), 0)
}

// clip returns the part of s that can still matter under the ceiling: one byte more than the
// room left (so that the result is seen to cross the ceiling), extended to a whole rune.
func (b *pieceBuilder) clip(s string) string {
	n := b.room() + 1
	if len(s) <= n {
		return s
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return s[:n]
}

// appendSplit appends the pieces of s as SplitPieces cuts them, joining any bytes already
// appended after the last boundary (whitespace only) to the first piece, and stops at the
// ceiling. It reads no further into s than the ceiling needs, so a megabyte of prompt echoed
// costs the ceiling, not the megabyte.
func (b *pieceBuilder) appendSplit(s string) {
	s = b.clip(s)
	start, i := 0, 0
	for i < len(s) && !b.full() {
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
		b.buf = append(b.buf, s[start:i]...)
		b.cut()
		start = i
	}
	b.cut()
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
