package dialect

import (
	"mockgateway/internal/catalog"
	"mockgateway/internal/generate"
)

// Call is what a dialect's answer is made of: one executed call of the chat path, its answer
// (Result) as generate made it, and the request's two flags the answer needs. The handler owns
// it; a Reply reads it as it writes the answer.
type Call struct {
	ID           string // the answer's id, the dialect's (Dialect.Reply)
	Created      int64
	Model        *catalog.Model // the model that answers: the requested one or a fallback
	Stream       bool
	IncludeUsage bool
	// Result is Generate's for JSON; Prepare's for a stream: lazy prose, settled as it is sent.
	Result generate.Result
}

// HashString goes on hashing s into h, an FNV-1a (64 bits) state: the ids a dialect derives
// from the request's seed and the model's id.
func HashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// EatenByReasoning reports a choice of a reasoning model that the reasoning left no budget for
// (generate.Reason): no text, cut by length.
func EatenByReasoning(ch *generate.Choice) bool {
	return !ch.Lazy() && len(ch.ToolCalls) == 0 && ch.Refusal.IsNil() && ch.Content.Len() == 0 && ch.FinishReason == "length"
}

// NextPiece is a text answer's next piece, for the event streams that pull one piece per delta:
// made now for a lazy choice, else read from the result at *j (the content, or the refusal),
// which it advances.
func NextPiece(ch *generate.Choice, j *int) (string, bool) {
	if ch.Lazy() {
		return ch.Next()
	}
	pieces := ch.Content
	if !ch.Refusal.IsNil() {
		pieces = ch.Refusal
	}
	if *j >= pieces.Len() {
		return "", false
	}
	*j++
	return pieces.At(*j - 1), true
}
