package protocol

import (
	"strconv"
	"strings"
	"testing"
)

// googleCallsBody is one model content of n function calls named "a" — every third with an id
// of its own — and one user content answering them all: by id where the call has one, else by
// name, in order.
func googleCallsBody(n int) string {
	var calls, responses []string
	for i := range n {
		id := ""
		if i%3 == 0 {
			id = `"id":"c` + strconv.Itoa(i) + `",`
		}
		calls = append(calls, `{"functionCall":{`+id+`"name":"a","args":{}}}`)
		responses = append(responses, `{"functionResponse":{`+id+`"name":"a","response":{"i":`+strconv.Itoa(i)+`}}}`)
	}
	return `{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[` + strings.Join(calls, ",") +
		`]},{"role":"user","parts":[` + strings.Join(responses, ",") + `]}]}`
}

// TestGoogleResponsesPairWithTheirCalls: function responses find their calls by id, else by
// name in order, each call answered once; one more response of the name than calls is refused.
func TestGoogleResponsesPairWithTheirCalls(t *testing.T) {
	req, e := DecodeGoogleRequest(GoogleCall{Model: "mock-tools"}, []byte(googleCallsBody(30)), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	calls, seen := req.Messages[1].ToolCalls, map[string]bool{}
	for i, m := range req.Messages[2:] {
		if m.Role != roleTool || m.ToolCallID != calls[i].ID || seen[m.ToolCallID] {
			t.Fatalf("response %d answers %q, want %q once", i, m.ToolCallID, calls[i].ID)
		}
		seen[m.ToolCallID] = true
	}
	extra := strings.Replace(googleCallsBody(3), `]}]}`, `,{"functionResponse":{"name":"a","response":{}}}]}]}`, 1)
	if _, e := DecodeGoogleRequest(GoogleCall{Model: "mock-tools"}, []byte(extra), Limits{}); e == nil || !strings.Contains(e.Message, "must name a function call") {
		t.Errorf("a fourth response to three calls: %v", e)
	}
}

// TestGoogleInlineDataCounted: an inline document counts its decoded size, whatever the order
// of its members (the walk reads data before mimeType).
func TestGoogleInlineDataCounted(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"AAAA"}},{"inlineData":{"mimeType":"application/pdf","data":"AAAAAAAAAAAAAAAA"}}]}]}`
	req, e := DecodeGoogleRequest(GoogleCall{Model: "mock-chat"}, []byte(body), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if a := req.Attachments; a == nil || len(a.Images) != 1 || len(a.PDFBytes) != 1 || a.PDFBytes[0] != 12 {
		t.Errorf("attachments %+v, want one image and a 12-byte document", a)
	}
}

// BenchmarkDecodeGoogleManyResponses decodes a model content of 2,000 function calls of one
// name and a user content answering them all: pairing responses with calls costs what the
// body holds (docs/performance.md).
func BenchmarkDecodeGoogleManyResponses(b *testing.B) {
	body := []byte(googleCallsBody(2000))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, e := DecodeGoogleRequest(GoogleCall{Model: "mock-tools"}, body, Limits{}); e != nil {
			b.Fatal(e)
		}
	}
}
