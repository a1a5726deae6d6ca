package audit

import "strings"

// Mask replaces every canary, canary piece and secret in s with its id (‹c0042›) or ‹canary›,
// so that a report never carries one.
func (c *Canaries) Mask(s string) string {
	hits := c.Scan(s)
	if len(hits) == 0 {
		return s
	}
	type span struct {
		start, end int
		label      string
	}
	var spans []span
	for _, h := range hits {
		if h.Text != s { // found only in a decoded view: mask the whole token around it
			continue
		}
		label := "‹canary›"
		if h.Canary != nil {
			label = "‹" + h.Canary.ID + "›"
		}
		spans = append(spans, span{h.Start, h.End, label})
	}
	// Apply from the right so earlier offsets stay valid; overlapping spans are merged.
	for i := 0; i < len(spans); i++ {
		for j := i + 1; j < len(spans); j++ {
			if spans[j].start > spans[i].start {
				spans[i], spans[j] = spans[j], spans[i]
			}
		}
	}
	out := s
	lastStart := len(s) + 1
	for _, sp := range spans {
		if sp.end > lastStart {
			sp.end = lastStart
		}
		if sp.start >= sp.end {
			continue
		}
		out = out[:sp.start] + sp.label + out[sp.end:]
		lastStart = sp.start
	}
	// Anything left that decodes to a canary (percent- or \u-escaped) is masked as a whole token.
	if len(c.Scan(out)) > 0 {
		return maskTokens(out, func(tok string) bool { return len(c.Scan(tok)) > 0 })
	}
	return out
}

func maskTokens(s string, bad func(string) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '"' && s[j] != '\'' && s[j] != ',' && s[j] != '\n' {
			j++
		}
		if j == i {
			b.WriteByte(s[i])
			i++
			continue
		}
		if bad(s[i:j]) {
			b.WriteString("‹canary›")
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

// Excerpt is the text around a hit, at most about 50 characters each side, with the hit and any
// other canary masked and control characters shown as '?'.
func (c *Canaries) Excerpt(h Hit) string {
	const side = 50
	label := "‹canary›"
	if h.Canary != nil {
		label = "‹" + h.Canary.ID + "›"
	}
	// Widen the window rather than cut through a word: another canary cut in half would be
	// neither found nor masked.
	from, to := max(0, h.Start-side), min(len(h.Text), h.End+side)
	for from > 0 && from > h.Start-side-canaryLen && isCanaryByte(lowerByte(h.Text[from-1])) {
		from--
	}
	for to < len(h.Text) && to < h.End+side+canaryLen && isCanaryByte(lowerByte(h.Text[to])) {
		to++
	}
	before, after := h.Text[from:h.Start], h.Text[h.End:to]
	pre, post := "", ""
	if from > 0 {
		pre = "…"
	}
	if to < len(h.Text) {
		post = "…"
	}
	return pre + printable(c.Mask(before)) + label + printable(c.Mask(after)) + post
}

func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
