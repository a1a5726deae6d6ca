package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// userAgent is the one header the audit sends without a canary: the contract records the user
// agent (cut to 128 characters), so a canary there would be a finding by design.
const userAgent = "mockgateway-audit/1 (redaction audit; the user agent is recorded by contract)"

type readMode int

const (
	readAll        readMode = iota
	readFirstEvent          // a stream cut by the client: read one event, then close
)

// probe is one request of the audit's traffic, with the canaries it carries and what came back.
type probe struct {
	ID      string
	Name    string
	Method  string
	Path    string // with the query string
	Host    string // a Host header other than the target's
	Header  http.Header
	Body    []byte
	Chunked bool // send the body without a Content-Length
	Mode    readMode
	Timeout time.Duration // the client's own limit for this request
	Expect  string        // what the contract says, e.g. "400 unknown_parameter"

	TraceID   string // of the traceparent sent, "" when none
	RequestID string // a valid x-request-id the service keeps, "" when none
	canaries  []*Canary

	// What happened.
	Reached    bool // the service received the request (a response, or a cut after sending)
	Status     int
	ErrorCode  string
	Outcome    string
	RespHeader http.Header
	ErrBody    []byte   // body of a response with status >= 400
	okBody     []byte   // body of a successful JSON response (read for discovery, never searched)
	SSEErrors  [][]byte // error frames of a stream
	Elapsed    time.Duration
}

// model is one entry of the target's GET /v1/models.
type model struct {
	ID        string
	Streaming bool
	Tools     bool
}

// traffic builds and sends the probes.
type traffic struct {
	base   string // target URL without a trailing slash
	can    *Canaries
	corr   *correlator
	apiKey string
	client *http.Client
	probes []*probe

	models     []model
	echoModel  string // mock-echo when the catalog has it: its completion repeats the prompt
	toolsModel string
	slowModel  string
	maxBody    int64 // the body size that first got a 413 (0: none found)
}

// builder adds canaries to one probe.
type builder struct {
	p *probe
	t *traffic
}

func (t *traffic) newProbe(name, method, path string) builder {
	p := &probe{ID: fmt.Sprintf("p%02d", len(t.probes)+1), Name: name, Method: method, Path: path, Header: http.Header{}}
	t.probes = append(t.probes, p)
	return builder{p, t}
}

// c is a canary for place.
func (b builder) c(place string) string { return b.ck(place, kindPlain) }

func (b builder) ck(place string, kind canaryKind) string {
	k := b.t.can.New(b.p.ID, place, kind)
	b.p.canaries = append(b.p.canaries, k)
	return k.Value
}

// text is free text beginning with a canary (a leak that keeps only the first characters still
// shows it) and holding the characters that encoders escape.
func (b builder) text(place string) string {
	return b.c(place) + ` — "quoted" <tag> & ünïcödé \ back\slash 'single' tab	end`
}

func randomHex(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(buf)
}

type headerOpts struct {
	noAuth        bool   // no Authorization header at all
	authCanary    bool   // a canary bearer token even when an API key is configured
	reqID         string // "" valid correlation id; "invalid-space", "invalid-long", "invalid-slash"
	noTraceparent bool
	contentType   string // "" → application/json when there is a body
}

