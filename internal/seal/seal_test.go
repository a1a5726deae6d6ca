package seal

import (
	"strings"
	"testing"
)

// TestSealRoundTrip: a seal opens with the key and purpose it was made with, and is the same
// bytes in every replica that shares the key.
func TestSealRoundTrip(t *testing.T) {
	a, b := New("a key every replica shares"), New("a key every replica shares")
	sealed := a.Seal(ReasoningItem, []byte("rs_1:192"))
	if sealed != b.Seal(ReasoningItem, []byte("rs_1:192")) {
		t.Fatal("two replicas with one key sealed the same plaintext differently")
	}
	if sealed == a.Seal(ReasoningItem, []byte("rs_2:192")) {
		t.Fatal("two plaintexts sealed alike")
	}
	got, err := b.Open(ReasoningItem, sealed)
	if err != nil || string(got) != "rs_1:192" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if strings.Contains(sealed, "rs_1") {
		t.Fatalf("the seal shows its plaintext: %s", sealed)
	}
}

// TestSealRefuses: tampered, truncated, foreign (another key), another purpose's and
// non-base64 seals do not open.
func TestSealRefuses(t *testing.T) {
	s := New("a key every replica shares")
	sealed := s.Seal(ReasoningItem, []byte("rs_1:192"))
	flip := []byte(sealed)
	i := len(flip) / 2
	if flip[i] == 'A' {
		flip[i] = 'B'
	} else {
		flip[i] = 'A'
	}
	for name, c := range map[string]struct{ purpose, sealed string }{
		"tampered":      {ReasoningItem, string(flip)},
		"truncated":     {ReasoningItem, sealed[:len(sealed)-4]},
		"foreign key":   {ReasoningItem, New("another deployment's key").Seal(ReasoningItem, []byte("rs_1:192"))},
		"other purpose": {"anthropic.thinking.signature", sealed},
		"not base64":    {ReasoningItem, "gAAAA+/=="},
		"empty":         {ReasoningItem, ""},
		"random key":    {ReasoningItem, Random().Seal(ReasoningItem, []byte("rs_1:192"))},
	} {
		if _, err := s.Open(c.purpose, c.sealed); err != ErrInvalid {
			t.Errorf("%s: open = %v, want ErrInvalid", name, err)
		}
	}
}
