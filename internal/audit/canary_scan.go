package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Hit is one canary (or a piece of one) found in a text.
type Hit struct {
	Canary   *Canary // nil for a fragment that fits no single canary
	Encoding string  // exact, case-changed, truncated, fragment, hex, base64, base64url, percent-decoded, unicode-unescaped
	Text     string  // the text Start and End refer to (a decoded view for the last two encodings)
	Start    int
	End      int
}

// Scan finds every canary in s, in every form the audit knows: exact (which is also the
// JSON-escaped, URL-encoded and query-escaped form), with its case changed, cut short, hex,
// base64 and base64url at any alignment, and inside percent-encoded or \u-escaped text.
// A canary is reported once per text, in its plainest form.
func (c *Canaries) Scan(s string) []Hit {
	var hits []Hit
	seen := map[string]bool{}
	add := func(h Hit) {
		key := "fragment:" + h.Text[h.Start:h.End]
		if h.Canary != nil {
			key = h.Canary.Value
		}
		if seen[key] {
			return
		}
		seen[key] = true
		hits = append(hits, h)
	}
	lower := asciiLower(s)
	c.scanPlain(s, lower, "exact", add)
	c.scanHex(s, lower, add)
	c.scanBase64(s, add)
	if v, ok := percentDecode(s); ok {
		c.scanPlain(v, asciiLower(v), "percent-decoded", add)
	}
	if v, ok := unicodeUnescape(s); ok {
		c.scanPlain(v, asciiLower(v), "unicode-unescaped", add)
	}
	for _, sf := range c.secrets {
		for _, f := range sf.forms {
			hay := s
			if f.fold {
				hay = lower
			}
			if i := strings.Index(hay, f.text); i >= 0 {
				add(Hit{Canary: sf.canary, Encoding: f.encoding, Text: s, Start: i, End: i + len(f.text)})
				break
			}
		}
	}
	return hits
}

func isCanaryByte(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') }

func (c *Canaries) scanPlain(orig, lower, encoding string, add func(Hit)) {
	for from := 0; ; {
		i := strings.Index(lower[from:], c.prefix)
		if i < 0 {
			return
		}
		i += from
		from = i + 1
		if i+canaryLen <= len(lower) {
			if k, ok := c.byValue[lower[i:i+canaryLen]]; ok {
				enc := encoding
				if enc == "exact" && orig[i:i+canaryLen] != k.Value {
					enc = "case-changed"
				}
				add(Hit{Canary: k, Encoding: enc, Text: orig, Start: i, End: i + canaryLen})
				continue
			}
		}
		j := i + canaryPrefixLen
		for j < len(lower) && j < i+canaryLen && isCanaryByte(lower[j]) {
			j++
		}
		add(c.fragment(lower[i:j], orig, i, j))
	}
}

// fragment names the canary a cut-short piece belongs to when only one fits.
func (c *Canaries) fragment(piece, text string, start, end int) Hit {
	var only *Canary
	if len(piece) > canaryPrefixLen {
		for _, k := range c.list {
			if strings.HasPrefix(k.Value, piece) {
				if only != nil {
					only = nil
					break
				}
				only = k
			}
		}
	}
	if only != nil {
		return Hit{Canary: only, Encoding: "truncated", Text: text, Start: start, End: end}
	}
	return Hit{Encoding: "fragment", Text: text, Start: start, End: end}
}

func (c *Canaries) scanHex(orig, lower string, add func(Hit)) {
	for from := 0; ; {
		i := strings.Index(lower[from:], c.hexPrefix)
		if i < 0 {
			return
		}
		i += from
		from = i + 1
		j := i
		for j < len(lower) && j < i+2*canaryLen && isHexByte(lower[j]) {
			j++
		}
		j -= (j - i) % 2
		dec := make([]byte, (j-i)/2)
		if _, err := hex.Decode(dec, []byte(lower[i:j])); err != nil {
			continue
		}
		if k, ok := c.byValue[asciiLower(string(dec))]; ok {
			add(Hit{Canary: k, Encoding: "hex", Text: orig, Start: i, End: j})
			continue
		}
		h := c.fragment(asciiLower(string(dec)), orig, i, j)
		if h.Canary != nil {
			h.Encoding = "hex, truncated"
		}
		add(h)
	}
}

func isHexByte(b byte) bool { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') }

func isBase64Byte(b byte) bool {
	return (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '+' || b == '/' || b == '-' || b == '_'
}

// scanBase64 decodes every run of base64 characters long enough to hold the prefix, at each of
// the four offsets, and looks for canaries in the decoded bytes. Decoding the runs, rather than
// searching for each canary's encodings, costs the same whatever the number of canaries.
func (c *Canaries) scanBase64(s string, add func(Hit)) {
	minRun := (canaryPrefixLen*4 + 2) / 3
	prefix := []byte(c.prefix)
	for i := 0; i < len(s); {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Byte(s[j]) {
			j++
		}
		if j-i >= minRun {
			run := s[i:j]
			enc := "base64"
			if strings.ContainsAny(run, "-_") {
				enc = "base64url"
			}
			norm := strings.NewReplacer("-", "+", "_", "/").Replace(run)
			for off := 0; off < 4 && off < len(norm); off++ {
				t := norm[off:]
				t = t[:len(t)/4*4]
				dec, err := base64.StdEncoding.DecodeString(t)
				if err != nil {
					continue
				}
				dl := bytes.ToLower(dec)
				for from := 0; ; {
					k := bytes.Index(dl[from:], prefix)
					if k < 0 {
						break
					}
					k += from
					from = k + 1
					start, end := i, j // the whole run: a base64 run cannot be cut at a byte
					if k+canaryLen <= len(dl) {
						if can, ok := c.byValue[string(dl[k:k+canaryLen])]; ok {
							add(Hit{Canary: can, Encoding: enc, Text: s, Start: start, End: end})
							continue
						}
					}
					e := k + canaryPrefixLen
					for e < len(dl) && e < k+canaryLen && isCanaryByte(dl[e]) {
						e++
					}
					h := c.fragment(string(dl[k:e]), s, start, end)
					if h.Canary != nil {
						h.Encoding = enc + ", truncated"
					}
					add(h)
				}
			}
		}
		i = j
	}
}
