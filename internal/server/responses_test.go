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