// headers sets every header a client controls, each with its own canary.
func (b builder) headers(o headerOpts) builder {
	h := b.p.Header
	h.Set("User-Agent", userAgent)
	if b.p.Body != nil {
		ct := o.contentType
		if ct == "" {
			ct = "application/json"
		}
		h.Set("Content-Type", ct)
	}
	switch {
	case o.noAuth:
	case b.t.apiKey != "" && !o.authCanary:
		h.Set("Authorization", "Bearer "+b.t.apiKey)
	default:
		h.Set("Authorization", "Bearer "+b.c("Authorization: Bearer token"))
	}
	h.Set("Api-Key", b.c("api-key header"))
	h.Set("X-Api-Key", b.c("x-api-key header"))
	h.Set("Cookie", b.c("cookie name")+"="+b.c("cookie value")+"; session="+b.c("session cookie value"))
	h.Set("X-Forwarded-For", b.c("X-Forwarded-For")+", 203.0.113.7")
	h.Set("Forwarded", `for="`+b.c("Forwarded header")+`";proto=https`)
	h.Set("X-Real-Ip", b.c("X-Real-IP header"))
	h.Set("X-Forwarded-Host", b.c("X-Forwarded-Host header")+".example")
	h.Set("Referer", "https://"+b.c("Referer header")+".example/page")
	h.Set("Openai-Organization", b.c("OpenAI-Organization header"))
	h.Set("Openai-Project", b.c("OpenAI-Project header"))
	h.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(b.c("Proxy-Authorization (basic credentials, base64)")+":secret")))
	// Set directly so the name goes out as written; the server canonicalizes it anyway.
	h["X-"+b.c("custom header name")] = []string{b.c("custom header value")}
	h.Set("Baggage", "audit="+b.c("baggage header value"))
	if !o.noTraceparent {
		b.p.TraceID = randomHex(16)
		b.t.corr.byTrace[b.p.TraceID] = b.p.ID
		h.Set("Traceparent", "00-"+b.p.TraceID+"-"+randomHex(8)+"-01")
		h.Set("Tracestate", "mga="+b.ck("tracestate header value", kindTraceState))
	}
	switch o.reqID {
	case "":
		b.p.RequestID = b.t.corr.tag + "." + strings.ToLower(b.p.ID)
		b.t.corr.byReqID[b.p.RequestID] = b.p.ID
		h.Set("X-Request-Id", b.p.RequestID)
	case "invalid-space":
		h.Set("X-Request-Id", b.c("invalid x-request-id (has a space)")+" x")
	case "invalid-long":
		h.Set("X-Request-Id", b.c("invalid x-request-id (over 128 characters)")+strings.Repeat("x", 130))
	case "invalid-slash":
		h.Set("X-Request-Id", b.c("invalid x-request-id (has a slash)")+"/x")
	}
	return b
}

// query is a query string of canaries.
func (b builder) query() string {
	return "?" + b.c("query parameter name") + "=" + b.c("query parameter value") + "&api_key=" + b.c("api_key query parameter")
}

// fill replaces each token of s (pairs of token, place) with a fresh canary for that place;
// tokens s does not contain get none.
func (b builder) fill(s string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.Contains(s, pairs[i]) {
			s = strings.ReplaceAll(s, pairs[i], b.c(pairs[i+1]))
		}
	}
	return s
}

func (b builder) jsonBody(v any) builder {
	data, err := json.Marshal(v)
	if err != nil {
		panic("audit: encoding a probe body: " + err.Error())
	}
	b.p.Body = data
	return b
}

func (b builder) expect(s string) builder { b.p.Expect = s; return b }

type obj = map[string]any

// messages is a conversation with a canary in every place a message can hold text.
func (b builder) messages() []any {
	callID := b.c("assistant tool_calls[].id / tool message tool_call_id")
	return []any{
		obj{"role": "system", "content": b.text("system message"), "name": b.c("system message name")},
		obj{"role": "developer", "content": []any{obj{"type": "text", "text": b.text("developer message (text part)")}}, "name": b.c("developer message name")},
		obj{"role": "user", "content": b.text("user message"), "name": b.c("user message name")},
		obj{"role": "assistant", "content": b.text("assistant message"), "name": b.c("assistant message name"),
			"tool_calls": []any{obj{"id": callID, "type": "function", "function": obj{
				"name":      b.c("assistant tool call function name"),
				"arguments": `{"` + b.c("tool call arguments (key)") + `":"` + b.c("tool call arguments (value)") + `"}`,
			}}}},
		obj{"role": "tool", "tool_call_id": callID, "content": b.text("tool message content")},
		obj{"role": "user", "content": []any{obj{"type": "text", "text": b.c("last user message (mock-echo repeats it as completion text)") + " please"}}},
	}
}

// tools is one function tool with canaries in its name, description and schema; it returns the
// tool's name for tool_choice.
func (b builder) tools() ([]any, string) {
	name := b.c("tool function name")
	prop := b.c("tool parameter property name")
	return []any{obj{"type": "function", "function": obj{
		"name":        name,
		"description": b.text("tool description"),
		"parameters": obj{"type": "object", "required": []any{prop}, "additionalProperties": false,
			"properties": obj{prop: obj{"type": "string", "description": b.text("tool parameter description"),
				"enum": []any{b.c("tool parameter enum value (mock-tools puts it in the tool-call arguments it generates)")}}}},
		"strict": false,
	}}}, name
}

