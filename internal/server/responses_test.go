package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

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
	if rr := h.do(http.MethodPost, "/v1/responses", `{"model":"mock-chat","input":"hi","max_output_tokens":40000}`); rr.Code != http.StatusBadRequest ||
		!strings.Contains(decodeError(t, rr.Body.Bytes()).Message, "at most 32768 output tokens") {
		t.Errorf("a budget over the model's output limit: %d %s", rr.Code, rr.Body)
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

// BenchmarkResponsesItemJSON is BenchmarkResponsesJSON with the user text as an input item, as
// the load bench sends it (cmd/loadtest): the same answer as ChatJSON's, through the item path.
func BenchmarkResponsesItemJSON(b *testing.B) {
	body := `{"model":"mock-chat","input":[{"role":"user","content":"hello there"}]}`
	b.Run("telemetry=on", func(b *testing.B) { benchStatus(b, benchHandler(b, true), "POST", "/v1/responses", body, 200) })
	b.Run("telemetry=off", func(b *testing.B) { benchStatus(b, benchHandler(b, false), "POST", "/v1/responses", body, 200) })
}
