package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// The regex attacks of issue 30 through the service: a regex over the program bound is a 400
// naming the field; a regex under it against a long message is answered at once, loudly; a
// client that leaves gets nothing more done for it.
func TestFixtureRegexBounds(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat(`[^b]{1000}`, 30)
	rr := h.do("POST", "/_mock/fixtures", `{"fixtures":[{"name":"big","match":{"last_user":{"regex":"`+big+`"}},"reply":{"content":"x"}}]}`)
	e := decodeError(t, rr.Body.Bytes())
	if rr.Code != 400 || e.Code != "invalid_value" || e.Param == nil || *e.Param != "fixtures[0].match.last_user.regex" ||
		!strings.Contains(e.Message, "--max-regex-program") {
		t.Fatalf("a regex over the bound: %d %s", rr.Code, rr.Body.String())
	}

	addFixtures(t, h, "", `{"fixtures":[{"name":"slow","match":{"last_user":{"regex":"[^z]{0,999}y"}},"reply":{"content":"x"}}]}`)
	long, _ := json.Marshal(strings.Repeat("a", 400<<10) + "CANARY")
	body := `{"model":"mock-echo","messages":[{"role":"user","content":` + string(long) + `}]}`
	rr = h.do("POST", chatPath, body)
	e = decodeError(t, rr.Body.Bytes())
	if rr.Code != 400 || e.Code != "fixture_mismatch" || !strings.Contains(e.Message, `"slow"`) || !strings.Contains(e.Message, "--regex-budget") ||
		strings.Contains(rr.Body.String(), "CANARY") {
		t.Fatalf("a 400 KB message against the regex: %d %s", rr.Code, rr.Body.String())
	}

	// The client has left before matching: nothing is written.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("POST", chatPath, strings.NewReader(body)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, req)
	if w.Body.Len() != 0 {
		t.Fatalf("a client that left was answered: %d %.200s", w.Code, w.Body.String())
	}
}
