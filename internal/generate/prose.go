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

// appendProse appends exactly n pieces of prose to b: sentences of 6–14 words from the word
// list, the first word capitalized and the last one followed by "."; the last piece of the
// prose always ends a sentence. Words are separated by single spaces, so every piece but the
// very first is " word". When lead is non-empty its pieces come first (they count towards n) and
// the prose continues the lead's sentence in lower case.
func appendProse(b *pieceBuilder, r *rng, n int, lead string) {
	emitted := 0
	for _, p := range SplitPieces(lead) {
		if emitted == n || b.full() {
			return
		}
		b.add(p)
		emitted++
	}
	left := 0             // words left in the current sentence
	capital := lead == "" // whether the next word starts a sentence
	// Past the builder's ceiling the rest would be cut: stopping there draws fewer words but
	// leaves every word before the cut as it was.
	for ; emitted < n && !b.full(); emitted++ {
		if left == 0 {
			left = r.between(minSentenceWords, maxSentenceWords)
		}
		w := r.word()
		if len(b.buf) > 0 {
			b.buf = append(b.buf, ' ')
		}
		if capital {
			b.buf = append(b.buf, w[0]-'a'+'A')
			b.buf = append(b.buf, w[1:]...)
			capital = false
		} else {
			b.buf = append(b.buf, w...)
		}
		left--
		if left == 0 || emitted == n-1 {
			b.buf = append(b.buf, '.')
			capital = true
			left = 0
		}
		b.cut()
	}
}
