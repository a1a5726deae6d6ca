package audit

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Canaries are random strings of [a-z0-9] that all begin with one random run prefix. The
// alphabet is chosen so that JSON escaping, URL and query escaping, quoting and HTML escaping
// leave a canary byte for byte as it is: searching for the exact canary covers those forms. The
// common prefix lets one pass over a text find every canary (and every truncated piece of one)
// however many there are; hex and base64 are searched by decoding.
const (
	canaryAlphabet  = "abcdefghijklmnopqrstuvwxyz0123456789"
	canaryPrefixLen = 12
	canarySuffixLen = 8
	canaryLen       = canaryPrefixLen + canarySuffixLen
)

// canaryKind says whether a canary may legitimately come back somewhere.
type canaryKind int

const (
	kindPlain canaryKind = iota
	// kindUnknownField is the name of an unknown request field: the contract has the error's
	// param (and message) name it, in the response to the request that sent it, and nowhere else.
	kindUnknownField
	// kindTraceState is a W3C tracestate value: the contract continues the caller's trace, and
	// OpenTelemetry carries tracestate with the span context, so a span's own trace-state field
	// (OTLP trace_state, Jaeger's w3c.tracestate tag) may hold it, and nothing else.
	kindTraceState
	// kindSecret is a known secret (the local API key given with --api-key), not a random canary.
	kindSecret
)

// Canary is one string put in one place of one request.
type Canary struct {
	ID    string // c0042: the name reports use; the value itself is never printed
	Value string
	Probe string // the probe (request) it was sent in
	Place string // where in that request
	Kind  canaryKind
}

// Canaries hands out canaries and finds them in text.
type Canaries struct {
	prefix    string
	hexPrefix string
	list      []*Canary
	byValue   map[string]*Canary
	secrets   []*secretForms
}

type secretForms struct {
	canary *Canary
	forms  []secretForm
}

type secretForm struct {
	text, encoding string
	fold           bool // compare lowercased
}

func randomString(n int, firstLetter bool) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		alpha := canaryAlphabet
		if i == 0 && firstLetter {
			alpha = canaryAlphabet[:26]
		}
		b[i] = alpha[int(b[i])%len(alpha)]
	}
	return string(b), nil
}

func newCanaries() (*Canaries, error) {
	p, err := randomString(canaryPrefixLen, true)
	if err != nil {
		return nil, fmt.Errorf("random canaries: %w", err)
	}
	return &Canaries{prefix: p, hexPrefix: hex.EncodeToString([]byte(p)), byValue: map[string]*Canary{}}, nil
}

// New returns a fresh canary for place in probe.
func (c *Canaries) New(probe, place string, kind canaryKind) *Canary {
	for {
		s, err := randomString(canarySuffixLen, false)
		if err != nil {
			panic("crypto/rand failed: " + err.Error()) // the runtime aborts before this on Linux
		}
		v := c.prefix + s
		if _, dup := c.byValue[v]; dup {
			continue
		}
		k := &Canary{ID: fmt.Sprintf("c%04d", len(c.list)+1), Value: v, Probe: probe, Place: place, Kind: kind}
		c.list = append(c.list, k)
		c.byValue[v] = k
		return k
	}
}

// AddSecret registers a known secret to search for in the same forms as canaries. Secrets
// shorter than 8 bytes are not searched: they would match by chance.
func (c *Canaries) AddSecret(value, place string) bool {
	if len(value) < 8 {
		return false
	}
	k := &Canary{ID: fmt.Sprintf("s%d", len(c.secrets)+1), Value: value, Place: place, Kind: kindSecret}
	sf := &secretForms{canary: k}
	add := func(text, enc string, fold bool) {
		if len(text) >= 8 {
			sf.forms = append(sf.forms, secretForm{text, enc, fold})
		}
	}
	add(value, "exact", false)
	add(strings.ToLower(value), "case-changed", true)
	if q := url.QueryEscape(value); q != value {
		add(q, "url-encoded", true)
	}
	if j, _ := json.Marshal(value); string(j[1:len(j)-1]) != value {
		add(string(j[1:len(j)-1]), "json-escaped", false)
	}
	add(hex.EncodeToString([]byte(value)), "hex", true)
	for k := 0; k < 3; k++ {
		core := base64Core([]byte(value), k)
		add(core, "base64", false)
		add(strings.NewReplacer("+", "-", "/", "_").Replace(core), "base64url", false)
	}
	c.secrets = append(c.secrets, sf)
	return true
}

// base64Core is the part of the base64 encoding of v that is the same wherever v sits in a
// longer input whose length before v is k modulo 3.
func base64Core(v []byte, k int) string {
	enc := base64.RawStdEncoding.EncodeToString(append(make([]byte, k), v...))
	from := 0
	if k > 0 {
		from = 4
	}
	to := (k + len(v)) / 3 * 4
	if to <= from {
		return ""
	}
	return enc[from:to]
}

// Count is the number of canaries handed out.
func (c *Canaries) Count() int { return len(c.list) }

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

// asciiLower lowercases ASCII letters only, so that byte offsets stay the same.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func unhex(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

// percentDecode decodes every %XX, leaving anything else as it is; ok is false when there was
// nothing to decode.
func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return "", false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(h<<4 | l)
				i += 2
				changed = true
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), changed
}

// unicodeUnescape decodes \uXXXX, \xXX and &#NN; / &#xNN; escapes of ASCII characters (an
// encoder that escapes every character would otherwise hide a canary from the exact search).
func unicodeUnescape(s string) (string, bool) {
	if !strings.Contains(s, `\u`) && !strings.Contains(s, `\x`) && !strings.Contains(s, "&#") {
		return "", false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U'):
			if v, ok := hexValue(s[i+2 : i+6]); ok && v < 0x80 {
				b.WriteByte(byte(v))
				i += 5
				changed = true
				continue
			}
		case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x':
			if v, ok := hexValue(s[i+2 : i+4]); ok && v < 0x80 {
				b.WriteByte(byte(v))
				i += 3
				changed = true
				continue
			}
		case s[i] == '&' && i+3 < len(s) && s[i+1] == '#':
			end := strings.IndexByte(s[i:min(len(s), i+10)], ';')
			if end > 2 {
				num := s[i+2 : i+end]
				var v int
				var ok bool
				if num[0] == 'x' || num[0] == 'X' {
					v, ok = hexValue(num[1:])
				} else {
					v, ok = decValue(num)
				}
				if ok && v < 0x80 {
					b.WriteByte(byte(v))
					i += end
					changed = true
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), changed
}

func hexValue(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		d, ok := unhex(s[i])
		if !ok {
			return 0, false
		}
		v = v<<4 | int(d)
	}
	return v, true
}

func decValue(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}

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
