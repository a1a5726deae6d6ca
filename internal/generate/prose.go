package generate

// words is the fixed vocabulary of the prose and of generated JSON strings: plain lowercase
// ASCII words, so they are also valid in host names, e-mail local parts and URL paths. Its order
// is part of the output: reordering or editing it changes every answer.
var words = [...]string{
	"able", "about", "account", "across", "action", "active", "after", "again", "agent", "air",
	"along", "amber", "answer", "apple", "april", "area", "arrow", "autumn", "balance", "basket",
	"beach", "before", "begin", "below", "better", "bird", "blue", "board", "border", "bright",
	"bridge", "brief", "build", "button", "cabin", "calm", "camera", "candle", "canyon", "carbon",
	"careful", "castle", "center", "chapter", "circle", "city", "clear", "clock", "cloud", "coast",
	"color", "common", "copper", "corner", "cotton", "country", "crystal", "current", "daily",
	"dance", "data", "delta", "desert", "detail", "direct", "distant", "dream", "during", "eager",
	"early", "earth", "echo", "edge", "effort", "elegant", "engine", "evening", "event", "exact",
	"fabric", "fair", "family", "feather", "field", "final", "first", "flame", "flower", "focus",
	"forest", "fresh", "friend", "future", "garden", "gentle", "glass", "golden", "gravel",
	"green", "group", "harbor", "harvest", "height", "hidden", "hollow", "honest", "horizon",
	"island", "journey", "jungle", "kettle", "kind", "ladder", "lantern", "large", "later",
	"leaf", "letter", "light", "little", "local", "logic", "lunar", "marble", "meadow", "measure",
	"method", "middle", "mirror", "modern", "moment", "morning", "motion", "mountain", "narrow",
	"native", "nearby", "network", "noble", "north", "number", "ocean", "office", "open", "orbit",
	"orange", "paper", "patient", "pattern", "pebble", "pencil", "people", "planet", "pocket",
	"polite", "quiet", "rapid", "record", "river", "rocket", "round", "sample", "season", "second",
	"signal", "silver", "simple", "single", "smooth", "soft", "solid", "spring", "square", "stable",
	"steady", "stone", "story", "summer", "sunny", "system", "table", "tender", "thunder", "timber",
	"today", "token", "tower", "travel", "under", "unique", "valley", "velvet", "village",
	"violet", "vivid", "voice", "water", "wave", "window", "winter", "wonder", "wooden", "yellow",
	"zenith",
}

// Sentence lengths of the prose, in words.
const (
	minSentenceWords = 6
	maxSentenceWords = 14
)

// toolResultLead opens the text answer that follows a tool result. It is fixed so that nothing
// from the tool message (which may carry sensitive data) is ever repeated.
const toolResultLead = "Based on the tool result,"

func (r *rng) word() string { return words[r.intn(len(words))] }

// leadPieces are the pieces of toolResultLead.
var leadPieces = SplitPieces(toolResultLead)

// wordForms holds, for each word, " word." and " Word.": every form a prose piece takes is a
// substring of one of them, so making a piece copies nothing.
var wordForms = func() (f [len(words)][2]string) {
	for i, w := range words {
		f[i][0] = " " + w + "."
		f[i][1] = " " + string(w[0]-'a'+'A') + w[1:] + "."
	}
	return f
}()

// prose is the state of a prose answer between two of its pieces: appendProse writes it into a
// builder, a lazy choice (see Prepare) makes it one piece at a time. It is the single definition
// of the prose rules: sentences of 6–14 words from the word list, the first word capitalized and
// the last one followed by "."; the last piece always ends a sentence. Words are separated by
// single spaces, so every piece but the very first is " word". With the lead (after a tool
// result) its pieces come first, count towards the length, and the prose continues the lead's
// sentence in lower case.
type prose struct {
	n       int  // the pieces in all, the lead's included
	emitted int  // the pieces made so far
	left    int  // words left in the current sentence
	lead    bool // open with toolResultLead
	capital bool // the next word starts a sentence
}

func newProse(n int, lead bool) prose { return prose{n: n, lead: lead, capital: !lead} }

// more reports whether a piece is left.
func (p *prose) more() bool { return p.emitted < p.n }

// next makes the next piece, drawing from r. Call it only while more reports true.
func (p *prose) next(r *rng) string {
	k := p.emitted
	p.emitted++
	if p.lead && k < len(leadPieces) {
		return leadPieces[k]
	}
	if p.left == 0 {
		p.left = r.between(minSentenceWords, maxSentenceWords)
	}
	form := &wordForms[r.intn(len(words))]
	p.left--
	end := p.left == 0 || k == p.n-1
	s := form[0]
	if p.capital {
		s = form[1]
	}
	p.capital = end
	if end {
		p.left = 0
	} else {
		s = s[:len(s)-1] // no "."
	}
	if k == 0 {
		s = s[1:] // the very first piece has no space before it
	}
	return s
}

// appendProse appends exactly n pieces of prose to b (see prose), opening with the tool-result
// lead when lead is set. Past the builder's ceiling the rest would be cut: stopping there draws
// fewer words but leaves every word before the cut as it was.
func appendProse(b *pieceBuilder, r *rng, n int, lead bool) {
	reserveProse(b, n)
	// The buffers are appended to as locals and stored back once: stored into the builder (part
	// of the generation, on the heap) each piece cost two pointer writes, with write barriers
	// whenever the collector runs (BenchmarkGenerateChat's profile).
	buf, ends := b.buf, b.ends
	p := newProse(n, lead)
	for p.more() && !b.over(len(ends), len(buf)) {
		buf = append(buf, p.next(r)...)
		ends = append(ends, uint32(len(buf))) // a piece of prose is never empty
	}
	b.buf, b.ends = buf, ends
}

// reserveProse sizes b's buffers once for n pieces of prose: as many as the builder takes before
// its ceiling stops it (one past the ceiling, of a byte at least) at longestProsePiece bytes
// each. The text is about two thirds of that, and all of it is kept (pieceBuilder.pieces): less
// than growing them by doubling leaves idle, and allocated once (see reserve).
func reserveProse(b *pieceBuilder, n int) {
	pieces := n
	if b.limited {
		if b.maxPieces < pieces {
			pieces = b.maxPieces + 1
		}
		pieces = min(pieces, b.room()+1)
	}
	b.reserve(min(pieces*longestProsePiece, b.room()+longestProsePiece), pieces)
}
