package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// googleCanaryCalls are TestCanaries' calls of Google's Gemini dialect: canaries in every place
// a Gemini client puts text — the system instruction, the parts (text, thoughts sent back, a
// thought signature, inline data, a file's URI), function declarations (name, description,
// schema), function calls and responses, stop sequences, safety settings, labels, the model and
// page token in the path and query, x-goog-api-key, the key query parameter — on every path: JSON, stream, the JSON
// array, countTokens, a disconnect, a fault, a fixture's scope, and the bodies it refuses.
func googleCanaryCalls(c *canaries, q string, scope []string, contains, caseHeader string) []canaryCall {
	head := func(extra ...string) []string {
		return append([]string{"X-Goog-Api-Key", c.at("x-goog-api-key header"), "X-Goog-Api-Client", c.at("x-goog-api-client header")}, extra...)
	}
	tools := func() string {
		return fmt.Sprintf(`"tools":[{"functionDeclarations":[{"name":%q,"description":%q,"parametersJsonSchema":{"type":"object","properties":{"p":{"type":"string","enum":[%q]}},"required":["p"]}},
			{"name":%q,"parameters":{"type":"OBJECT","properties":{"q":{"type":"STRING","description":%q}}}}]}]`,
			c.at("gemini function name"), c.at("gemini function description"), c.at("gemini schema enum"),
			c.at("gemini openapi function name"), c.at("gemini openapi description"))
	}
	conv := func() string {
		call := c.at("gemini function call name")
		return fmt.Sprintf(`"systemInstruction":{"role":"user","parts":[{"text":%q}]},"contents":[
			{"role":"user","parts":[{"text":%q},{"inlineData":{"mimeType":"image/png","data":%q}},{"fileData":{"mimeType":"application/pdf","fileUri":%q}}]},
			{"role":"model","parts":[{"text":%q,"thought":true},{"text":%q},{"functionCall":{"name":%q,"args":{"q":%q}},"thoughtSignature":"skip_thought_signature_validator"}]},
			{"role":"user","parts":[{"functionResponse":{"name":%q,"response":{"r":%q}}},{"text":%q}]}],
			"generationConfig":{"stopSequences":[%q],"thinkingConfig":{"includeThoughts":true}},
			"safetySettings":[{"category":%q,"threshold":"BLOCK_NONE"}],"labels":{"k":%q}`,
			c.at("gemini system instruction"), c.at("gemini user text"), base64.StdEncoding.EncodeToString([]byte(c.at("gemini inline data"))),
			c.at("gemini file uri"), c.at("gemini thought sent back"), c.at("gemini model text"), call, c.at("gemini function call args"),
			call, c.at("gemini function response"), c.at("gemini last user text"),
			c.at("gemini stop sequence"), c.at("gemini safety category"), c.at("gemini label"))
	}
	answered := func() string { return "{" + conv() + "," + tools() + "}" }
	scoped := func(last string) string {
		return fmt.Sprintf(`{"contents":[{"role":"user","parts":[{"text":%q}]}],%s}`, last, tools())
	}
	path := func(version, model, method string) string {
		return "/" + version + "/models/" + model + ":" + method + q
	}
	sse, keyQuery := "?alt=sse", "?key="
	if q != "" {
		sse, keyQuery = "&alt=sse", "&key="
	}
	return []canaryCall{
		{name: "gemini json", method: "POST", path: path("v1beta", "mock-echo", "generateContent"), body: answered(), header: head()},
		{name: "gemini stream", method: "POST", path: path("v1beta", "mock-echo", "streamGenerateContent") + sse, body: answered(), header: head()},
		{name: "gemini array", method: "POST", path: path("v1", "mock-echo", "streamGenerateContent"), body: answered(), header: head()},
		{name: "gemini thinking", method: "POST", path: path("v1", "mock-reasoning", "generateContent"), body: answered(), header: head()},
		{name: "gemini tools", method: "POST", path: path("v1", "mock-tools", "generateContent"), body: scoped(c.at("gemini tools user text")), header: head()},
		{name: "gemini tools stream", method: "POST", path: path("v1", "mock-tools", "streamGenerateContent") + sse, body: scoped("x"), header: head()},
		{name: "gemini stream fault", method: "POST", path: path("v1beta", "mock-echo", "streamGenerateContent") + sse, body: answered(), header: head("X-Mock-Fault", "stream_error;after=3")},
		{name: "gemini rate limited", method: "POST", path: path("v1beta", "mock-echo", "generateContent"), body: answered(), header: head("X-Mock-Fault", "rate_limit")},
		{name: "gemini disconnect", method: "POST", path: path("v1beta", "mock-slow", "streamGenerateContent") + sse, body: answered(), header: head(), disconnect: true},
		{name: "gemini countTokens", method: "POST", path: path("v1beta", "mock-echo", "countTokens"), body: `{"generateContentRequest":` + answered() + `}`, header: head()},
		{name: "gemini forged signature", method: "POST", path: path("v1beta", "mock-reasoning", "generateContent"), header: head(),
			body: fmt.Sprintf(`{"contents":[{"role":"user","parts":[{"text":"x"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":%q}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`,
				base64.StdEncoding.EncodeToString([]byte(c.at("gemini forged signature"))))},
		{name: "gemini unknown field", method: "POST", path: path("v1beta", "mock-echo", "generateContent"), header: head(),
			body: `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"cnry_field":` + fmt.Sprintf("%q", c.at("gemini unknown field value")) + `}}`},
		{name: "gemini unknown model", method: "POST", path: path("v1beta", c.at("gemini model in the path"), "generateContent"), body: scoped("x"), header: head()},
		{name: "gemini another method", method: "POST", path: path("v1beta", "mock-echo", c.at("gemini method in the path")), body: scoped("x"), header: head()},
		{name: "gemini bad part", method: "POST", path: path("v1beta", "mock-echo", "generateContent"), header: head(),
			body: `{"contents":[{"parts":[{"text":` + fmt.Sprintf("%q", c.at("gemini text of a bad part")) + `,"inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}`},
		// The key in the query alone (an empty Authorization is none): the quota's client key.
		{name: "gemini key in the query", method: "POST", path: path("v1beta", "mock-echo", "generateContent") + keyQuery + c.at("gemini key query parameter"),
			body: answered(), header: []string{"Authorization", "", "X-Mock-Quota", "rpm=100"}},
		{name: "gemini models", method: "GET", path: "/v1beta/models?pageSize=1&pageToken=" + c.at("gemini page token"), header: head()},
		{name: "gemini models on /v1", method: "GET", path: "/v1/models" + q, header: head()},
		{name: "gemini model path", method: "GET", path: "/v1beta/models/" + c.at("gemini model path") + q, header: head()},
		{name: "gemini scoped match", method: "POST", path: path("v1", "mock-tools", "generateContent"), header: head(append(scope, "X-Case", caseHeader)...), body: scoped("say " + contains)},
		{name: "gemini scoped stream match", method: "POST", path: path("v1", "mock-tools", "streamGenerateContent") + sse, header: head(append(scope, "X-Case", caseHeader)...), body: scoped("say " + contains)},
		{name: "gemini strict miss", method: "POST", path: path("v1", "mock-tools", "generateContent"), header: head(scope...), body: scoped(c.at("gemini scoped unmatched"))},
	}
}