// chatBody is a valid request with canaries in every field that takes text.
func (b builder) chatBody(model string, stream, tools bool) obj {
	body := obj{
		"model":             model,
		"messages":          b.messages(),
		"user":              b.c("user field"),
		"metadata":          obj{b.c("metadata key"): b.c("metadata value"), "team": b.c("second metadata value")},
		"stop":              []any{b.c("stop sequence 1"), b.c("stop sequence 2")},
		"prompt_cache_key":  b.c("prompt_cache_key"),
		"safety_identifier": b.c("safety_identifier"),
		"max_tokens":        24,
		"temperature":       0.3,
		"seed":              7,
	}
	if stream {
		body["stream"] = true
		body["stream_options"] = obj{"include_usage": true}
	}
	if tools {
		t, name := b.tools()
		body["tools"] = t
		body["tool_choice"] = obj{"type": "function", "function": obj{"name": name}}
	}
	return body
}

const chatPath = "/v1/chat/completions"

// discover asks for the model list; it is a probe like any other.
func (t *traffic) discover(ctx context.Context) error {
	b := t.newProbe("list models", http.MethodGet, "")
	b.p.Path = "/v1/models" + b.query()
	b.headers(headerOpts{}).expect("200")
	t.send(ctx, b.p)
	if !b.p.Reached {
		return fmt.Errorf("the target %s is unreachable: %s", t.base, b.p.Outcome)
	}
	if b.p.Status == http.StatusOK {
		var list struct {
			Data []struct {
				ID           string `json:"id"`
				Capabilities struct {
					Streaming bool `json:"streaming"`
					Tools     bool `json:"tools"`
				} `json:"capabilities"`
			} `json:"data"`
		}
		if json.Unmarshal(b.p.okBody, &list) == nil {
			for _, m := range list.Data {
				if len(t.models) < 16 {
					t.models = append(t.models, model{m.ID, m.Capabilities.Streaming, m.Capabilities.Tools})
				}
			}
		}
	}
	if len(t.models) == 0 {
		t.models = []model{{"mock-echo", true, false}, {"mock-tools", true, true}}
	}
	for _, m := range t.models {
		switch {
		case m.ID == "mock-echo":
			t.echoModel = m.ID
		case m.ID == "mock-slow":
			t.slowModel = m.ID
		}
		if m.Tools && t.toolsModel == "" {
			t.toolsModel = m.ID
		}
	}
	if t.echoModel == "" {
		t.echoModel = t.models[0].ID
	}
	return nil
}

