package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"mockgateway/internal/catalog"
	"mockgateway/observability"
)

// canaries hands out unique strings and remembers where each was put.
type canaries struct {
	prefix string
	places map[string]string // canary → place
}

func newCanaries() *canaries {
	return &canaries{prefix: fmt.Sprintf("cnry%08x", rand.Uint32()), places: map[string]string{}}
}

func (c *canaries) at(place string) string {
	s := fmt.Sprintf("%s%03d", c.prefix, len(c.places))
	c.places[s] = place
	return s
}

// find reports every canary found in text, exact or in a common encoding.
func (c *canaries) find(text string) []string {
	var hits []string
	lower := strings.ToLower(text)
	for s, place := range c.places {
		for _, form := range []string{s, url.QueryEscape(s), base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))} {
			if strings.Contains(text, form) || strings.Contains(lower, strings.ToLower(form)) {
				hits = append(hits, place+" ("+s+")")
				break
			}
		}
	}
	return hits
}

// spansText renders every exported span — name, attributes, events, status, resource — as
// text to search.
func spansText(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s|%s|%s|", s.Name, s.Status.Description, s.SpanKind)
		for _, a := range s.Attributes {
			fmt.Fprintf(&b, "%s=%s;", a.Key, a.Value.String())
		}
		for _, e := range s.Events {
			b.WriteString(e.Name + "{")
			for _, a := range e.Attributes {
				fmt.Fprintf(&b, "%s=%s;", a.Key, a.Value.String())
			}
			b.WriteString("}")
		}
		for _, a := range s.Resource.Attributes() {
			fmt.Fprintf(&b, "%s=%s;", a.Key, a.Value.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestCanaries is the proof of docs/telemetry.md's redaction rule: canaries in every place a client can put text, every
// path run, then every log line, exported span and event, the whole /metrics text, and every
// error body and header searched. Zero hits.
func TestCanaries(t *testing.T) {
	c := newCanaries()
	slow, err := catalog.Parse([]byte("models:\n" +
		"  - {id: mock-echo, kind: mock, behavior: echo, capabilities: {streaming: true, tools: false}}\n" +
		"  - {id: mock-tools, kind: mock, behavior: tools, capabilities: {streaming: true, tools: true}}\n" +
		"  - {id: mock-slow, kind: mock, behavior: echo, capabilities: {streaming: true, tools: false}, latency: {between_chunks: 20ms}}\n" +
		"  - {id: mock-flaky, kind: mock, behavior: echo, capabilities: {streaming: true, tools: false}, fault: unavailable;attempts=1}\n" +
		"  - {id: mock-gateway, kind: mock, behavior: chat, capabilities: {streaming: true, tools: false}, fault: server_error, gateway: {retries: 1, fallback: [gpt-4o, mock-echo]}}\n" +
		"  - {id: mock-reasoning, kind: mock, behavior: chat, capabilities: {streaming: true, tools: false, reasoning: true}}\n" +
		"  - {id: gpt-4o, kind: external, provider: openai, capabilities: {streaming: true, tools: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, journaled, func(d *Deps) {
		d.Catalog = slow
		d.Config.MaxBodyBytes = 64 << 10
		d.Config.CORSOrigins = []string{"http://allowed.example"}
	})
	srv := httptest.NewServer(h.handler)
	defer srv.Close()

	// Headers a client controls, on every request. (The user agent is the one header the
	// contract records, bounded, so it carries no canary.)
	headers := func() http.Header {
		hd := http.Header{}
		hd.Set("Authorization", "Bearer "+c.at("authorization header"))
		hd.Set("Api-Key", c.at("api-key header"))
		hd.Set("Cookie", "session="+c.at("cookie"))
		hd.Set("X-Forwarded-For", c.at("x-forwarded-for"))
		hd.Set("X-Custom-Header", c.at("other header"))
		hd.Set("X-Request-Id", c.at("invalid x-request-id")+" with spaces")
		hd.Set("Content-Type", "application/json")
		return hd
	}
	messages := func() string {
		return fmt.Sprintf(`[
			{"role":"system","content":%q,"name":%q},
			{"role":"developer","content":[{"type":"text","text":%q}]},
			{"role":"user","content":%q,"name":%q},
			{"role":"assistant","content":%q,"tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]},
			{"role":"tool","tool_call_id":%q,"content":%q},
			{"role":"user","content":[{"type":"text","text":%q}]}]`,
			c.at("system message"), c.at("system name"), c.at("developer message"),
			c.at("user message"), c.at("user name"), c.at("assistant message"),
			c.at("tool call id"), c.at("tool call name"), `{"q":"`+c.at("tool call arguments")+`"}`,
			c.at("tool message id"), c.at("tool message"), c.at("last user message"))
	}
	tools := func() string {
		return fmt.Sprintf(`[{"type":"function","function":{"name":%q,"description":%q,"parameters":{"type":"object","properties":{%q:{"type":"string","enum":[%q]}},"required":[%q]}}}]`,
			c.at("tool name"), c.at("tool description"), "p", c.at("tool enum value"), "p")
	}
	common := func() string {
		return fmt.Sprintf(`"user":%q,"metadata":{%q:%q},"stop":[%q],"prompt_cache_key":%q,"safety_identifier":%q`,
			c.at("user field"), c.at("metadata key"), c.at("metadata value"), c.at("stop"), c.at("prompt cache key"), c.at("safety identifier"))
	}

	type call struct {
		name, method, path, body string
		disconnect               bool
		header                   []string
		host                     string // the Host header, when not the server's
	}
	q := "?q=" + c.at("query string")
	unknownName := c.at("unknown field name")
	calls := []call{
		{name: "json echo", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","messages":` + messages() + `,` + common() + `}`},
		{name: "stream echo", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","stream":true,"stream_options":{"include_usage":true},"messages":` + messages() + `,` + common() + `}`},
		{name: "json tools", method: "POST", path: chatPath + q, body: `{"model":"mock-tools","messages":[{"role":"user","content":` + fmt.Sprintf("%q", c.at("tools user message")) + `}],"tools":` + tools() + `}`},
		{name: "stream tools", method: "POST", path: chatPath + q, body: `{"model":"mock-tools","stream":true,"messages":[{"role":"user","content":"x"}],"tools":` + tools() + `}`},
		{name: "stream disconnect", method: "POST", path: chatPath + q, body: `{"model":"mock-slow","stream":true,"messages":` + messages() + `}`, disconnect: true},
		{name: "unknown field", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","messages":` + messages() + `,` + fmt.Sprintf("%q:%q", unknownName, c.at("unknown field value")) + `}`},
		{name: "unsupported field", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `,"audio":{"voice":` + fmt.Sprintf("%q", c.at("audio voice")) + `}}`},
		{name: "invalid value", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `,"temperature":` + fmt.Sprintf("%q", c.at("temperature as string")) + `}`},
		{name: "missing field", method: "POST", path: chatPath, body: `{"messages":` + messages() + `}`},
		{name: "malformed body", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":[{"role":"user","content":"` + c.at("malformed body") + `"`},
		{name: "unknown model", method: "POST", path: chatPath, body: `{"model":` + fmt.Sprintf("%q", c.at("model name")) + `,"messages":` + messages() + `}`},
		{name: "external model", method: "POST", path: chatPath, body: `{"model":"gpt-4o","messages":` + messages() + `}`},
		{name: "tools not supported", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `,"tools":` + tools() + `}`},
		{name: "too large", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":[{"role":"user","content":"` + strings.Repeat(c.at("oversized body")+" ", 8000) + `"}]}`},
		{name: "unmatched path", method: "GET", path: "/" + c.at("unmatched path") + q},
		{name: "model path", method: "GET", path: "/v1/models/" + c.at("model path") + q},
		{name: "unsupported surface", method: "POST", path: "/v1/embeddings/" + c.at("surface path"), body: `{"input":` + fmt.Sprintf("%q", c.at("embeddings input")) + `}`},
		{name: "wrong method", method: "DELETE", path: chatPath + q},
		{name: "form body", method: "POST", path: chatPath, body: "model=" + c.at("form body")},
		{name: "models", method: "GET", path: "/v1/models" + q},
	}
	// Every simulated fault, the gateway policy's fallback, and malformed simulation headers.
	for _, f := range []string{"rate_limit;attempts=3", "server_error", "unavailable", "timeout;for=10ms", "stream_error;after=2", "stream_cut;after=2"} {
		for _, stream := range []string{"false", "true"} {
			calls = append(calls, call{name: "fault " + f + " stream=" + stream, method: "POST", path: chatPath + q,
				body:   `{"model":"mock-echo","stream":` + stream + `,"messages":` + messages() + `,` + common() + `}`,
				header: []string{"X-Mock-Fault", f}})
		}
	}
	calls = append(calls,
		call{name: "gateway fallback", method: "POST", path: chatPath + q, body: `{"model":"mock-gateway","messages":` + messages() + `}`},
		call{name: "flaky", method: "POST", path: chatPath + q, body: `{"model":"mock-flaky","messages":` + messages() + `}`},
		call{name: "malformed fault header", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Fault", c.at("fault header")}},
		call{name: "malformed latency header", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Latency", "ttfc=" + c.at("latency header")}},
		call{name: "malformed latency header name", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Latency", c.at("latency parameter name") + "=1s"}},
		call{name: "malformed fault parameter name", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Fault", "rate_limit;" + c.at("fault parameter name") + "=1"}},
		call{name: "malformed attempt header", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Attempt", c.at("attempt header")}},
		// A quota keyed by the bearer token (a canary, as on every call here): admitted, then
		// refused; and a malformed quota header.
		call{name: "quota", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Quota", "rpm=1"}},
		call{name: "quota refused", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Quota", "rpm=1"}},
		call{name: "malformed quota header", method: "POST", path: chatPath, body: `{"model":"mock-echo","messages":` + messages() + `}`, header: []string{"X-Mock-Quota", "rpm=" + c.at("quota header")}},
	)
	// Fixtures (docs/fixtures.md): canaries in conditions, replies and tool arguments, requests
	// in their scope — matched, missed in strict mode, mismatched — and refused bodies.
	scope := []string{HeaderScope, "canary-scope"}
	contains, caseHeader, regex := c.at("fixture contains condition"), c.at("fixture header condition"), c.at("fixture regex condition")
	fixtureBody := fmt.Sprintf(`{"strict":true,"fixtures":[
		{"name":"cnr-content","match":{"last_user":{"contains":%q},"header":{"x-case":%q}},"reply":{"content":%q}},
		{"name":"cnr-tools","match":{"any_message":{"regex":%q}},"reply":{"tool_calls":[{"name":"get_weather","arguments":{"city":%q}}]}},
		{"name":"cnr-refusal","match":{"system":{"equals":%q}},"reply":{"refusal":%q}},
		{"name":"cnr-reasoning","match":{"model":"mock-reasoning"},"reply":{"content":%q,"reasoning":{"tokens":50,"summary":%q}}}]}`,
		contains, caseHeader, c.at("fixture reply content"),
		regex, c.at("fixture tool arguments"),
		c.at("fixture system condition"), c.at("fixture refusal"),
		c.at("fixture reasoning content"), c.at("fixture reasoning summary"))
	scoped := func(last string) string {
		return `{"model":"mock-tools","messages":[{"role":"user","content":` + fmt.Sprintf("%q", last) + `}],"tools":` + tools() + `}`
	}
	calls = append(calls,
		call{name: "add fixtures", method: "POST", path: "/_mock/fixtures" + q, body: fixtureBody, header: scope},
		call{name: "add bad fixtures", method: "POST", path: "/_mock/fixtures" + q, header: scope,
			body: fmt.Sprintf(`{"fixtures":[{"name":"bad","match":{%q:%q},"reply":{"content":%q,"refusal":"x"}}]}`, c.at("fixture unknown key"), c.at("fixture unknown value"), c.at("bad fixture reply"))},
		call{name: "add unparsable fixtures", method: "POST", path: "/_mock/fixtures" + q, header: scope, body: `{"fixtures":[` + c.at("unparsable fixtures")},
		call{name: "strict miss", method: "POST", path: chatPath + q, header: scope, body: scoped(c.at("scoped unmatched message"))},
		call{name: "scoped match", method: "POST", path: chatPath + q, header: append(scope, "X-Case", caseHeader), body: scoped("say " + contains)},
		call{name: "scoped stream match", method: "POST", path: chatPath + q, header: append(scope, "X-Case", caseHeader), body: strings.TrimSuffix(scoped("say "+contains), "}") + `,"stream":true}`},
		call{name: "scoped mismatch", method: "POST", path: chatPath + q, header: scope, body: `{"model":"mock-echo","messages":[{"role":"user","content":` + fmt.Sprintf("%q", regex) + `}]}`},
		call{name: "malformed scope", method: "POST", path: chatPath + q, header: []string{HeaderScope, c.at("scope header") + " x"}, body: scoped("x")},
		call{name: "list fixtures", method: "GET", path: "/_mock/fixtures?scope=" + c.at("scope query") + "%20"},
		call{name: "delete scope", method: "DELETE", path: "/_mock/scopes/" + c.at("scope path") + "%20"},
		call{name: "delete fixtures", method: "DELETE", path: "/_mock/fixtures?scope=" + c.at("delete fixtures scope") + "%20"},
		call{name: "delete fixtures, bad header", method: "DELETE", path: "/_mock/fixtures", header: []string{HeaderScope, c.at("delete fixtures header") + " x"}},
		call{name: "journal", method: "GET", path: "/_mock/journal?limit=" + c.at("journal limit")},
		call{name: "quotas", method: "GET", path: "/_mock/quotas?limit=" + c.at("quotas limit")},
		call{name: "quotas, bad scope", method: "GET", path: "/_mock/quotas?scope=" + c.at("quotas scope query") + "%20"},
	)
	// The Responses API: canaries in every member it reads or echoes, JSON and streamed, in a
	// fixture's scope, and in the bodies it refuses.
	respInput := func() string {
		return fmt.Sprintf(`[
			{"role":"developer","content":%q},
			{"type":"message","role":"user","content":[{"type":"input_text","text":%q}]},
			{"type":"message","id":%q,"status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[],"logprobs":[]}]},
			{"type":"function_call","id":%q,"call_id":%q,"name":%q,"arguments":%q,"status":"completed"},
			{"type":"function_call_output","call_id":%q,"output":[{"type":"input_text","text":%q}]},
			{"type":"item_reference","id":%q},
			{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":%q},
			{"role":"user","content":%q}]`,
			c.at("responses developer message"), c.at("responses input_text"), c.at("responses message id"), c.at("responses output_text"),
			c.at("responses function_call id"), c.at("responses call_id"), c.at("responses function name"), `{"q":"`+c.at("responses arguments")+`"}`,
			c.at("responses output call_id"), c.at("responses function output"), c.at("responses item reference"),
			c.at("responses encrypted reasoning"), c.at("responses last user message"))
	}
	respTools := func() string {
		return fmt.Sprintf(`[{"type":"function","name":%q,"description":%q,"strict":false,"parameters":{"type":"object","properties":{"p":{"type":"string","enum":[%q]}},"required":["p"]}}]`,
			c.at("responses tool name"), c.at("responses tool description"), c.at("responses tool enum value"))
	}
	respCommon := func() string {
		return fmt.Sprintf(`"instructions":%q,"user":%q,"metadata":{%q:%q},"prompt_cache_key":%q,"safety_identifier":%q,`+
			`"text":{"format":{"type":"json_schema","name":%q,"description":%q,"schema":{"type":"object","properties":{"a":{"type":"string","enum":[%q]}}}}}`,
			c.at("responses instructions"), c.at("responses user"), c.at("responses metadata key"), c.at("responses metadata value"),
			c.at("responses prompt cache key"), c.at("responses safety identifier"), c.at("responses format name"),
			c.at("responses format description"), c.at("responses schema enum"))
	}
	const respPath = "/v1/responses"
	calls = append(calls,
		call{name: "responses json", method: "POST", path: respPath + q, body: `{"model":"mock-echo","input":` + respInput() + `,` + respCommon() + `}`},
		call{name: "responses stream", method: "POST", path: respPath + q, body: `{"model":"mock-echo","stream":true,"input":` + respInput() + `,` + respCommon() + `}`},
		call{name: "responses tools", method: "POST", path: respPath + q, body: `{"model":"mock-tools","input":` + fmt.Sprintf("%q", c.at("responses tools input")) + `,"tools":` + respTools() + `,"tool_choice":{"type":"function","name":` + fmt.Sprintf("%q", c.at("responses tool name")) + `}}`},
		call{name: "responses tools stream", method: "POST", path: respPath + q, body: `{"model":"mock-tools","stream":true,"input":"x","tools":` + respTools() + `}`},
		call{name: "responses stream fault", method: "POST", path: respPath + q, body: `{"model":"mock-echo","stream":true,"input":` + respInput() + `}`, header: []string{"X-Mock-Fault", "stream_error;after=3"}},
		call{name: "responses stream disconnect", method: "POST", path: respPath + q, body: `{"model":"mock-slow","stream":true,"input":` + respInput() + `}`, disconnect: true},
		call{name: "responses previous_response_id", method: "POST", path: respPath, body: `{"model":"mock-echo","input":"x","previous_response_id":` + fmt.Sprintf("%q", c.at("previous response id")) + `}`},
		call{name: "responses conversation", method: "POST", path: respPath, body: `{"model":"mock-echo","input":"x","conversation":{"id":` + fmt.Sprintf("%q", c.at("conversation id")) + `}}`},
		call{name: "responses hosted tool", method: "POST", path: respPath, body: `{"model":"mock-tools","input":"x","tools":[{"type":"web_search","search_context_size":` + fmt.Sprintf("%q", c.at("hosted tool option")) + `}]}`},
		call{name: "responses bad item", method: "POST", path: respPath, body: `{"model":"mock-echo","input":[{"type":` + fmt.Sprintf("%q", c.at("responses item type")) + `}]}`},
		call{name: "responses bad include", method: "POST", path: respPath, body: `{"model":"mock-echo","input":"x","include":[` + fmt.Sprintf("%q", c.at("responses include")) + `]}`},
		call{name: "responses stored", method: "GET", path: respPath + "/" + c.at("stored response id") + q},
		call{name: "responses scoped match", method: "POST", path: respPath + q, header: append(scope, "X-Case", caseHeader),
			body: `{"model":"mock-tools","input":` + fmt.Sprintf("%q", "say "+contains) + `,"tools":` + respTools() + `}`},
		call{name: "responses scoped stream match", method: "POST", path: respPath + q, header: append(scope, "X-Case", caseHeader),
			body: `{"model":"mock-tools","stream":true,"input":` + fmt.Sprintf("%q", "say "+contains) + `}`},
		call{name: "responses strict miss", method: "POST", path: respPath + q, header: scope, body: `{"model":"mock-echo","input":` + fmt.Sprintf("%q", c.at("responses scoped unmatched")) + `}`},
		call{name: "responses scoped reasoning", method: "POST", path: respPath + q, header: scope,
			body: `{"model":"mock-reasoning","stream":true,"input":"x","reasoning":{"summary":"auto"},"include":["reasoning.encrypted_content"]}`},
	)
	// A reasoning model: its summary and encrypted content — the mock's own text, searched as
	// canaries once the answers name them (reasoningCanaries) — sent back on a next turn, JSON
	// and streamed, beside a chat call with reasoning_effort; a canary as encrypted content, or
	// as the id of a genuine item, is refused.
	first := h.do("POST", respPath, `{"model":"mock-reasoning","input":`+fmt.Sprintf("%q", c.at("reasoning first input"))+
		`,"reasoning":{"summary":"detailed"},"include":["reasoning.encrypted_content"]}`)
	reasoningCanaries(t, c, "first turn", first.Body.Bytes())
	var firstTurn struct{ Output []json.RawMessage }
	if err := json.Unmarshal(first.Body.Bytes(), &firstTurn); err != nil || len(firstTurn.Output) < 2 {
		t.Fatalf("reasoning first turn: %d %s", first.Code, first.Body)
	}
	nextTurn := func(stream bool, item string) string {
		return fmt.Sprintf(`{"model":"mock-reasoning","stream":%t,"reasoning":{"summary":"auto","effort":"high"},"include":["reasoning.encrypted_content"],`+
			`"input":[{"role":"user","content":%q},%s,%s,{"role":"user","content":%q}]}`,
			stream, c.at("reasoning earlier input"), item, firstTurn.Output[1], c.at("reasoning next input"))
	}
	var renamed map[string]any
	_ = json.Unmarshal(firstTurn.Output[0], &renamed)
	renamed["id"] = c.at("renamed reasoning id")
	renamedItem, _ := json.Marshal(renamed)
	calls = append(calls,
		call{name: "reasoning json", method: "POST", path: respPath + q, body: nextTurn(false, string(firstTurn.Output[0]))},
		call{name: "reasoning renamed item", method: "POST", path: respPath + q, body: nextTurn(false, string(renamedItem))},
		call{name: "reasoning stream", method: "POST", path: respPath + q, body: nextTurn(true, string(firstTurn.Output[0]))},
		call{name: "reasoning forged item", method: "POST", path: respPath + q,
			body: nextTurn(false, fmt.Sprintf(`{"type":"reasoning","id":%q,"summary":[],"encrypted_content":%q}`, c.at("forged reasoning id"), c.at("forged encrypted content")))},
		call{name: "chat with reasoning_effort", method: "POST", path: chatPath + q,
			body: `{"model":"mock-reasoning","reasoning_effort":"low","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":` + fmt.Sprintf("%q", c.at("reasoning chat message")) + `}]}`},
	)
	anthropic := anthropicCanaryCalls(c, q, scope, contains, caseHeader) // messages_canaries_test.go
	anthropic = append(anthropic, thinkingCanaryCalls(t, h, c, q, scope)...)
	for _, a := range append(anthropic, googleCanaryCalls(c, q, scope, contains, caseHeader)...) { // google_canaries_test.go
		calls = append(calls, call{name: a.name, method: a.method, path: a.path, body: a.body, disconnect: a.disconnect, header: a.header})
	}
	// Browsers (front.go): a foreign Origin, a rebinding Host, Sec-Fetch-Site, an allowed origin's
	// preflight.
	calls = append(calls, []call{
		{name: "health", method: "GET", path: "/health" + q},
		{name: "foreign origin read", method: "GET", path: "/v1/models" + q, header: []string{"Origin", "https://" + c.at("origin header") + ".example"}},
		{name: "foreign origin write", method: "POST", path: "/_mock/fixtures" + q, body: fixtureBody, header: []string{"Origin", "http://" + c.at("origin header on a write") + ":8080"}},
		{name: "rebinding host", method: "GET", path: "/_mock/journal" + q, host: c.at("host header") + ".example:8080"},
		{name: "rebinding host with its origin", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","messages":` + messages() + `}`,
			host: c.at("host header on a write") + ".example", header: []string{"Origin", "http://" + c.at("origin of a rebinding page") + ".example"}},
		{name: "sec-fetch-site", method: "GET", path: "/v1/models" + q, header: []string{"Sec-Fetch-Site", c.at("sec-fetch-site header")}},
		{name: "cross-site write", method: "POST", path: "/_mock/fixtures" + q, body: fixtureBody, header: []string{"Sec-Fetch-Site", "cross-site"},
			host: c.at("host header of a cross-site write") + ".example"},
		{name: "allowed origin cross-site", method: "POST", path: chatPath + q, body: `{"model":"mock-echo","messages":` + messages() + `}`,
			header: []string{"Origin", "http://allowed.example", "Sec-Fetch-Site", "cross-site"}},
		{name: "preflight", method: "OPTIONS", path: chatPath + q, header: []string{"Origin", "http://allowed.example",
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type, x-" + c.at("preflight header name")}},
	}...)
	var bodies strings.Builder // every response body and header set, searched too
	for _, cl := range calls {
		var rd io.Reader
		if cl.body != "" {
			rd = strings.NewReader(cl.body)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, cl.method, srv.URL+cl.path, rd)
		req.Header = headers()
		if cl.name == "form body" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for i := 0; i+1 < len(cl.header); i += 2 {
			req.Header.Set(cl.header[i], cl.header[i+1])
		}
		if cl.host != "" {
			req.Host = cl.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", cl.name, err)
		}
		if cl.disconnect {
			rd := bufio.NewReader(resp.Body)
			_, _ = rd.ReadString('\n')
			cancel()
			resp.Body.Close()
			waitForLog(t, h.logs, func(m map[string]any) bool { return m["stream_outcome"] == "client_disconnected" })
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if strings.HasPrefix(cl.name, "reasoning") && resp.StatusCode == 200 {
			reasoningCanaries(t, c, cl.name, body)
		}
		if resp.StatusCode >= 400 {
			text := string(body)
			// The one place a client's own text may come back: the param naming the unknown
			// field, in the response to the very request that sent it.
			if cl.name == "unknown field" {
				e := decodeError(t, body)
				if e.Param == nil || *e.Param != unknownName {
					t.Errorf("unknown field: param = %v", e.Param)
				}
				text = strings.ReplaceAll(text, unknownName, "")
			}
			bodies.WriteString(cl.name + ": " + text + "\n")
			for k, v := range resp.Header {
				bodies.WriteString(k + ": " + strings.Join(v, ",") + "\n")
			}
		}
	}

	// A panic, with the same headers.
	chain := observability.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(fmt.Errorf("handler failed on %s", c.at("panic value")))
	}), observability.ChainConfig{Logger: h.deps.Logger, Tracer: h.deps.Tracer, Propagator: h.deps.Propagator, Metrics: h.metrics, WriteInternalError: writeInternalError})
	preq := httptest.NewRequest("POST", "/panic"+q, strings.NewReader(`{"x":"`+c.at("panic body")+`"}`))
	preq.Header = headers()
	prr := httptest.NewRecorder()
	chain.ServeHTTP(prr, preq)
	if prr.Code != 500 {
		t.Fatalf("panic path: %d", prr.Code)
	}
	bodies.WriteString("panic: " + prr.Body.String())

	// Let the last access lines and span ends land.
	srv.Close()
	spans := h.spans.GetSpans()
	if len(spans) < len(calls) {
		t.Fatalf("only %d spans for %d calls", len(spans), len(calls))
	}
	sources := map[string]string{
		"logs":          h.logs.String(),
		"spans":         spansText(spans),
		"/metrics":      openMetricsText(t, h.metrics),
		"error bodies":  bodies.String(),
		"/debug/traces": h.do("GET", "/debug/traces?limit=1000", "").Body.String(),
		"journal":       h.do("GET", "/_mock/journal?limit=1000", "").Body.String() + h.do("GET", "/_mock/journal?scope=canary-scope&limit=1000", "").Body.String(),
		"fixture list":  h.do("GET", "/_mock/fixtures?scope=canary-scope", "").Body.String(),
		"quota list":    h.do("GET", "/_mock/quotas?limit=1000", "").Body.String() + h.do("GET", "/_mock/quotas?scope=canary-scope&limit=1000", "").Body.String(),
	}
	if !strings.Contains(sources["quota list"], `"model":"mock-echo"`) {
		t.Errorf("the quota calls drew from no bucket the list shows: %s", sources["quota list"])
	}
	for _, code := range []string{`"fixture":"cnr-content"`, `"fixture":"cnr-reasoning"`, `"error_code":"no_fixture_match"`, `"error_code":"fixture_mismatch"`} {
		if !strings.Contains(sources["journal"], code) {
			t.Errorf("the fixture calls did not run as planned: no %s in the journal", code)
		}
	}
	var inScope struct {
		Data []struct {
			Route, Fixture string
			ErrorCode      string `json:"error_code"`
		}
	}
	_ = json.Unmarshal(h.do("GET", "/_mock/journal?scope=canary-scope&limit=1000", "").Body.Bytes(), &inScope)
	var respMatched, respMissed, msgMatched, thinkingMatched, geminiMatched int
	for _, e := range inScope.Data {
		if strings.HasPrefix(e.Route, "/v1/models/{model}:") && e.Fixture == "cnr-content" {
			geminiMatched++
		}
		if e.Route == "/v1/messages" && e.Fixture == "cnr-content" {
			msgMatched++
		}
		if e.Route == "/v1/messages" && e.Fixture == "cnr-reasoning" {
			thinkingMatched++
		}
		if e.Route == "/v1/responses" && e.Fixture == "cnr-content" {
			respMatched++
		}
		if e.Route == "/v1/responses" && e.ErrorCode == "no_fixture_match" {
			respMissed++
		}
	}
	if msgMatched != 2 || thinkingMatched != 1 {
		t.Errorf("the Messages calls in the scope did not run as planned: %d matched, %d thinking", msgMatched, thinkingMatched)
	}
	if geminiMatched != 2 || !strings.Contains(sources["error bodies"], "Corrupted thought signature.") {
		t.Errorf("the Gemini calls did not run as planned: %d matched in the scope", geminiMatched)
	}
	if !strings.Contains(sources["error bodies"], "Invalid `signature` in `thinking` block") || !strings.Contains(sources["error bodies"], "Invalid `data` in `redacted_thinking` block") {
		t.Errorf("the forged thinking blocks were not refused")
	}
	for _, name := range []string{"thinking json: ", "thinking stream: ", "thinking omitted: ", "thinking scoped fixture: "} {
		if strings.Contains(sources["error bodies"], name) {
			t.Errorf("%s refused", name)
		}
	}
	if respMatched != 2 || respMissed != 1 {
		t.Errorf("the Responses calls in the scope did not run as planned: %d matched, %d missed", respMatched, respMissed)
	}
	if !strings.Contains(sources["logs"], `"reasoning_tokens":512`) || !strings.Contains(sources["journal"], `"reasoning_tokens":64`) ||
		!strings.Contains(sources["error bodies"], "invalid_encrypted_content") {
		t.Errorf("the reasoning calls did not run as planned: %v %v %v", strings.Contains(sources["logs"], `"reasoning_tokens":512`),
			strings.Contains(sources["journal"], `"reasoning_tokens":64`), strings.Contains(sources["error bodies"], "invalid_encrypted_content"))
	}
	for name, text := range sources {
		if hits := c.find(text); len(hits) > 0 {
			t.Errorf("%s leaks %d canaries: %v", name, len(hits), hits)
		}
	}
	t.Logf("searched %d canaries in %d log bytes, %d spans, %d metric bytes, %d error-body bytes",
		len(c.places), len(sources["logs"]), len(spans), len(sources["/metrics"]), bodies.Len())
}

// reasoningCanaries adds a reasoning answer's summary texts and encrypted contents, JSON or
// streamed, to the canaries: the mock's own reasoning text is content too, in no signal.
func reasoningCanaries(t *testing.T, c *canaries, name string, body []byte) {
	t.Helper()
	n := 0
	for _, m := range reasoningText.FindAllSubmatch(body, -1) {
		var s string
		if err := json.Unmarshal(m[1], &s); err != nil || s == "" {
			continue
		}
		c.places[s] = name + " reasoning text"
		n++
	}
	if n == 0 {
		t.Fatalf("%s: no reasoning summary or encrypted content in %s", name, body)
	}
}

// reasoningText finds the summary texts and encrypted contents of an answer or a stream.
var reasoningText = regexp.MustCompile(`"(?:encrypted_content|summary_index":0,"delta|summary_index":0,"text|type":"summary_text","text)":("(?:[^"\\]|\\.)*")`)