// TestGoogleQueryKeyCanaries: a Gemini client's key in the key query parameter — the configured
// key and a wrong one, both canaries — reaches no signal: not the access log, the spans (exported
// and /debug/traces), /metrics, the journal, the quota list, nor the answers' bodies and headers,
// on a JSON answer, a stream, a quota's refusal and the key's refusals.
func TestGoogleQueryKeyCanaries(t *testing.T) {
	c := newCanaries()
	key := c.at("the configured key in ?key=")
	h := newHarness(t, journaled, func(d *Deps) { d.Config.APIKey = key })
	scope := []string{"X-Mock-Scope", "google-key-canaries"}
	quota := append([]string{"X-Mock-Quota", "rpm=2;window=10s"}, scope...)
	path := func(model, method, q string) string { return geminiPath("v1beta", model, method) + q }
	calls := []struct {
		path   string
		header []string
	}{
		{path("mock-chat", "generateContent", "?key="+key), quota},
		{path("mock-chat", "streamGenerateContent", "?alt=sse&key="+key), quota},
		{path("mock-chat", "generateContent", "?key="+key), quota}, // the quota refuses it
		{path("mock-chat", "countTokens", "?key="+key), scope},
		{path("mock-chat", "generateContent", "?key="+c.at("a wrong key in ?key=")), scope},
		{path("mock-chat", "generateContent", "?key="+c.at("a wrong key in ?key= beside a stream")+"&alt=sse"), nil},
		{path("mock-chat", "generateContent", "?key="), nil},
		{path(c.at("an unknown model beside ?key="), "generateContent", "?key="+key), nil},
	}
	var bodies strings.Builder
	statuses := map[int]int{}
	for _, cl := range calls {
		rr := h.do("POST", cl.path, geminiBody(""), cl.header...)
		statuses[rr.Code]++
		bodies.WriteString(rr.Body.String())
		for k, v := range rr.Header() {
			bodies.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
	}
	if statuses[200] != 3 || statuses[429] != 1 || statuses[400] != 2 || statuses[403] != 1 || statuses[404] != 1 {
		t.Errorf("the calls did not run as planned: %v", statuses)
	}
	auth := []string{"Authorization", "Bearer " + key}
	read := func(path string) string {
		rr := h.do("GET", path, "", auth...)
		if rr.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rr.Code, rr.Body.String())
		}
		return rr.Body.String()
	}
	_ = h.tp.ForceFlush(t.Context())
	sources := map[string]string{
		"logs":          h.logs.String(),
		"spans":         spansText(h.spans.GetSpans()),
		"/metrics":      openMetricsText(t, h.metrics),
		"answers":       bodies.String(),
		"/debug/traces": read("/debug/traces?limit=1000"),
		"journal":       read("/_mock/journal?limit=1000") + read("/_mock/journal?scope=google-key-canaries&limit=1000"),
		"quota list":    read("/_mock/quotas?limit=1000") + read("/_mock/quotas?scope=google-key-canaries&limit=1000"),
	}
	for _, want := range []string{`"error_code":"invalid_api_key"`, `"error_code":"missing_api_key"`, `"error_code":"rate_limit_exceeded"`} {
		if !strings.Contains(sources["logs"], want) || !strings.Contains(sources["journal"], want) {
			t.Errorf("no %s in the access log and the journal", want)
		}
	}
	if !strings.Contains(sources["quota list"], `"model":"mock-chat"`) {
		t.Errorf("the quota calls drew from no bucket the list shows: %s", sources["quota list"])
	}
	for name, text := range sources {
		if hits := c.find(text); len(hits) > 0 {
			t.Errorf("%s leaks %d canaries: %v", name, len(hits), hits)
		}
	}
}
