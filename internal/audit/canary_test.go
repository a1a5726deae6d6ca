package audit

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

func TestAuditScanEncodings(t *testing.T) {
	c, err := newCanaries()
	if err != nil {
		t.Fatal(err)
	}
	k := c.New("p01", "user message", kindPlain)
	other := c.New("p01", "system message", kindPlain)
	v := k.Value
	b64 := func(s string) string { return base64Std(s) }
	cases := map[string]string{
		"exact":             "prompt=" + v + " end",
		"case-changed":      "PROMPT=" + strings.ToUpper(v),
		"truncated":         "preview=" + v[:canaryLen-3] + "…",
		"hex":               "body=" + fmt.Sprintf("%x", "xx"+v+"yy"),
		"base64":            "b=" + b64("a"+v+"b"),
		"base64url":         "b=" + strings.NewReplacer("+", "-", "/", "_").Replace(b64("ab"+v+"\xff\xfe")),
		"percent-decoded":   "q=%" + strings.Join(splitHex(v), "%"),
		"unicode-unescaped": `msg="` + unicodeEscape(v) + `"`,
	}
	for want, text := range cases {
		hits := c.Scan(text)
		if len(hits) != 1 || hits[0].Canary != k || !strings.HasPrefix(hits[0].Encoding, want) {
			t.Errorf("%s: hits = %+v", want, hits)
			continue
		}
		if ex := c.Excerpt(hits[0]); strings.Contains(ex, v) || strings.Contains(strings.ToLower(ex), v) {
			t.Errorf("%s: excerpt shows the canary: %s", want, ex)
		}
	}
	// base64 at every alignment.
	for pad := 0; pad < 3; pad++ {
		text := b64(strings.Repeat("z", pad) + "{\"auth\":\"" + v + "\"}")
		if hits := c.Scan(text); len(hits) != 1 || hits[0].Canary != k {
			t.Errorf("base64 with %d bytes before: %+v", pad, hits)
		}
	}
	// A fragment too short to tell which canary it was cut from is still reported.
	if hits := c.Scan("x " + c.prefix + " y"); len(hits) != 1 || hits[0].Encoding != "fragment" {
		t.Errorf("bare prefix: %+v", hits)
	}
	if hits := c.Scan("nothing here " + strings.Repeat("a", 100)); len(hits) != 0 {
		t.Errorf("false positives: %+v", hits)
	}
	if got := c.Mask("a " + v + " b " + other.Value); got != "a ‹"+k.ID+"› b ‹"+other.ID+"›" {
		t.Errorf("Mask = %q", got)
	}
	if !c.AddSecret("sk-local-key-1234", "api key") || c.AddSecret("short", "x") {
		t.Error("AddSecret")
	}
	if hits := c.Scan("h=" + b64("Bearer sk-local-key-1234")); len(hits) != 1 || hits[0].Canary.Kind != kindSecret {
		t.Errorf("base64 secret: %+v", hits)
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func splitHex(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		out = append(out, fmt.Sprintf("%02X", s[i]))
	}
	return out
}

func unicodeEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