// build lays out every probe after discovery, in the order they are sent.
func (t *traffic) build() {
	echo := t.echoModel

	// Every executable model, JSON and stream, with canaries in every field.
	// A catalog model's own latency is overridden (the latency paths have probes of their own);
	// its own faults are not, so a model that fails by design (mock-flaky) has no expectation.
	for _, m := range t.models {
		expect := ""
		if m.ID == "mock-echo" || m.ID == "mock-chat" || m.ID == "mock-tools" {
			expect = "200"
		}
		b := t.newProbe("chat JSON "+m.ID, http.MethodPost, "")
		b.p.Path = chatPath + b.query()
		b.jsonBody(b.chatBody(m.ID, false, m.Tools)).headers(headerOpts{}).expect(expect)
		b.p.Header.Set("X-Mock-Latency", "instant")
		if m.Streaming {
			b := t.newProbe("chat stream "+m.ID+" (read to the end)", http.MethodPost, "")
			b.p.Path = chatPath + b.query()
			b.jsonBody(b.chatBody(m.ID, true, m.Tools)).headers(headerOpts{}).expect(expect)
			b.p.Header.Set("X-Mock-Latency", "instant")
		}
	}
	if t.toolsModel != "" {
		b := t.newProbe("chat JSON "+t.toolsModel+" answering a tool result", http.MethodPost, chatPath)
		body := b.chatBody(t.toolsModel, false, false)
		tools, _ := b.tools()
		body["tools"] = tools
		body["tool_choice"] = "auto"
		b.jsonBody(body).headers(headerOpts{noTraceparent: true}).expect("200")
	}
	{
		b := t.newProbe("chat JSON with a json_schema response_format", http.MethodPost, chatPath)
		body := b.chatBody(echo, false, false)
		prop := b.c("response_format schema property name")
		body["response_format"] = obj{"type": "json_schema", "json_schema": obj{
			"name": b.c("response_format json_schema name"), "description": b.text("response_format json_schema description"),
			"schema": obj{"type": "object", "properties": obj{prop: obj{"type": "string", "description": b.text("response_format schema description")}}},
		}}
		b.jsonBody(body).headers(headerOpts{}).expect("200")
	}

	// Streams the client cuts, and a JSON request the client gives up on.
	{
		// A long answer, so the stream is still running when the client leaves.
		m := echo
		switch {
		case t.slowModel != "":
			m = t.slowModel
		case t.hasModel("mock-chat"):
			m = "mock-chat"
		}
		b := t.newProbe("stream cut by the client after the first event ("+m+")", http.MethodPost, chatPath)
		body := b.chatBody(m, true, false)
		body["max_tokens"] = 400
		b.jsonBody(body).headers(headerOpts{})
		b.p.Header.Set("X-Mock-Latency", "ttfc=10ms;between=40ms")
		b.p.Mode = readFirstEvent
		b.expect("200")
	}
	{
		b := t.newProbe("chat JSON the client gives up on during simulated latency", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{})
		b.p.Header.Set("X-Mock-Latency", "slow")
		b.p.Timeout = 400 * time.Millisecond
	}

	// Each simulated fault of the spec, with canaries in the body.
	type fault struct {
		name, header string
		stream       bool
		expect       string
		timeout      time.Duration
		extra        map[string]string
	}
	faults := []fault{
		{"rate_limit", "rate_limit;retry_after=2s", false, "429 simulated_rate_limit", 0, nil},
		{"rate_limit, stream", "rate_limit", true, "429 simulated_rate_limit", 0, nil},
		{"rate_limit recovered on the 2nd attempt", "rate_limit;attempts=1", false, "200", 0, map[string]string{"X-Stainless-Retry-Count": "1"}},
		{"server_error", "server_error", false, "500 simulated_server_error", 0, nil},
		{"unavailable", "unavailable;retry_after=1s", false, "503 simulated_unavailable", 0, nil},
		{"unavailable, stream", "unavailable", true, "503 simulated_unavailable", 0, nil},
		{"stream_error", "stream_error;after=2", true, "200", 0, nil},
		{"stream_error, JSON", "stream_error", false, "500 simulated_stream_error", 0, nil},
		{"stream_cut", "stream_cut;after=2", true, "200", 0, nil},
		{"stream_cut, JSON", "stream_cut", false, "", 0, nil},
		{"timeout", "timeout;for=300ms", false, "504 simulated_timeout", 0, nil},
		{"timeout, stream", "timeout;for=300ms", true, "504 simulated_timeout", 0, nil},
		{"timeout the client gives up on", "timeout;for=3s", false, "", 400 * time.Millisecond, nil},
	}
	for _, f := range faults {
		b := t.newProbe("fault "+f.name, http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, f.stream, false)).headers(headerOpts{}).expect(f.expect)
		b.p.Header.Set("X-Mock-Fault", f.header)
		for k, v := range f.extra {
			b.p.Header.Set(k, v)
		}
		b.p.Timeout = f.timeout
	}
	// Malformed simulation headers: 400 invalid_simulation_header must not quote them.
	bad := []struct{ name, header, value string }{
		{"unknown fault kind", "X-Mock-Fault", "{c}"},
		{"bad fault parameter value", "X-Mock-Fault", "rate_limit;retry_after={c}"},
		{"unknown fault parameter", "X-Mock-Fault", "rate_limit;{c}=1"},
		{"unknown latency profile", "X-Mock-Latency", "{c}"},
		{"unknown latency parameter", "X-Mock-Latency", "{c}=2s"},
		{"bad latency duration", "X-Mock-Latency", "ttfc={c}"},
		{"unknown latency parameter with a bad duration", "X-Mock-Latency", "{c}=x"},
		{"profile name and parameter", "X-Mock-Latency", "slow;{c}"},
		{"bad attempt number", "X-Mock-Attempt", "{c}"},
	}
	for _, s := range bad {
		b := t.newProbe("malformed "+s.header+": "+s.name, http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{}).expect("400 invalid_simulation_header")
		b.p.Header.Set(s.header, b.fill(s.value, "{c}", s.header+" value ("+s.name+")"))
		if s.header == "X-Mock-Attempt" {
			b.p.Header.Set("X-Mock-Fault", "rate_limit;attempts=1")
		}
	}

	// Fields the decoder rejects.
	{
		b := t.newProbe("unknown top-level field", http.MethodPost, "")
		b.p.Path = chatPath + b.query()
		body := b.chatBody(echo, false, false)
		body[b.ck("unknown top-level field name (echoed in param by contract)", kindUnknownField)] = b.text("unknown top-level field value")
		b.jsonBody(body).headers(headerOpts{}).expect("400 unknown_parameter")
	}
	{
		b := t.newProbe("unknown field inside a message", http.MethodPost, chatPath)
		body := b.chatBody(echo, false, false)
		msgs := body["messages"].([]any)
		msgs[2].(obj)[b.ck("unknown message field name (echoed in param by contract)", kindUnknownField)] = b.text("unknown message field value")
		b.jsonBody(body).headers(headerOpts{}).expect("400 unknown_parameter")
	}
	if t.toolsModel != "" {
		b := t.newProbe("unknown field inside a tool definition", http.MethodPost, chatPath)
		body := b.chatBody(t.toolsModel, false, true)
		fn := body["tools"].([]any)[0].(obj)["function"].(obj)
		fn[b.ck("unknown tool field name (echoed in param by contract)", kindUnknownField)] = b.text("unknown tool field value")
		b.jsonBody(body).headers(headerOpts{}).expect("400 unknown_parameter")
	}
	{
		b := t.newProbe("unknown field inside stream_options", http.MethodPost, chatPath)
		body := b.chatBody(echo, true, false)
		body["stream_options"] = obj{"include_usage": true, b.ck("unknown stream_options field name (echoed in param by contract)", kindUnknownField): b.c("unknown stream_options field value")}
		b.jsonBody(body).headers(headerOpts{}).expect("400 unknown_parameter")
	}
	unsupported := []struct {
		name  string
		field func(b builder) (string, any)
	}{
		{"audio", func(b builder) (string, any) {
			return "audio", obj{"voice": b.c("audio.voice"), "format": b.c("audio.format")}
		}},
		{"prediction", func(b builder) (string, any) {
			return "prediction", obj{"type": "content", "content": b.text("prediction.content")}
		}},
		{"functions", func(b builder) (string, any) {
			return "functions", []any{obj{"name": b.c("functions[].name"), "description": b.text("functions[].description")}}
		}},
		{"web_search_options", func(b builder) (string, any) {
			return "web_search_options", obj{"user_location": obj{"type": "approximate", "approximate": obj{"city": b.c("web_search_options city")}}}
		}},
	}
	for _, u := range unsupported {
		b := t.newProbe("unsupported field "+u.name, http.MethodPost, chatPath)
		body := b.chatBody(echo, false, false)
		k, v := u.field(b)
		body[k] = v
		b.jsonBody(body).headers(headerOpts{}).expect("400 unsupported_parameter")
	}
	invalid := []struct {
		name string
		set  func(b builder, body obj)
	}{
		{"temperature as a string", func(b builder, body obj) { body["temperature"] = b.c("temperature as a string") }},
		{"seed as a string", func(b builder, body obj) { body["seed"] = b.c("seed as a string") }},
		{"service_tier unknown", func(b builder, body obj) { body["service_tier"] = b.c("service_tier value") }},
		{"reasoning_effort unknown", func(b builder, body obj) { body["reasoning_effort"] = b.c("reasoning_effort value") }},
		{"tool_choice unknown", func(b builder, body obj) { body["tool_choice"] = b.c("tool_choice string") }},
		{"response_format type unknown", func(b builder, body obj) { body["response_format"] = obj{"type": b.c("response_format.type")} }},
		{"message role unknown", func(b builder, body obj) {
			body["messages"] = []any{obj{"role": b.c("message role"), "content": b.text("content of a message with an unknown role")}}
		}},
		{"content part type unknown", func(b builder, body obj) {
			body["messages"] = []any{obj{"role": "user", "content": []any{obj{"type": b.c("content part type"), "text": b.text("text of an unknown content part")}}}}
		}},
		{"logit_bias with a non-numeric key and value", func(b builder, body obj) {
			body["logit_bias"] = obj{b.c("logit_bias key"): b.c("logit_bias value")}
		}},
		{"too many stop sequences", func(b builder, body obj) {
			body["stop"] = []any{b.c("stop 1 of 5"), b.c("stop 2 of 5"), b.c("stop 3 of 5"), b.c("stop 4 of 5"), b.c("stop 5 of 5")}
		}},
		{"metadata value too long", func(b builder, body obj) {
			body["metadata"] = obj{b.c("metadata key (value too long)"): b.c("metadata value too long") + strings.Repeat("v", 600)}
		}},
		{"max_tokens above the ceiling", func(b builder, body obj) { body["max_tokens"] = 1 << 30 }},
		{"tool name with spaces", func(b builder, body obj) {
			body["model"] = t.toolsOr(echo)
			body["tools"] = []any{obj{"type": "function", "function": obj{"name": b.c("invalid tool name") + " with spaces"}}}
		}},
	}
	for _, iv := range invalid {
		b := t.newProbe("invalid value: "+iv.name, http.MethodPost, chatPath)
		body := b.chatBody(echo, false, false)
		iv.set(b, body)
		b.jsonBody(body).headers(headerOpts{}).expect("400 invalid_value")
	}
	{
		b := t.newProbe("missing model", http.MethodPost, chatPath)
		body := b.chatBody(echo, false, false)
		delete(body, "model")
		b.jsonBody(body).headers(headerOpts{}).expect("400 missing_required_parameter")
	}
	{
		b := t.newProbe("unknown model name", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(b.c("model name (unknown model)"), false, false)).headers(headerOpts{}).expect("404 model_not_found")
	}
	{
		b := t.newProbe("unknown model name, stream", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(b.c("model name (unknown model, stream)")+"-"+b.c("model name suffix"), true, false)).headers(headerOpts{}).expect("404 model_not_found")
	}
	{
		b := t.newProbe("external (metadata-only) model", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody("gpt-4o", false, false)).headers(headerOpts{})
	}
	{
		b := t.newProbe("tools sent to a model without tools", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, true)).headers(headerOpts{})
		if t.echoModel == "mock-echo" {
			b.expect("400 tools_not_supported")
		}
	}

	// Bodies that are not a valid request.
	malformed := []struct{ name, body, contentType, expect string }{
		{"malformed JSON (cut short)", `{"model":"` + echo + `","messages":[{"role":"user","content":"{c}`, "", "400 invalid_json"},
		{"malformed JSON (trailing text)", `{"model":"` + echo + `","messages":[{"role":"user","content":"hi"}]} {c}`, "", "400 invalid_json"},
		{"JSON that is not an object", `["{c}", {"content": "{c2}"}]`, "", "400 invalid_json"},
		{"invalid UTF-8 in a string", "{\"model\":\"" + echo + "\",\"messages\":[{\"role\":\"user\",\"content\":\"{c}\xff\xfe{c2}\"}]}", "", ""},
		{"form body", "model={c}&messages={c2}", "application/x-www-form-urlencoded", "415 unsupported_media_type"},
		{"text/plain body", `{"model":"` + echo + `","messages":[{"role":"user","content":"{c}"}]}`, "text/plain", "415 unsupported_media_type"},
		{"Content-Type with a canary", `{"model":"` + echo + `","messages":[{"role":"user","content":"{c}"}]}`, "application/{ct}", "415 unsupported_media_type"},
	}
	for _, m := range malformed {
		b := t.newProbe(m.name, http.MethodPost, chatPath)
		b.p.Body = []byte(b.fill(m.body, "{c}", m.name+" (body)", "{c2}", m.name+" (body, second)"))
		ct := b.fill(m.contentType, "{ct}", "Content-Type subtype")
		b.headers(headerOpts{contentType: ct}).expect(m.expect)
	}

	// Paths a client controls.
	paths := []struct{ name, method, path, body, expect string }{
		{"unmatched path", "GET", "/{c}/{c2}", "", "404 not_found"},
		{"unmatched path under /v1", "POST", "/v1/{c}", `{"input":"{c3}"}`, "404 not_found"},
		{"model path /v1/models/{model}", "GET", "/v1/models/{c}", "", "404 model_not_found"},
		{"model path with an encoded slash", "GET", "/v1/models/{c}%2F{c2}", "", "404"},
		{"unsupported surface /v1/embeddings", "POST", "/v1/embeddings", `{"model":"{c}","input":"{c2}"}`, "404 unsupported_surface"},
		{"unsupported surface with a path", "POST", "/v1/responses/{c}", `{"input":"{c2}"}`, "404 unsupported_surface"},
		{"wrong method on chat", "GET", chatPath, "", "405 method_not_allowed"},
		{"wrong method with a body", "PUT", "/v1/models", `{"x":"{c}"}`, "405 method_not_allowed"},
		{"health", "GET", "/health", "", "200"},
		{"debug traces, bad trace_id", "GET", "/debug/traces?trace_id={c}", "", "400 invalid_value"},
		{"debug traces, bad request_id", "GET", "/debug/traces?request_id={c}%20x", "", "400 invalid_value"},
		{"debug traces, bad limit", "GET", "/debug/traces?limit={c}", "", "400 invalid_value"},
	}
	for _, pp := range paths {
		b := t.newProbe(pp.name, pp.method, "")
		b.p.Path = b.fill(pp.path, "{c}", pp.name+" (path)", "{c2}", pp.name+" (path, second segment)")
		if !strings.Contains(b.p.Path, "?") {
			b.p.Path += b.query()
		}
		if pp.body != "" {
			b.p.Body = []byte(b.fill(pp.body, "{c}", pp.name+" (body)", "{c2}", pp.name+" (body, second)", "{c3}", pp.name+" (body)"))
		}
		b.headers(headerOpts{}).expect(pp.expect)
	}
	{
		b := t.newProbe("custom method on chat", "", "")
		b.p.Method = strings.ToUpper(b.c("HTTP method (custom, on chat)"))
		b.p.Path = chatPath + b.query()
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{}).expect("405 method_not_allowed")
	}
	{
		b := t.newProbe("custom method on an unmatched path", "", "")
		b.p.Method = strings.ToUpper(b.c("HTTP method (custom, unmatched path)"))
		b.p.Path = "/" + b.c("unmatched path (custom method)") + b.query()
		b.headers(headerOpts{}).expect("404 not_found")
	}

	// Headers the service must not keep.
	for _, v := range []string{"invalid-space", "invalid-long", "invalid-slash"} {
		b := t.newProbe("x-request-id "+strings.TrimPrefix(v, "invalid-")+" (invalid)", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{reqID: v}).expect("200")
	}
	{
		b := t.newProbe("x-request-id invalid on an unmatched path", http.MethodGet, "")
		b.p.Path = "/" + b.c("unmatched path (invalid x-request-id)")
		b.headers(headerOpts{reqID: "invalid-space"}).expect("404 not_found")
	}
	{
		b := t.newProbe("Host header with a canary", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{})
		b.p.Host = b.c("Host header") + ".invalid"
		b.expect("200")
	}
	{
		b := t.newProbe("malformed traceparent", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{noTraceparent: true})
		b.p.Header.Set("Traceparent", "00-"+b.c("malformed traceparent")+"-01")
		b.expect("200")
	}
	{
		b := t.newProbe("no trace context (a root span)", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, true, false)).headers(headerOpts{noTraceparent: true}).expect("200")
	}
	if t.apiKey != "" {
		b := t.newProbe("wrong API key", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{authCanary: true}).expect("401 invalid_api_key")
		b = t.newProbe("no API key", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{noAuth: true}).expect("401 missing_api_key")
		b = t.newProbe("wrong API key on the model path", http.MethodGet, "")
		b.p.Path = "/v1/models/" + b.c("model path (wrong key)")
		b.headers(headerOpts{authCanary: true}).expect("401 invalid_api_key")
	}
}

