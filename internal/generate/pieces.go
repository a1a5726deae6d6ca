package generate

import (
	"math"
	"slices"
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
		i = pieceEnd(s, i)
		pieces = append(pieces, s[start:i])
		start = i
	}
	return pieces
}

// pieceEnd returns the end of the piece that starts at i: its leading whitespace (which belongs
// to the piece it precedes), then one maximal run of non-whitespace.
func pieceEnd(s string, i int) int {
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
	return i
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
	ends []uint32 // ends[k] is the end offset of piece k in buf

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
		i = pieceEnd(s, i)
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
		last = int(b.ends[n-1])
	}
	if len(b.buf) > last {
		b.ends = append(b.ends, uint32(len(b.buf)))
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

// pieces copies out the builder's text and piece ends, exactly sized, so the builder can be
// emptied and used again.
func (b *pieceBuilder) pieces() Pieces {
	if len(b.ends) == 0 {
		return Pieces{ends: []uint32{}}
	}
	return Pieces{text: string(b.buf), ends: slices.Clone(b.ends)}
}

// Pieces is text cut into pieces (tokens), kept as the text and the end of each piece: a choice
// of 4,096 pieces costs its text and 4 bytes a piece, where a []string costs a 16-byte header a
// piece and a join to send it whole (BenchmarkHeavyAnswerMemory). Pieces are read with Len and
// At, the whole text with Text; copies share their text and ends, which are never changed once
// a choice is made.
type Pieces struct {
	text  string   // the whole text the pieces are cut from (may go on past the last piece)
	start uint32   // the offset of the first piece in text
	ends  []uint32 // ends[k] is the end offset of piece k in text; nil: no pieces at all (see IsNil)
}

// PiecesOf returns the given pieces as Pieces (for tests and for callers that have strings).
func PiecesOf(pieces ...string) Pieces {
	var b pieceBuilder
	for _, p := range pieces {
		b.add(p)
	}
	return b.pieces()
}

// Len returns the number of pieces.
func (p Pieces) Len() int { return len(p.ends) }

// At returns piece k, a substring of the text (no copy).
func (p Pieces) At(k int) string {
	lo := p.start
	if k > 0 {
		lo = p.ends[k-1]
	}
	return p.text[lo:p.ends[k]]
}

// Text returns the pieces joined, a substring of the text (no copy).
func (p Pieces) Text() string {
	if len(p.ends) == 0 {
		return ""
	}
	return p.text[p.start:p.ends[len(p.ends)-1]]
}

// IsNil reports whether there are no pieces at all, as for a choice that calls tools (as
// opposed to a text choice with an empty answer).
func (p Pieces) IsNil() bool { return p.ends == nil }

// Strings returns the pieces as strings (nil when IsNil), for tests and callers that need them.
func (p Pieces) Strings() []string {
	if p.ends == nil {
		return nil
	}
	out := make([]string, len(p.ends))
	for k := range out {
		out[k] = p.At(k)
	}
	return out
}

// slice returns pieces i up to j.
func (p Pieces) slice(i, j int) Pieces {
	start := p.start
	if i > 0 {
		start = p.ends[i-1]
	}
	return Pieces{text: p.text, start: start, ends: p.ends[i:j:j]}
}

// truncateLast returns the first k+1 pieces with piece k cut to its first n bytes (n > 0). The
// ends are copied, so pieces that share them with p are not changed.
func (p Pieces) truncateLast(k, n int) Pieces {
	lo := p.start
	if k > 0 {
		lo = p.ends[k-1]
	}
	ends := append(make([]uint32, 0, k+1), p.ends[:k+1]...)
	ends[k] = lo + uint32(n)
	return Pieces{text: p.text, start: p.start, ends: ends}
}
