package generate

import (
	"fmt"
	"testing"
)

// TestNumberFastMatchesExact: the int64 shortcut writes what the exact path writes, drawing the
// same random numbers, for every combination of integer bounds it accepts.
func TestNumberFastMatchesExact(t *testing.T) {
	bounds := []string{``, `"minimum":-3`, `"minimum":7`, `"maximum":-3`, `"maximum":7`,
		`"exclusiveMinimum":-1`, `"exclusiveMaximum":0`, `"exclusiveMinimum":true`, `"exclusiveMaximum":true`,
		`"minimum":1099511627776`, `"maximum":"x"`, `"minimum":2.5`, `"exclusiveMaximum":7`, `"minimum":7,"maximum":7`}
	fast := 0
	for _, typ := range []string{"integer", "number"} {
		for _, a := range bounds {
			for _, b := range bounds {
				for _, c := range bounds {
					schema := `{"type":"` + typ + `"`
					for _, kw := range []string{a, b, c} {
						if kw != "" {
							schema += "," + kw
						}
					}
					schema += "}"
					s, err := parseJSON([]byte(schema))
					if err != nil {
						continue // a keyword twice is still JSON; only broken text is skipped
					}
					for stream := range uint64(3) {
						got, ok := numberWith(s, typ == "integer", stream, true)
						if !ok {
							continue
						}
						fast++
						want, _ := numberWith(s, typ == "integer", stream, false)
						if got != want {
							t.Fatalf("%s stream %d: fast %s, exact %s", schema, stream, got, want)
						}
					}
				}
			}
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d cases took the fast path", fast)
	}
}

// numberWith writes one number with the fast or the exact path, then one more draw, so that a
// difference in the draws shows too.
func numberWith(s *jvalue, integer bool, stream uint64, fast bool) (string, bool) {
	var r rng
	r.seed(subSeed([32]byte{}, "number", stream, 0))
	var b pieceBuilder
	g := schemaGen{r: &r, b: &b, cache: newRequestCache()}
	if fast {
		if !g.numberFast(s, integer) {
			return "", false
		}
	} else {
		g.numberExact(s, integer)
	}
	return fmt.Sprint(string(b.buf), " ", r.uint64()), true
}

func TestFormatHundredths(t *testing.T) {
	for k, want := range map[int64]string{0: "0", 5: "0.05", -5: "-0.05", 150: "1.5", -300: "-3", 1234: "12.34", -1201: "-12.01"} {
		if got := formatHundredths(k); got != want {
			t.Errorf("formatHundredths(%d) = %s, want %s", k, got, want)
		}
	}
}
