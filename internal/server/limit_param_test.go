package server

import "testing"

// TestLimitParam: the control surface's limit is the OpenAPI's integer — digits only, so a
// sign, a space or a fraction is 400 invalid_value, as 0 is — in the journal, the quota list
// and the span buffer alike; a plain number is taken.
func TestLimitParam(t *testing.T) {
	h := newHarness(t, journaled)
	for _, path := range []string{"/_mock/journal", "/_mock/quotas", "/debug/traces"} {
		for _, bad := range []string{"%2B5", "-0", "+", "5.0", "%205", "0", "99999999999999999999"} {
			checkError(t, h.do("GET", path+"?limit="+bad, ""), 400, "invalid_value", "limit")
		}
		if rr := h.do("GET", path+"?limit=5", ""); rr.Code != 200 {
			t.Errorf("%s?limit=5: %d %s", path, rr.Code, rr.Body)
		}
	}
}
