package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// eventStream checks a Responses stream against the document: only frames of an `event: <type>`
// line, a `data: <json>` line and a blank line; every data valid against the frame schema, its
// type the event line's; sequence_number counting from 0; no [DONE]; the last event
// response.completed, response.incomplete or error, and nothing after an error.
func (d *apiDoc) eventStream(what, frameSchema string, b []byte) {
	d.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 4<<20)
	var (
		name, last string
		seq        int
		blank      = true
	)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name != "" {
				d.t.Errorf("%s: an event line without its data line", what)
				return
			}
			blank = true
		case strings.HasPrefix(line, "event: "):
			if !blank || name != "" || last == "error" {
				d.t.Errorf("%s: an event line not after a blank line, or after the error event: %q", what, line)
				return
			}
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if name == "" || data == "[DONE]" {
				d.t.Errorf("%s: a data line without its event line, or [DONE]: %q", what, line)
				return
			}
			d.validate(what+" event "+name, frameSchema, []byte(data))
			var head struct {
				Type string `json:"type"`
				Seq  *int   `json:"sequence_number"`
			}
			if err := json.Unmarshal([]byte(data), &head); err != nil || head.Type != name || head.Seq == nil || *head.Seq != seq {
				d.t.Errorf("%s: event %d (%s) has type %q and sequence_number %v", what, seq, name, head.Type, head.Seq)
			}
			if name == "error" {
				var e struct{ Code string }
				_ = json.Unmarshal([]byte(data), &e)
				d.errors++
				d.codes[e.Code] = true
			}
			seq++
			d.events++
			d.responses["event: "+name] = true // for conformResponses' count of event types
			last, name, blank = name, "", false
		default:
			d.t.Errorf("%s: not a line of a Responses stream: %q", what, line)
			return
		}
	}
	if !blank || !slices.Contains([]string{"response.completed", "response.incomplete", "error"}, last) {
		d.t.Errorf("%s: the stream ends with %q (and a blank line: %v), not response.completed, response.incomplete or error", what, last, blank)
	}
}

