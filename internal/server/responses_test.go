package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// officialDigest is the SHA-256 of OpenAI's openapi.json that testdata vendors (gzipped).
const officialDigest = "bbfd19abcde0e7412da99378deb2a959ccdd3a812f97c9e35901921e8e973f9a"

var official struct {
	once            sync.Once
	err             error
	response, event *jsonschema.Schema
}

// officialSchemas compiles Response and ResponseStreamEvent of OpenAI's own OpenAPI document
// (2.3.0, internal/openapi/testdata/README.md), once for the package's tests.
func officialSchemas(t *testing.T) (response, event *jsonschema.Schema) {
	t.Helper()
	official.once.Do(func() {
		f, err := os.Open("../openapi/testdata/openai-openapi-2.3.0.json.gz")
		if err != nil {
			official.err = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			official.err = err
			return
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			official.err = err
			return
		}
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != officialDigest {
			official.err = io.ErrUnexpectedEOF
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			official.err = err
			return
		}
		c := jsonschema.NewCompiler()
		// The document says OpenAPI 3.1 (JSON Schema 2020-12), but CompoundFilter uses 2019-09's
		// boolean $recursiveAnchor, which 2020-12's metaschema refuses; nothing else in it
		// differs between the two drafts' keywords it uses, so it is compiled as 2019-09.
		c.DefaultDraft(jsonschema.Draft2019)
		if official.err = c.AddResource("openai.json", doc); official.err != nil {
			return
		}
		if official.response, official.err = c.Compile("openai.json#/components/schemas/Response"); official.err != nil {
			return
		}
		official.event, official.err = c.Compile("openai.json#/components/schemas/ResponseStreamEvent")
	})
	if official.err != nil {
		t.Fatalf("OpenAI's OpenAPI document: %v", official.err)
	}
	return official.response, official.event
}

func validateOfficial(t *testing.T, what string, s *jsonschema.Schema, b []byte) map[string]any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not JSON: %v: %q", what, err, b)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s is not valid against OpenAI's OpenAPI document: %v\n%s", what, err, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sseEvent is one event of a Responses stream.
type sseEvent struct {
	name string
	data map[string]any
	raw  []byte
}

// readEvents parses a Responses stream: every frame an `event:` line naming the data's type, a
// `data:` line, a blank line; no [DONE].
func readEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 4<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "event: "):
			if name != "" {
				t.Fatalf("two event lines in a row: %q", line)
			}
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			if name == "" || string(data) == "[DONE]" {
				t.Fatalf("a data line without its event line, or [DONE]: %q", line)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if m["type"] != name {
				t.Errorf("event: %s carries type %v", name, m["type"])
			}
			out = append(out, sseEvent{name: name, data: m, raw: data})
			name = ""
		default:
			t.Fatalf("not an SSE line of a Responses stream: %q", line)
		}
	}
	return out
}

// checkEvents holds a stream to OpenAI's schemas and framing rules, and returns its last
// Response, the concatenated text deltas and the count of deltas.
func checkEvents(t *testing.T, what string, events []sseEvent) (final map[string]any, text string, deltas int) {
	t.Helper()
	_, eventSchema := officialSchemas(t)
	if len(events) < 3 || events[0].name != "response.created" || events[1].name != "response.in_progress" {
		t.Fatalf("%s: a stream opens with response.created and response.in_progress: %v", what, names(events))
	}
	var b strings.Builder
	for i, e := range events {
		validateOfficial(t, what+" "+e.name, eventSchema, e.raw)
		if seq, _ := e.data["sequence_number"].(float64); int(seq) != i {
			t.Errorf("%s: event %d (%s) has sequence_number %v", what, i, e.name, e.data["sequence_number"])
		}
		switch e.name {
		case "response.output_text.delta", "response.refusal.delta":
			b.WriteString(e.data["delta"].(string))
			deltas++
		case "response.function_call_arguments.delta":
			deltas++
		}
	}
	last := events[len(events)-1]
	switch last.name {
	case "response.completed", "response.incomplete":
		final = last.data["response"].(map[string]any)
	case "error":
	default:
		t.Errorf("%s: the stream ends with %s", what, last.name)
	}
	return final, b.String(), deltas
}