func (t *traffic) hasModel(id string) bool {
	for _, m := range t.models {
		if m.ID == id {
			return true
		}
	}
	return false
}

func (t *traffic) toolsOr(def string) string {
	if t.toolsModel != "" {
		return t.toolsModel
	}
	return def
}

// oversized sends bodies over the size limit, growing until one gets a 413, then once more
// without a Content-Length at that size.
func (t *traffic) oversized(ctx context.Context) {
	sizes := []int{1<<20 + 64<<10, 8<<20 + 64<<10}
	for _, size := range sizes {
		b := t.newProbe(fmt.Sprintf("oversized body (%s, with Content-Length)", sizeText(int64(size))), http.MethodPost, chatPath)
		b.p.Body = b.bigBody(size)
		b.headers(headerOpts{}).expect("413 request_too_large")
		t.send(ctx, b.p)
		if b.p.Status == http.StatusRequestEntityTooLarge {
			t.maxBody = int64(size)
			break
		}
	}
	size := sizes[0]
	if t.maxBody > 0 {
		size = int(t.maxBody)
	}
	b := t.newProbe(fmt.Sprintf("oversized body (%s, chunked)", sizeText(int64(size))), http.MethodPost, chatPath)
	b.p.Body = b.bigBody(size)
	b.p.Chunked = true
	b.headers(headerOpts{}).expect("413 request_too_large")
	t.send(ctx, b.p)
}