// conformResponses sends POST /v1/responses requests that between them reach every kind of
// answer and every event the mock writes — prose, a budget-cut (incomplete) answer, function
// calls, structured output, a fixture's refusal and tool call, every Responses client corpus
// body, JSON and streamed — its refusals, its faults (a mid-stream error event), and the
// stored-response routes with several methods and depths; each response is held to the
// document by do. It checks that the streams sent every event type the document lists.
func conformResponses(t *testing.T, d *apiDoc, do func(*harness, string, string, string, ...string) *httptest.ResponseRecorder) {
	t.Helper()
	h := newHarness(t)
	instant := []string{"X-Mock-Latency", "instant"}
	before := d.events
	var bodies []string
	for _, tc := range responsesCases {
		bodies = append(bodies, tc.body)
	}
	bodies = append(bodies,
		`{"model":"mock-echo","input":"Say hello to the world","max_output_tokens":16}`,
		`{"model":"mock-echo","input":"`+strings.Repeat("word ", 40)+`","max_output_tokens":16}`,
		`{"model":"mock-chat","input":"A thing","text":{"format":{"type":"json_object"}}}`,
		`{"model":"mock-tools","input":"Weather?","tools":[`+flatWeatherTool+`],"tool_choice":"required","parallel_tool_calls":false,"instructions":[{"role":"system","content":"Be brief."}]}`,
		`{"model":"mock-tools","input":"Weather?","tools":[`+flatWeatherTool+`,{"type":"function","name":"noop","strict":false}],"tool_choice":"none"}`,
		reasoningTurn,
		`{"model":"mock-reasoning","input":"Plan a trip","max_output_tokens":100}`,
	)
	for _, body := range bodies {
		rr := do(h, "POST", "/v1/responses", body, instant...)
		if rr.Code != http.StatusOK {
			t.Errorf("%s: %d %s", body, rr.Code, rr.Body)
		}
		do(h, "POST", "/v1/responses", `{"stream":true,`+body[1:], instant...)
	}
	// What a reasoning model refuses: a temperature (chat's unsupported_value), and a reasoning
	// item it did not seal.
	do(h, "POST", "/v1/responses", `{"model":"mock-reasoning","input":"hi","temperature":0.5}`)
	do(h, "POST", "/v1/chat/completions", `{"model":"mock-reasoning","messages":[{"role":"user","content":"hi"}],"temperature":0.5}`)
	do(h, "POST", "/v1/responses", `{"model":"mock-reasoning","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"role":"user","content":"hi"}]}`)
	for name, e := range loadCorpusDir(t, "responses-clients") {
		var hdr []string
		for k, v := range e.Headers {
			hdr = append(hdr, k, v)
		}
		rr := h.do(http.MethodPost, "/v1/responses", string(e.Body), hdr...)
		d.conform("responses client corpus "+name, http.MethodPost, "/v1/responses", rr)
	}

	// Scripted answers: a refusal (refusal events), a tool call, content_filter.
	j := newHarness(t, journaled)
	in := []string{"X-Mock-Scope", "oa-responses", "X-Mock-Latency", "instant"}
	do(j, "POST", "/_mock/fixtures", `{"fixtures":[
		{"name":"refuse","match":{"last_user":{"contains":"forbidden"}},"reply":{"refusal":"I can't help with that."}},
		{"name":"call","match":{"last_user":{"contains":"weather"}},"reply":{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"}}]}},
		{"name":"filtered","match":{"last_user":{"contains":"filter"}},"reply":{"content":"Filtered.","finish_reason":"content_filter"}}
	]}`, in...)
	for _, body := range []string{
		`{"model":"mock-chat","input":"forbidden things"}`,
		`{"model":"mock-tools","input":"weather in Paris","tools":[` + flatWeatherTool + `]}`,
		`{"model":"mock-chat","input":"filter this"}`,
	} {
		for _, b := range []string{body, `{"stream":true,` + body[1:]} {
			if rr := do(j, "POST", "/v1/responses", b, in...); rr.Code != http.StatusOK {
				t.Errorf("%s: %d %s", b, rr.Code, rr.Body)
			}
		}
	}
	journal := do(j, "GET", "/_mock/journal", "", in...)
	if !strings.Contains(journal.Body.String(), `"input"`) {
		t.Errorf("the journal has no Responses call's shape: %s", journal.Body)
	}

	// Refusals and faults, through the server's own path to each.
	for _, r := range []struct{ body, header, value string }{
		{`{"model":`, "", ""},
		{`{"model":"mock-echo","input":"hi","previous_response_id":"resp_1"}`, "", ""},
		{`{"model":"mock-echo","input":"hi","background":true}`, "", ""},
		{`{"model":"mock-echo","input":"hi","tools":[{"type":"web_search"}]}`, "", ""},
		{`{"model":"mock-echo","input":"hi","bogus":1}`, "", ""},
		{`{"model":"mock-echo"}`, "", ""},
		{`{"model":"mock-echo","input":"hi","max_output_tokens":8}`, "", ""},
		{`{"model":"mock-echo","input":"hi","tools":[` + flatWeatherTool + `]}`, "", ""},
		{`{"model":"no-such-model","input":"hi"}`, "", ""},
		{`{"model":"gpt-4o","input":"hi"}`, "", ""},
		{`{"model":"mock-echo","input":"hi"}`, "Content-Type", "text/plain"},
		{`{"model":"mock-echo","input":"` + strings.Repeat("a", 1<<20) + `"}`, "", ""},
		{`{"model":"mock-chat","input":"hi"}`, "X-Mock-Fault", "explode"},
		{`{"model":"mock-chat","input":"hi"}`, "X-Mock-Fault", "rate_limit;retry_after=2s"},
		{`{"model":"mock-chat","input":"hi"}`, "X-Mock-Fault", "unavailable"},
		{`{"model":"mock-chat","input":"hi"}`, "X-Mock-Fault", "timeout;for=10ms"},
		{`{"model":"mock-chat","input":"hi"}`, "X-Mock-Fault", "stream_error"},
		{`{"model":"mock-chat","input":"hi","stream":true}`, "X-Mock-Fault", "stream_error;after=3"},
		{`{"model":"mock-chat","input":"hi","stream":true}`, "X-Mock-Fault", "stream_error;after=0"},
		{`{"model":"mock-tools","input":"Weather?","stream":true,"tools":[` + flatWeatherTool + `]}`, "X-Mock-Fault", "stream_error;after=5"},
	} {
		do(h, "POST", "/v1/responses", r.body, r.header, r.value)
	}
	small := newHarness(t, func(dd *Deps) { dd.Config.MaxTokens = 20 })
	do(small, "POST", "/v1/responses", `{"model":"mock-echo","input":"`+strings.Repeat("word ", 40)+`"}`)
	do(small, "POST", "/v1/responses", `{"model":"mock-echo","input":"`+strings.Repeat("word ", 40)+`","stream":true}`)
	do(small, "POST", "/v1/responses", `{"model":"mock-echo","input":"hi","max_output_tokens":21}`)

	// The stored-response routes: any method, any depth.
	for _, p := range []string{"/v1/responses/resp_1", "/v1/responses/resp_1/cancel", "/v1/responses/resp_1/input_items",
		"/v1/responses/input_tokens", "/v1/responses/compact"} {
		for _, m := range []string{"GET", "POST", "DELETE", "PUT", "PATCH"} {
			if rr := do(h, m, p, ""); rr.Code != http.StatusNotFound {
				t.Errorf("%s %s: %d", m, p, rr.Code)
			}
		}
	}
	do(h, "GET", "/v1/responses", "")

	for i, ev := range d.at("/components/schemas/ResponsesStreamEvent/oneOf").([]any) {
		typ := ev.(map[string]any)["properties"].(map[string]any)["type"].(map[string]any)["const"]
		if !d.responses["event: "+typ.(string)] {
			t.Errorf("no stream here sent the event %v (ResponsesStreamEvent/oneOf/%d)", typ, i)
		}
	}
	if d.events-before < 500 {
		t.Errorf("only %d Responses stream events held to the document", d.events-before)
	}
}

// TestOpenAPIResponsesRequestSchemaCorpus: every Responses client corpus body the mock accepts
// validates against the document's ResponsesRequest; one the corpus expects a 400 for a field
// does not. (internal/openapi's tests compare the schema with the decoder itself, on these
// bodies and thousands of variants.)
func TestOpenAPIResponsesRequestSchemaCorpus(t *testing.T) {
	checked := corpusAgainstSchema(t, loadAPIDoc(t), "/components/schemas/ResponsesRequest", loadCorpusDir(t, "responses-clients"))
	if checked < 30 {
		t.Fatalf("only %d Responses corpus bodies checked", checked)
	}
	t.Logf("%d Responses corpus bodies", checked)
}
