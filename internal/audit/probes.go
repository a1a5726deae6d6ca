package audit

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
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
	// dialect is the dialect the request speaks, which reads its stream and its error body
	// (nil: none in particular, read as chat).
	dialect *dialect
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
	scope  string // the audit's own fixture and journal scope: scopePrefix + the run's random part

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