// bigBody is a valid chat request of about size bytes with canaries at the start, the middle and
// the end of its one message.
func (b builder) bigBody(size int) []byte {
	start, mid, end := b.c("oversized body (start of the message)"), b.c("oversized body (middle)"), b.c("oversized body (end)")
	filler := strings.Repeat("lorem ipsum dolor sit amet ", (size/2)/27+1)
	content := start + " " + filler + " " + mid + " " + filler + " " + end
	data, _ := json.Marshal(obj{"model": b.t.echoModel, "messages": []any{obj{"role": "user", "content": content}}})
	return data
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// sendAll sends every probe not yet sent, one at a time.
func (t *traffic) sendAll(ctx context.Context) {
	for _, p := range t.probes {
		if p.Outcome != "" || ctx.Err() != nil {
			continue
		}
		t.send(ctx, p)
	}
}

const maxErrorBody = 1 << 20

// send makes the request and records what came back.
func (t *traffic) send(ctx context.Context, p *probe) {
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if p.Body != nil {
		if p.Chunked {
			body = io.MultiReader(bytes.NewReader(p.Body)) // hides the length: chunked encoding
		} else {
			body = bytes.NewReader(p.Body)
		}
	}
	req, err := http.NewRequestWithContext(rctx, p.Method, t.base+p.Path, body)
	if err != nil {
		p.Outcome = "not sent: " + t.can.Mask(err.Error())
		return
	}
	req.Header = p.Header
	if p.Host != "" {
		req.Host = p.Host
	}
	if p.Chunked {
		req.ContentLength = -1
	}
	start := time.Now()
	resp, err := t.client.Do(req)
	p.Elapsed = time.Since(start)
	if err != nil {
		p.Outcome, p.Reached = classify(err, rctx, timeout)
		return
	}
	defer resp.Body.Close()
	p.Reached = true
	p.Status = resp.StatusCode
	p.RespHeader = resp.Header.Clone()
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if p.Mode == readFirstEvent {
		rd := bufio.NewReader(resp.Body)
		for {
			line, err := rd.ReadString('\n')
			if err != nil || strings.TrimSpace(line) == "" {
				break
			}
		}
		cancel()
		p.Outcome = "closed by the client after the first event"
		return
	}
	data, rerr := readLimited(resp.Body, 32<<20)
	switch {
	case rerr != nil && rctx.Err() != nil:
		p.Outcome = fmt.Sprintf("the client gave up after %s while reading", timeout)
	case rerr != nil:
		p.Outcome = "response cut by the server while reading"
	case stream && !bytes.Contains(data, []byte("data: [DONE]")):
		p.Outcome = "stream ended without [DONE]"
	case stream:
		p.Outcome = "stream read to [DONE]"
	default:
		p.Outcome = "response read"
	}
	if stream {
		p.SSEErrors = sseErrorFrames(data)
	}
	if p.Status >= 400 {
		p.ErrBody = data[:min(len(data), maxErrorBody)]
		var env struct {
			Error struct {
				Code any `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(p.ErrBody, &env) == nil {
			if s, ok := env.Error.Code.(string); ok {
				p.ErrorCode = reportableCode(s)
			}
		}
	} else if !stream {
		p.okBody = data
	}
	if len(p.SSEErrors) > 0 && p.ErrorCode == "" {
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(p.SSEErrors[0], &env) == nil {
			p.ErrorCode = reportableCode(env.Error.Code)
		}
	}
}

// reportableCode keeps an error code the report may print: a normalized code is lower-case
// letters and underscores. Anything else came from the target, could be a canary or a key, and
// the report names only its shape (the body itself is searched like every other source).
func reportableCode(code string) string {
	if len(code) > 64 {
		return "(not a normalized code)"
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return "(not a normalized code)"
		}
	}
	return code
}

// classify describes a request that got no response, and whether the service received it.
func classify(err error, rctx context.Context, timeout time.Duration) (string, bool) {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "no connection: " + op.Err.Error(), false
	}
	if rctx.Err() == context.DeadlineExceeded {
		return fmt.Sprintf("the client gave up after %s (no response yet)", timeout), true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "EOF") {
		return "connection closed by the server without a response", true
	}
	if strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe") {
		return "connection reset by the server without a response", true
	}
	return "no response: " + err.Error(), true
}

// sseErrorFrames returns the data of every event whose JSON has a top-level "error".
func sseErrorFrames(data []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:"))
		if !ok {
			continue
		}
		d = bytes.TrimSpace(d)
		if len(d) == 0 || d[0] != '{' {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(d, &m) == nil {
			if _, ok := m["error"]; ok {
				out = append(out, append([]byte(nil), d...))
			}
		}
	}
	return out
}

func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return data, err
	}
	if int64(len(data)) > max {
		return data[:max], fmt.Errorf("over %s", sizeText(max))
	}
	return data, nil
}