func names(events []sseEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.name)
	}
	return out
}

// outputText is the text of a Response's message items, as the SDKs' output_text helpers join it.
func outputText(resp map[string]any) string {
	var b strings.Builder
	for _, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		if item["type"] != "message" {
			continue
		}
		for _, p := range item["content"].([]any) {
			part := p.(map[string]any)
			if s, ok := part["text"].(string); ok {
				b.WriteString(s)
			}
			if s, ok := part["refusal"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

const flatWeatherTool = `{"type":"function","name":"get_weather","description":"Weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true}`

// responsesCases are requests that between them reach every kind of answer and every request
// member: prose, a cut answer, function calls, a tool round trip, structured output, echoes.
var responsesCases = []struct {
	name, body string
	status     string // the answer's status
	calls      bool   // the answer is function calls
}{
	{"text", `{"model":"mock-chat","input":"Hello there"}`, "completed", false},
	{"instructions and items", `{"model":"mock-chat","instructions":"Be brief.","input":[` +
		`{"role":"developer","content":"Answer in English."},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]},` +
		`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello!","annotations":[],"logprobs":[]}]},` +
		`{"role":"user","content":"And now?"},{"type":"item_reference","id":"msg_0"}]}`, "completed", false},
	{"max_output_tokens", `{"model":"mock-chat","input":"Tell me a long story","max_output_tokens":16}`, "incomplete", false},
	{"function call", `{"model":"mock-tools","input":"Weather in Paris?","tools":[` + flatWeatherTool + `]}`, "completed", true},
	{"tool round trip", `{"model":"mock-tools","input":[{"role":"user","content":"Weather in Paris?"},` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"Sunny, 21 C"}],"tools":[` + flatWeatherTool + `]}`, "completed", false},
	{"json_schema", `{"model":"mock-chat","input":"A city","text":{"format":{"type":"json_schema","name":"city","strict":true,` +
		`"schema":{"type":"object","properties":{"name":{"type":"string"},"population":{"type":"integer"}},"required":["name","population"],"additionalProperties":false}}}}`, "completed", false},
	{"every echoed member", `{"model":"mock-tools","input":"Hi","tools":[` + flatWeatherTool + `],"tool_choice":{"type":"function","name":"get_weather"},` +
		`"parallel_tool_calls":false,"temperature":0.2,"top_p":0.9,"metadata":{"k":"v"},"reasoning":{"effort":"low","summary":"auto"},` +
		`"include":["message.output_text.logprobs"],"store":false,"truncation":"auto","service_tier":"auto","user":"u","safety_identifier":"s",` +
		`"prompt_cache_key":"p","max_tool_calls":3,"top_logprobs":0,"text":{"verbosity":"low"},"background":false}`, "completed", true},
}

// TestResponsesConformToOpenAI sends every case as a JSON call and as a stream: the answer and
// every event are valid against OpenAI's own OpenAPI document, the stream's deltas spell the JSON
// answer's text and number its output tokens, and the same request gets the same answer.
func TestResponsesConformToOpenAI(t *testing.T) {
	responseSchema, _ := officialSchemas(t)
	h := newHarness(t)
	for _, tc := range responsesCases {
		t.Run(tc.name, func(t *testing.T) {
			rr := h.do(http.MethodPost, "/v1/responses", tc.body)
			if rr.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rr.Code, rr.Body)
			}
			if rr.Header().Get("x-request-id") == "" {
				t.Error("no x-request-id")
			}
			resp := validateOfficial(t, "answer", responseSchema, rr.Body.Bytes())
			if resp["status"] != tc.status {
				t.Errorf("status %v, want %s", resp["status"], tc.status)
			}
			again := h.do(http.MethodPost, "/v1/responses", tc.body)
			var second map[string]any
			_ = json.Unmarshal(again.Body.Bytes(), &second)
			if second["id"] != resp["id"] || outputText(second) != outputText(resp) {
				t.Errorf("the same request got another answer: %v %v", resp["id"], second["id"])
			}
			output := resp["output"].([]any)
			isCall := output[0].(map[string]any)["type"] == "function_call"
			if isCall != tc.calls {
				t.Errorf("function calls %v, want %v: %s", isCall, tc.calls, rr.Body)
			}

			streamed := h.do(http.MethodPost, "/v1/responses", `{"stream":true,`+tc.body[1:])
			if ct := streamed.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("stream content type %q", ct)
			}
			final, text, deltas := checkEvents(t, "stream", readEvents(t, streamed.Body.Bytes()))
			if final == nil {
				t.Fatal("the stream did not complete")
			}
			if final["status"] != tc.status {
				t.Errorf("stream status %v, want %s", final["status"], tc.status)
			}
			if text != outputText(final) {
				t.Errorf("the deltas spell %q, the final response %q", text, outputText(final))
			}
			usage := final["usage"].(map[string]any)
			if int(usage["output_tokens"].(float64)) != deltas {
				t.Errorf("%d deltas, output_tokens %v", deltas, usage["output_tokens"])
			}
			if !tc.calls && text != outputText(resp) {
				t.Errorf("the stream spells %q, the JSON answer %q", text, outputText(resp))
			}
			if !tc.calls && usage["output_tokens"] != resp["usage"].(map[string]any)["output_tokens"] {
				t.Errorf("the stream counts %v output tokens, the JSON answer %v", usage["output_tokens"], resp["usage"])
			}
		})
	}
}

// TestResponsesToolLoop: the function call of a first answer, sent back as it came with its
// output, gets the answer after the tool; the arguments are an instance of the tool's schema.
func TestResponsesToolLoop(t *testing.T) {
	h := newHarness(t)
	first := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-tools","input":"Weather in Paris?","tools":[`+flatWeatherTool+`]}`)
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(first.Body.Bytes(), &resp); err != nil || len(resp.Output) == 0 {
		t.Fatalf("%v: %s", err, first.Body)
	}
	var call struct {
		CallID, Arguments string `json:",omitempty"`
	}
	var raw map[string]any
	_ = json.Unmarshal(resp.Output[0], &raw)
	call.CallID, call.Arguments = raw["call_id"].(string), raw["arguments"].(string)
	var args map[string]any
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil || args["city"] == nil {
		t.Fatalf("arguments %q: %v", call.Arguments, err)
	}
	out, _ := json.Marshal(map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": "Sunny"})
	body := `{"model":"mock-tools","tools":[` + flatWeatherTool + `],"input":[{"role":"user","content":"Weather in Paris?"},` +
		string(resp.Output[0]) + `,` + string(out) + `]}`
	second := h.do(http.MethodPost, "/v1/responses", body)
	var answer map[string]any
	if err := json.Unmarshal(second.Body.Bytes(), &answer); err != nil || second.Code != http.StatusOK {
		t.Fatalf("%d: %s", second.Code, second.Body)
	}
	if text := outputText(answer); !strings.HasPrefix(text, "Based on the tool result") {
		t.Errorf("after the tool: %q", text)
	}
}

// TestResponsesStreamFault: a simulated mid-stream error ends the stream with an error event
// (valid against ResponseStreamEvent), as OpenAI ends a failed stream: no completed event, no
// [DONE]; a JSON call with the same fault gets the error envelope.
func TestResponsesStreamFault(t *testing.T) {
	h := newHarness(t)
	rr := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","stream":true,"input":"Hello"}`, "x-mock-fault", "stream_error;after=4")
	events := readEvents(t, rr.Body.Bytes())
	final, _, _ := checkEvents(t, "faulted stream", events)
	if final != nil || len(events) != 5 {
		t.Fatalf("want 4 events and an error event: %v", names(events))
	}
	last := events[len(events)-1].data
	if last["code"] != "simulated_stream_error" {
		t.Errorf("error event %v", last)
	}
	rr = h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","input":"Hello"}`, "x-mock-fault", "stream_error")
	if rr.Code != http.StatusInternalServerError || decodeError(t, rr.Body.Bytes()).Code != "simulated_stream_error" {
		t.Errorf("JSON call with a stream fault: %d %s", rr.Code, rr.Body)
	}
}

// TestResponsesStateless: what needs stored responses is refused, saying why, in the envelope
// with the request id.
func TestResponsesStateless(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ body, param string }{
		{`{"model":"mock-chat","input":"hi","previous_response_id":"resp_1"}`, "previous_response_id"},
		{`{"model":"mock-chat","input":"hi","conversation":"conv_1"}`, "conversation"},
		{`{"model":"mock-chat","input":"hi","background":true}`, "background"},
	} {
		rr := h.do(http.MethodPost, "/v1/responses", tc.body)
		e := decodeError(t, rr.Body.Bytes())
		if rr.Code != http.StatusBadRequest || e.Code != "unsupported_parameter" || e.Param == nil || *e.Param != tc.param ||
			!strings.Contains(e.Message, "send the whole input") {
			t.Errorf("%s: %d %+v", tc.param, rr.Code, e)
		}
		if rr.Header().Get("x-request-id") == "" {
			t.Errorf("%s: no x-request-id", tc.param)
		}
	}
	for _, p := range []string{"/v1/responses/resp_1", "/v1/responses/resp_1/cancel", "/v1/responses/resp_1/input_items",
		"/v1/responses/input_tokens", "/v1/responses/compact"} {
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			rr := h.do(m, p, "")
			e := decodeError(t, rr.Body.Bytes())
			if rr.Code != http.StatusNotFound || e.Code != "not_found" || !strings.Contains(e.Message, "keeps no responses") {
				t.Errorf("%s %s: %d %+v", m, p, rr.Code, e)
			}
		}
	}
}

