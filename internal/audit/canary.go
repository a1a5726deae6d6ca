package audit

import (
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
