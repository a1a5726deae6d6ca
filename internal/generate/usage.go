package generate

import (
	"unicode"
	"unicode/utf8"

	"mockgateway/internal/protocol"
)

// Constants of the prompt-token estimator. They are part of the documented, stable rule (see
// the package documentation); changing one changes every usage number clients see.
const (
	promptPrimingTokens = 3 // the assistant reply's priming, counted once per request
	perMessageTokens    = 4 // role and framing of each message
	perToolTokens       = 8 // framing of each tool definition
	runesPerToken       = 4

	// An image counts its pixels over imagePixelsPerToken, as Anthropic documents it, after
	// the long edge is brought down to imageLongEdge as Anthropic resizes; at most
	// imageMaxTokens, Anthropic's "about 1,600", which an image of unknown size counts too.
	imagePixelsPerToken = 750
	imageLongEdge       = 1568
	imageMaxTokens      = 1600
	// A PDF counts pdfPageTokens per started pdfPageBytes of its decoded data (one page for
	// one of unknown size): the mock reads no PDF, and its size stands for its pages.
	pdfPageBytes  = 50_000
	pdfPageTokens = 3000
)

// CountTokens is the estimator's rule for a piece of text: the sum, over the whitespace-separated
// words of s, of ceil(runes/4). So "" is 0, "hello" is 2, "a b" is 2, "tokenizer" is 3.
func CountTokens(s string) int {
	var c tokenCounter
	for _, r := range s {
		c.add(r)
	}
	return c.total()
}

// countTokensBytes is CountTokens over bytes, so that a tool's parameters (kept as bytes) are
// counted where they lie instead of being copied into a string first.
func countTokensBytes(b []byte) int {
	var c tokenCounter
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		c.add(r)
		b = b[size:]
	}
	return c.total()
}

// tokenCounter applies the rule one rune at a time.
type tokenCounter struct{ sum, runes int }

// isSpace is unicode.IsSpace with ASCII, nearly every rune of a prompt or an answer, told apart
// without a call: unicode.IsSpace is not inlined, and calling it per rune was the largest cost
// of a megabyte prompt (the scaling table's profile; BenchmarkCountTokens measures it) and of
// splitting an echoed one into pieces. TestCountTokensMatchesIsSpace holds the two to each
// other.
func isSpace(r rune) bool {
	if uint32(r) < utf8.RuneSelf {
		return r == ' ' || uint32(r)-'\t' <= '\r'-'\t' // \t \n \v \f \r
	}
	return unicode.IsSpace(r)
}

// add counts one rune.
func (c *tokenCounter) add(r rune) {
	if isSpace(r) {
		c.sum += ceilDiv(c.runes, runesPerToken)
		c.runes = 0
		return
	}
	c.runes++
}

func (c *tokenCounter) total() int { return c.sum + ceilDiv(c.runes, runesPerToken) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ImageTokens is the estimator's rule for an image of size s: width × height / 750, rounded
// up, once a long edge above 1568 pixels is scaled down to 1568 (the other edge with it, at
// least 1); at most 1,600, which an image of unknown size (zero) counts.
func ImageTokens(s protocol.ImageSize) int {
	w, h := int64(s.Width), int64(s.Height)
	if w <= 0 || h <= 0 {
		return imageMaxTokens
	}
	if long := max(w, h); long > imageLongEdge {
		w, h = max(1, w*imageLongEdge/long), max(1, h*imageLongEdge/long)
	}
	return int(min(ceilDiv64(w*h, imagePixelsPerToken), imageMaxTokens))
}

// PDFTokens is the estimator's rule for a PDF of size bytes decoded: 3,000 per started 50,000
// bytes, and 3,000 for one of unknown size (zero).
func PDFTokens(size int) int { return pdfPageTokens * max(1, ceilDiv(size, pdfPageBytes)) }

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// attachmentTokens is what a request's images and documents add to its prompt.
func attachmentTokens(a *protocol.Attachments) int {
	n := 0
	for _, s := range a.Images {
		n += ImageTokens(s)
	}
	for _, size := range a.PDFBytes {
		n += PDFTokens(size)
	}
	for _, t := range a.Texts {
		n += CountTokens(t)
	}
	return n
}

// PromptTokens is the estimator's rule for a request, computed in one pass over the text
// without copying it: 3, plus for each message 4 + the tokens of
// its content and name + for each of its tool calls the tokens of the name and the arguments,
// plus for each tool 8 + the tokens of its name, description and compact parameters JSON,
// plus what its images and documents add (ImageTokens, PDFTokens, and a document's or a search
// result's text as text).
func PromptTokens(req *protocol.Request) int {
	if req == nil {
		return promptPrimingTokens
	}
	n := promptPrimingTokens
	for i := range req.Messages {
		m := &req.Messages[i]
		n += perMessageTokens + CountTokens(m.Content) + CountTokens(m.Name)
		for j := range m.ToolCalls {
			n += CountTokens(m.ToolCalls[j].Name) + CountTokens(m.ToolCalls[j].Arguments)
		}
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		n += perToolTokens + CountTokens(t.Name) + CountTokens(t.Description) +
			countTokensBytes(t.Parameters)
	}
	if req.Attachments != nil {
		n += attachmentTokens(req.Attachments)
	}
	return n
}
