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
