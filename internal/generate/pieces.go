package generate

import (
	"math"
	"slices"
	"unicode/utf8"
	"unsafe"
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
// to the piece it precedes), then one maximal run of non-whitespace. Printable ASCII, nearly all
// of a run, is passed over with one comparison a byte, and other ASCII without a decode
// (isSpace): a piece is looked for twice as echo splits a prompt (appendSplit).
func pieceEnd(s string, i int) int {
	for i < len(s) {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if !isSpace(r) {
			break
		}
		i += size
	}
	for i < len(s) {
		if s[i]-'!' <= utf8.RuneSelf-1-'!' { // '!' to DEL: not whitespace
			i++
			continue
		}
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if isSpace(r) {
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
		if isSpace(r) {
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

	// handOver is set for the builder's last use: pieces then gives its buffers away instead of
	// copying them out (see pieces).
	handOver bool
}

// reserve makes room for bytes more bytes and pieces more pieces, so that text whose size is
// known or closely bounded up front is written into buffers allocated once: appended piece by
// piece from empty, the buffers of 64 pieces of prose were allocated twelve times
// (BenchmarkGenerateChat), those of the load test's 16-piece echo nine (BenchmarkGenerateEcho16).
func (b *pieceBuilder) reserve(bytes, pieces int) {
	b.buf = slices.Grow(b.buf, max(bytes, 0))
	b.ends = slices.Grow(b.ends, max(pieces, 0))
}

// limit sets the ceiling: at most maxPieces pieces and maxBytes bytes will be shown.
func (b *pieceBuilder) limit(maxPieces, maxBytes int) {
	b.limited, b.maxPieces, b.maxBytes = true, maxPieces, maxBytes
}

// full reports whether the builder holds more than its ceiling allows, so that whatever is
// appended from now on lies past the cut.
func (b *pieceBuilder) full() bool { return b.over(len(b.ends), len(b.buf)) }

// over reports whether a builder holding that many pieces and bytes would be full.
func (b *pieceBuilder) over(pieces, bytes int) bool {
	return b.limited && (pieces > b.maxPieces || bytes > b.maxBytes)
}

// room returns how many more bytes fit under the ceiling (a large number without one).
func (b *pieceBuilder) room() int { return b.roomAt(len(b.buf)) }

// roomAt is room for a builder holding that many bytes.
func (b *pieceBuilder) roomAt(bytes int) int {
	if !b.limited {
		return math.MaxInt / 2
	}
	return max(b.maxBytes-bytes, 0)
}

// clip returns the part of s that can still matter under the ceiling: one byte more than the
// room left (so that the result is seen to cross the ceiling), extended to a whole rune.
func (b *pieceBuilder) clip(s string) string { return b.clipAt(s, len(b.buf)) }

// clipAt is clip for a builder holding that many bytes.
func (b *pieceBuilder) clipAt(s string, bytes int) string {
	n := b.roomAt(bytes) + 1
	if len(s) <= n {
		return s
	}
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return s[:n]
}

// appendSplit appends, to the emptied builder, head as a piece of its own (unless empty), then
// glue (whitespace) joined to the first piece of s and the pieces of s as SplitPieces cuts them
// — mock-echo's "echo:", " " and the message split as SplitPieces("echo: "+message) —, and stops
// at the ceiling. It reads no further into s than the ceiling needs, so a megabyte of prompt
// echoed costs the ceiling, not the megabyte. It finds where the ceiling stops it first
// (splitExtent), so that the text is copied at once into buffers sized once: reading the text
// twice costs less than growing them as it goes (see reserve).
func (b *pieceBuilder) appendSplit(head, glue, s string) {
	pieces0, bytes0 := 0, len(head)+len(glue) // what the builder holds before s
	if head != "" {
		pieces0 = 1
	}
	s = b.clipAt(s, bytes0)
	n, pieces := b.splitExtent(s, pieces0, bytes0)
	b.reserve(bytes0+n, pieces0+pieces+1) // +1: the cut below closes the glue when s is empty
	b.add(head)
	b.buf = append(b.buf, glue...)
	base := len(b.buf)
	b.buf = append(b.buf, s[:n]...)
	for i := 0; i < n; {
		i = pieceEnd(s, i)
		b.ends = append(b.ends, uint32(base+i))
	}
	b.cut()
}

// splitExtent returns how much of s appendSplit appends to a builder holding pieces0 pieces and
// bytes0 bytes — the bytes before the piece at which the builder is full, and the pieces they
// make —, as appending piece by piece until full would.
func (b *pieceBuilder) splitExtent(s string, pieces0, bytes0 int) (n, pieces int) {
	for n < len(s) && !b.over(pieces0+pieces, bytes0+n) {
		n = pieceEnd(s, n)
		pieces++
	}
	return n, pieces
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

// pieces returns the builder's text and piece ends as Pieces. A builder that will make more
// (the request's shared one, before its last choice) copies them out exactly sized, to be
// emptied and used again. At its last use (handOver) its buffers become the Pieces, with no copy
// — two allocations fewer for every answer of one choice — and the builder lets go of them;
// unless most of them is idle capacity (the shared builder grown by a longer choice), which a
// choice kept for as long as its answer is sent should not hold.
func (b *pieceBuilder) pieces() Pieces {
	if len(b.ends) == 0 {
		return Pieces{ends: []uint32{}}
	}
	if b.handOver && cap(b.buf) <= 2*len(b.buf)+64 && cap(b.ends) <= 2*len(b.ends)+16 {
		// The text is never written again: the builder forgets the buffer here.
		p := Pieces{text: unsafe.String(unsafe.SliceData(b.buf), len(b.buf)), ends: slices.Clip(b.ends)}
		b.buf, b.ends = nil, nil
		return p
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
	b := pieceBuilder{handOver: true}
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	b.reserve(total, len(pieces))
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
