package protocol

import (
	"reflect"
	"strings"
	"testing"

	"mockgateway/internal/apierr"
)

// checkRunsAgree holds decodeWithPathsOnError's premise on body, for both dialects: the run with unnamed
// paths and the run with named ones reach the same verdict — the same request, or an error of
// the same code — and the named run's param never holds the unnamed root.
func checkRunsAgree(t *testing.T, body []byte) {
	t.Helper()
	if !validObjectBody(body) {
		return // refused before either run
	}
	doc, lim := string(body), Limits{}.withDefaults()
	for _, d := range []struct {
		name   string
		decode func(doc string, lim Limits, root string) (*Request, *apierr.Error)
	}{{"chat", decodeChat}, {"responses", decodeResponses}} {
		unnamedReq, unnamedErr := d.decode(doc, lim, unnamedRoot)
		namedReq, namedErr := d.decode(doc, lim, namedRoot)
		switch {
		case (unnamedErr == nil) != (namedErr == nil):
			t.Fatalf("%s %q: unnamed run %v, named run %v", d.name, body, unnamedErr, namedErr)
		case namedErr != nil:
			if unnamedErr.Code != namedErr.Code || unnamedErr.Status != namedErr.Status || unnamedErr.Type != namedErr.Type {
				t.Fatalf("%s %q: unnamed run %+v, named run %+v", d.name, body, unnamedErr, namedErr)
			}
			if strings.Contains(namedErr.Param, unnamedRoot) || strings.Contains(namedErr.Message, unnamedRoot) {
				t.Fatalf("%s %q: the named run's error %+v holds the unnamed root", d.name, body, namedErr)
			}
		case !reflect.DeepEqual(unnamedReq, namedReq):
			t.Fatalf("%s %q: unnamed run %+v, named run %+v", d.name, body, unnamedReq, namedReq)
		}
	}
}

// TestPathsOfBothRuns: a path joined in the unnamed run stays unnamed; in the named run it is
// the place, with a client's key cleaned.
func TestPathsOfBothRuns(t *testing.T) {
	if p := joinPath(indexPath(joinPath(unnamedRoot, "messages"), 3), "content"); p != unnamedRoot {
		t.Errorf("unnamed run: %q", p)
	}
	for _, tc := range []struct{ got, want string }{
		{joinPath(indexPath(joinPath(namedRoot, "messages"), 3), "content"), "messages[3].content"},
		{joinPath(namedRoot, "a\x00b"), "a?b"},
		{joinPath("tools[0]", ""), `tools[0].""`},
		{joinPath(namedRoot, strings.Repeat("k", 70)), strings.Repeat("k", 64)},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestDecodeNamedReportsTheNamedRun: the error a failing body gets names its place, from a NUL
// key too, and a clean body is decoded by one run.
func TestDecodeNamedReportsTheNamedRun(t *testing.T) {
	for _, tc := range []struct{ body, param string }{
		{reqWithMessages(`{"role":"user","content":[{"type":"text","text":1}]}`), "messages[0].content[0].text"},
		{reqWith(`"\u0000":1`), "?"},
		{`{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c","output":"x"}]}`, "input[1].call_id"},
	} {
		_, e := DecodeChatRequest([]byte(tc.body), Limits{})
		if strings.Contains(tc.body, `"input"`) {
			_, _, e = DecodeResponsesRequest([]byte(tc.body), Limits{})
		}
		if e == nil || e.Param != tc.param || !strings.Contains(e.Message, "'"+tc.param+"'") {
			t.Errorf("%s: got %+v, want param %q", tc.body, e, tc.param)
		}
		checkRunsAgree(t, []byte(tc.body))
	}
	runs := 0
	_, e := decodeWithPathsOnError(func(root string) (int, *apierr.Error) { runs++; return 1, nil })
	if e != nil || runs != 1 {
		t.Errorf("a clean decode ran %d times", runs)
	}
}

// decodeResponses is decodeResponsesEchoed without the echo: decodeChat's counterpart.
func decodeResponses(doc string, lim Limits, root string) (*Request, *apierr.Error) {
	d, e := decodeResponsesEchoed(doc, lim, root)
	return d.req, e
}