// TestResponsesFixtures: a fixture matches a Responses request as it matches a chat request, and
// its reply — a tool call, content after the tool's result, a refusal, usage — renders in the
// dialect, JSON and streamed, valid against OpenAI's document.
func TestResponsesFixtures(t *testing.T) {
	responseSchema, _ := officialSchemas(t)
	h := newHarness(t, journaled)
	addFixtures(t, h, "responses", weatherFixtures)
	addFixtures(t, h, "responses", `{"fixtures":[{"name":"refuse","priority":2,"match":{"last_user":{"contains":"secret"}},"reply":{"refusal":"I cannot share that."}}]}`)
	tool := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	first := `{"model":"mock-tools","input":"What's the weather in Paris?",` + tool + `}`
	second := `{"model":"mock-tools","input":[{"role":"user","content":"What's the weather in Paris?"},` +
		`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
		`{"type":"function_call_output","call_id":"call_1","output":"sunny"}],` + tool + `}`
	refused := `{"model":"mock-chat","input":"Tell me the secret"}`
	for _, tc := range []struct{ name, body, text, item string }{
		{"tool call", first, "", "function_call"},
		{"answer after the tool", second, "It is sunny in Paris.", "message"},
		{"refusal", refused, "I cannot share that.", "message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := h.do(http.MethodPost, "/v1/responses", tc.body, HeaderScope, "responses")
			resp := validateOfficial(t, "answer", responseSchema, rr.Body.Bytes())
			item := resp["output"].([]any)[0].(map[string]any)
			if item["type"] != tc.item || outputText(resp) != tc.text {
				t.Fatalf("%d: %s", rr.Code, rr.Body)
			}
			if tc.item == "function_call" && (item["name"] != "get_weather" || item["arguments"] != `{"city":"Paris"}`) {
				t.Errorf("the fixture's call: %v", item)
			}
			rr = h.do(http.MethodPost, "/v1/responses", `{"stream":true,`+tc.body[1:], HeaderScope, "responses")
			final, text, _ := checkEvents(t, "stream", readEvents(t, rr.Body.Bytes()))
			if final == nil || text != tc.text || outputText(final) != tc.text {
				t.Errorf("streamed %q, final %v", text, final)
			}
		})
	}
	var journal struct {
		Data []struct{ Route, Fixture string }
	}
	_ = json.Unmarshal(h.do(http.MethodGet, "/_mock/journal?scope=responses", "").Body.Bytes(), &journal)
	matched := map[string]int{}
	for _, e := range journal.Data {
		if e.Route == "/v1/responses" {
			matched[e.Fixture]++
		}
	}
	if matched["weather-call"] != 2 || matched["weather-answer"] != 2 || matched["refuse"] != 2 {
		t.Errorf("the journal has %v", matched)
	}
}

// TestResponsesStreamCut: a simulated cut drops the connection after exactly `after` events,
// the lifecycle events held for the next write included.
func TestResponsesStreamCut(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	for _, after := range []int{1, 3, 6} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/responses", strings.NewReader(`{"model":"mock-chat","stream":true,"input":"Hello"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Mock-Fault", "stream_cut;after="+strconv.Itoa(after))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("after=%d: the body ended cleanly", after)
		}
		if n := strings.Count(string(body), "\nevent: ") + strings.Count(string(body[:min(len(body), 7)]), "event: "); n != after {
			t.Errorf("after=%d: %d events before the cut:\n%s", after, n, body)
		}
	}
}

