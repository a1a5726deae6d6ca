package observability

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidRequestIDMatchesTheContract: the byte loop accepts exactly what the contract's
// pattern accepts.
func TestValidRequestIDMatchesTheContract(t *testing.T) {
	contract := regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	cases := []string{"", "a", "req_0123", "A-b.c:d_e", strings.Repeat("x", 128), strings.Repeat("x", 129),
		"has space", "semi;colon", "ünï", "tab\t", "new\nline", "slash/", "plus+", "\x00", "é"}
	for b := 0; b < 256; b++ {
		cases = append(cases, "id"+string(rune(b)), "id"+string([]byte{byte(b)}))
	}
	for _, c := range cases {
		if got, want := ValidRequestID(c), contract.MatchString(c); got != want {
			t.Errorf("ValidRequestID(%q) = %v, the contract says %v", c, got, want)
		}
	}
}

// TestNewRequestID: the ids the chain makes are "req_" and 32 lower-case hex digits, valid as
// request ids, and differ.
func TestNewRequestID(t *testing.T) {
	shape := regexp.MustCompile(`^req_[0-9a-f]{32}$`)
	seen := map[string]bool{}
	digits := map[byte]bool{}
	for range 1000 {
		id := newRequestID()
		if !shape.MatchString(id) || !ValidRequestID(id) || seen[id] {
			t.Fatalf("id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
		for i := 4; i < len(id); i++ {
			digits[id[i]] = true
		}
	}
	if len(digits) != 16 {
		t.Errorf("%d of the 16 digits used", len(digits))
	}
}

func BenchmarkNewRequestID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = newRequestID()
	}
}