// TestResponsesSimulationAndTelemetry: the catalog's gateway policy, simulated faults and the
// metrics apply to the Responses API as to chat, under the route /v1/responses.
func TestResponsesSimulationAndTelemetry(t *testing.T) {
	h := newHarness(t)
	rr := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-gateway","input":"hi"}`)
	hd := rr.Header()
	if rr.Code != http.StatusOK || hd.Get("X-Mock-Gateway-Attempts") != "3" || hd.Get("X-Mock-Gateway-Served-By") != "mock-chat" {
		t.Fatalf("gateway policy: %d %v %s", rr.Code, hd, rr.Body)
	}
	var resp map[string]any
	_ = json.Unmarshal(rr.Body.Bytes(), &resp)
	direct := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","input":"hi"}`)
	var want map[string]any
	_ = json.Unmarshal(direct.Body.Bytes(), &want)
	if resp["model"] != "mock-chat" || outputText(resp) != outputText(want) {
		t.Errorf("the fallback's answer is not mock-chat's: %v", resp["model"])
	}
	rr = h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","input":"hi"}`, "X-Mock-Fault", "rate_limit;retry_after=2s")
	if rr.Code != http.StatusTooManyRequests || rr.Header().Get("Retry-After") != "2" || decodeError(t, rr.Body.Bytes()).Code != "simulated_rate_limit" {
		t.Errorf("rate limit: %d %v %s", rr.Code, rr.Header(), rr.Body)
	}
	h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","stream":true,"input":"hi"}`)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"mockgateway_http_requests_total", map[string]string{"route": "/v1/responses", "status_code": "200"}, 3},
		{"mockgateway_http_requests_total", map[string]string{"route": "/v1/responses", "error_code": "simulated_rate_limit"}, 1},
		{"mockgateway_simulated_fallbacks_total", map[string]string{"model": "mock-gateway", "target": "mock-chat"}, 1},
		{"mockgateway_simulated_faults_total", map[string]string{"model": "mock-chat", "fault": "rate_limit"}, 1},
	} {
		if got := metricValue(t, h.metrics, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	var streamed bool
	for _, s := range h.spans.GetSpans() {
		if s.Name == "chat mock-chat" {
			for _, e := range s.Events {
				streamed = streamed || e.Name == "stream.completed"
			}
		}
	}
	if !streamed {
		t.Error("no stream.completed event on a Responses stream's chat span")
	}
}

// TestResponsesLimits: the hostile-request bounds hold on /v1/responses too — the body size,
// the token ceiling, the answer's bytes — each answered as OpenAI would.
func TestResponsesLimits(t *testing.T) {
	h := newHarness(t, func(d *Deps) {
		d.Config.MaxBodyBytes = 4096
		d.Config.MaxResponseBytes = 2048
	})
	big := `{"model":"mock-chat","input":"` + strings.Repeat("word ", 2000) + `"}`
	if rr := h.do(http.MethodPost, "/v1/responses", big); rr.Code != http.StatusRequestEntityTooLarge ||
		decodeError(t, rr.Body.Bytes()).Code != "request_too_large" {
		t.Errorf("a body over --max-body-bytes: %d %s", rr.Code, rr.Body)
	}
	if rr := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","input":"hi","max_output_tokens":5000}`); rr.Code != http.StatusBadRequest ||
		!strings.Contains(decodeError(t, rr.Body.Bytes()).Message, "4096") {
		t.Errorf("a budget over --max-tokens: %d %s", rr.Code, rr.Body)
	}
	schema := `{"type":"object","properties":{"s":{"type":"string","minLength":4000}},"required":["s"],"additionalProperties":false}`
	rr := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","input":"hi","text":{"format":{"type":"json_schema","name":"big","schema":`+schema+`}}}`)
	var resp map[string]any
	_ = json.Unmarshal(rr.Body.Bytes(), &resp)
	if rr.Code != http.StatusOK || resp["status"] != "incomplete" || len(outputText(resp)) > 2048 {
		t.Errorf("an answer over --max-response-bytes: %d status %v, %d bytes", rr.Code, resp["status"], len(outputText(resp)))
	}
}

// pinnedResponsesRequests are the requests whose answers TestResponsesAnswersPinned holds, beside
// responsesCases (each sent as JSON and as a stream) and the recorded client bodies.
var pinnedResponsesRequests = []struct{ name, body string }{
	{"load bench JSON", `{"model":"mock-echo","input":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`},
	{"load bench stream", `{"model":"mock-echo","stream":true,"input":[{"role":"user","content":"the quick brown fox jumps over the lazy dog"}]}`},
	{"bench JSON", responsesBody("mock-chat", "")},
	{"bench stream", responsesBody("mock-chat", `"stream":true`)},
	{"echoed members", `{"model":"mock-echo","input":"hi","instructions":"Be brief.","metadata":{"b":"2","a":null,"c":"3"},"user":"u",` +
		`"text":{"format":{"type":"json_object"},"verbosity":"high"},"reasoning":{"effort":"low"},"temperature":0.3,"top_p":0.5,"max_output_tokens":32}`},
	{"echoed whitespace", "{ \"model\" : \"mock-chat\" , \"input\" : [ { \"role\" : \"user\" , \"content\" : [ { \"type\" : \"input_text\" , \"text\" : \"a b\" } ] } ] ,\n" +
		" \"text\" : { \"format\" : { \"type\" : \"json_schema\" , \"name\" : \"s\" , \"schema\" : { \"type\" : \"object\" , \"properties\" : { \"n\" : { \"type\" : \"integer\" , \"default\" : null } } } } } }"},
	{"json_schema stream", `{"model":"mock-chat","stream":true,"input":"A city","text":{"format":{"type":"json_schema","name":"city","strict":true,` +
		`"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}}}}`},
	{"parallel calls", `{"model":"mock-tools","input":"go","tools":[` + flatWeatherTool + `,{"type":"function","name":"g","parameters":{"type":"object","properties":{"n":{"type":"integer"}}}}]}`},
	{"parallel calls stream", `{"model":"mock-tools","stream":true,"input":"go","tools":[` + flatWeatherTool + `,{"type":"function","name":"g","strict":false}],"parallel_tool_calls":true}`},
	{"refused", `{"model":"mock-chat","input":"hi","top_p":2}`},
	{"unanswered output", `{"model":"mock-tools","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`},
	{"unknown member", `{"model":"mock-chat","input":"hi","messages":[]}`},
	{"invalid JSON", `{"model":"mock-chat","input":"hi"`},
}

// responsesAnswerDigests are the SHA-256 (first 12 bytes) of each answer's status, content type
// and normalized body (normalize), as the server wrote them before the Responses path was made
// faster. A change meant to alter an answer gets the new digests from the test's failures, each a
// line of this map.
var responsesAnswerDigests = map[string]string{
	"case/text":                                                   "681ef552bc554a2615f60876",
	"case/text streamed":                                          "9c32f7f34bbe17bec676665b",
	"case/instructions and items":                                 "23fd51e75384f5230111b952",
	"case/instructions and items streamed":                        "1f9245eb1c9b241aa26a4a45",
	"case/max_output_tokens":                                      "98eec9917c1c7df30788ea84",
	"case/max_output_tokens streamed":                             "07d115d18815bad2d9f09b85",
	"case/function call":                                          "c5fa890fab447a6613c34dc4",
	"case/function call streamed":                                 "84550b4c0795dd686552fb15",
	"case/tool round trip":                                        "36d8716274b41f112c48128e",
	"case/tool round trip streamed":                               "6b43b1fd3c8e41bee732b9f2",
	"case/json_schema":                                            "04d35f50119e42b002892292",
	"case/json_schema streamed":                                   "0136dae431768a533c3c0376",
	"case/every echoed member":                                    "52f9002b06a15d6adcc33c70",
	"case/every echoed member streamed":                           "b2eb2edd2781d8be7fceb1d7",
	"request/load bench JSON":                                     "b82716491fab49bbf04a7b4d",
	"request/load bench stream":                                   "4602228310808e498376efda",
	"request/bench JSON":                                          "f3f8733a4c6c3e6cb7fd4001",
	"request/bench stream":                                        "1a3587514d85e34a78c65d75",
	"request/echoed members":                                      "63f56171a69842f8760258fb",
	"request/echoed whitespace":                                   "bcd7df802a52ddfd0dfe77df",
	"request/json_schema stream":                                  "be83b67542b5521b01b409b4",
	"request/parallel calls":                                      "bd7f29c715034d9d6bf6fd57",
	"request/parallel calls stream":                               "f00991208e479346da570a43",
	"request/refused":                                             "b50bf05eded1c0b95060333d",
	"request/unanswered output":                                   "e3ee901040b68187b908b43a",
	"request/unknown member":                                      "7153b7cb00ea0ef481ecf9e2",
	"request/invalid JSON":                                        "9fbd8db1b196a958f56fed3d",
	"client/langchain-js/multi_turn.json":                         "03c3cd72d3fa0e93351f29b8",
	"client/langchain-js/stream.json":                             "0550a19c597d0b50b8c8d2dc",
	"client/langchain-js/tool_round_trip.json":                    "314d0e38c8c0a94e2edf2ea6",
	"client/langchain-js/tools.json":                              "d24d6aa292566248dcf4de5a",
	"client/openai-agents-js/model_settings.json":                 "68b2c525a901a29b08ec440c",
	"client/openai-agents-js/multi_turn.json":                     "ce5c27cea36e6ee28e060a80",
	"client/openai-agents-js/output_type.json":                    "be2f16d5edc80cf3cff64145",
	"client/openai-agents-js/stream_tool_round_trip.json":         "94ea13edfb1af1161935e1ec",
	"client/openai-agents-js/stream_tools.json":                   "31affad7cd2b160094dff993",
	"client/openai-agents-js/text.json":                           "f99bf53475f9bec5796d5118",
	"client/openai-agents-js/tool_round_trip.json":                "3649f1d8d90bd3c9d374d5f5",
	"client/openai-agents-js/tools.json":                          "e0d1916defb0bb17eae6d327",
	"client/openai-agents-python/tool_round_trip.json":            "2e831d33a56179ae7ce15597",
	"client/openai-agents-python/tools.json":                      "4fa2227a3368b0fc5eec3c1c",
	"client/openai-go/json_schema.json":                           "e82f27e12ce468dbb143025c",
	"client/openai-go/max_output_tokens.json":                     "c0a469612d98802204bab722",
	"client/openai-go/stream.json":                                "9757522c4d0c12869cc90ceb",
	"client/openai-go/text.json":                                  "8f0c239dfce648ac3f039ae4",
	"client/openai-go/tool_round_trip.json":                       "a194a63dd74db2cedb551ab2",
	"client/openai-go/tool_round_trip_previous_response_id.json":  "b331094f35ddb0081ce4aa66",
	"client/openai-go/tools.json":                                 "8fc6a2d1050b534cdc9f1bc5",
	"client/openai-go/tools_readme.json":                          "8a61348c7e0a518a6ba2fe4f",
	"client/openai-node/json_schema.json":                         "91c8e9cc3c8f18983763982b",
	"client/openai-node/max_output_tokens.json":                   "2d0e01736bd3037af342bcd4",
	"client/openai-node/multi_turn.json":                          "e783839fcf84d356c4443b94",
	"client/openai-node/parse_zod.json":                           "f26f250d18beb35e06f016c8",
	"client/openai-node/previous_response_id.json":                "b331094f35ddb0081ce4aa66",
	"client/openai-node/stream.json":                              "8cbc14501e669743f1d20d34",
	"client/openai-node/stream_helper.json":                       "ef8712562d71ac8d8b0fd11f",
	"client/openai-node/stream_helper_tool_round_trip.json":       "d817b922296bcf123522843a",
	"client/openai-node/stream_helper_tools.json":                 "46d654b79952ce6e361d2190",
	"client/openai-node/text.json":                                "7737975e7ba87edf6761ee7e",
	"client/openai-node/tool_round_trip.json":                     "b011aac4e8263586f474805c",
	"client/openai-node/tools.json":                               "de0f9cad4304d4cccf081ffd",
	"client/openai-python/parse_pydantic_tool.json":               "80a17f1cc7ff3e82fe2880f2",
	"client/openai-python/text.json":                              "3ba7ec229ed66c1882507bd0",
	"client/openai-python/tool_round_trip.json":                   "93d6ee2c28251c6bb2ebab3e",
	"client/openai-python/tools.json":                             "022f9d28447856393c620dbd",
	"client/vercel-ai-sdk/multi_turn_item_reference.json":         "4313e1268f4d6bda208e6cb5",
	"client/vercel-ai-sdk/multi_turn_store_false.json":            "307d65251950dcb4dbf711ed",
	"client/vercel-ai-sdk/stream.json":                            "33c6a98157104ac110f00e92",
	"client/vercel-ai-sdk/structured_output.json":                 "41f52221d7ecd954c9a0b377",
	"client/vercel-ai-sdk/structured_output_generate_object.json": "41f52221d7ecd954c9a0b377",
	"client/vercel-ai-sdk/text.json":                              "11261dee5445819d4e768e51",
	"client/vercel-ai-sdk/tool_round_trip.json":                   "edb89e6cfe6ce36c5ddaf3f2",
	"client/vercel-ai-sdk/tools.json":                             "6c868ce9d8ba0ec4bfde9631",
}

// TestResponsesAnswersPinned holds the exact bytes of Responses answers — JSON, streams and
// errors, for varied requests and every recorded client body — to their digests from before the
// Responses path was made faster: a faster path must send the same bytes.
func TestResponsesAnswersPinned(t *testing.T) {
	h := newHarness(t)
	type pinned struct {
		name, body string
		header     []string
	}
	var cases []pinned
	for _, c := range responsesCases {
		cases = append(cases, pinned{"case/" + c.name, c.body, nil}, pinned{"case/" + c.name + " streamed", `{"stream":true,` + c.body[1:], nil})
	}
	for _, c := range pinnedResponsesRequests {
		cases = append(cases, pinned{"request/" + c.name, c.body, nil})
	}
	corpus := loadCorpusDir(t, "responses-clients")
	names := make([]string, 0, len(corpus))
	for name := range corpus {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e := corpus[name]
		var hdr []string
		for k, v := range e.Headers {
			hdr = append(hdr, k, v)
		}
		cases = append(cases, pinned{"client/" + name, string(e.Body), hdr})
	}
	seen := map[string]bool{}
	for _, c := range cases {
		rr := h.do(http.MethodPost, "/v1/responses", c.body, c.header...)
		sum := sha256.Sum256([]byte(strconv.Itoa(rr.Code) + " " + rr.Header().Get("Content-Type") + "\n" + string(normalize(rr.Body.Bytes()))))
		got := hex.EncodeToString(sum[:12])
		seen[c.name] = true
		if want, ok := responsesAnswerDigests[c.name]; !ok || got != want {
			t.Errorf("%q: %q, // %d %s", c.name, got, rr.Code, firstLine(rr.Body.String()))
		}
	}
	for name := range responsesAnswerDigests {
		if !seen[name] {
			t.Errorf("%s: pinned but not sent", name)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// BenchmarkResponsesItemJSON is BenchmarkResponsesJSON with the user text as an input item, as
// the load bench sends it (cmd/loadtest): the same answer as ChatJSON's, through the item path.
func BenchmarkResponsesItemJSON(b *testing.B) {
	body := `{"model":"mock-chat","input":[{"role":"user","content":"hello there"}]}`
	b.Run("telemetry=on", func(b *testing.B) { benchStatus(b, benchHandler(b, true), "POST", "/v1/responses", body, 200) })
	b.Run("telemetry=off", func(b *testing.B) { benchStatus(b, benchHandler(b, false), "POST", "/v1/responses", body, 200) })
}
