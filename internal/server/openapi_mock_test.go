package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

// conformMockControl provokes every response of the control surface (/_mock/*) and the chat
// answers and errors that fixtures script — a tool call, content, a refusal, a content_filter
// finish with a usage override, JSON and stream; fixture_mismatch; no_fixture_match — and the
// malformed x-mock-scope, each held to the document by do. It also checks that the fixtures did
// answer, so that a generated answer cannot pass for a scripted one.
func conformMockControl(t *testing.T, d *apiDoc, do func(*harness, string, string, string, ...string) *httptest.ResponseRecorder) {
	t.Helper()
	expect := func(rr *httptest.ResponseRecorder, status int, want ...string) {
		t.Helper()
		if rr.Code != status {
			t.Errorf("status %d, want %d: %s", rr.Code, status, rr.Body)
		}
		for _, w := range want {
			if !strings.Contains(rr.Body.String(), w) {
				t.Errorf("the answer lacks %s: %s", w, rr.Body)
			}
		}
	}
	j := newHarness(t, journaled)
	const scope = "oa-fixtures:1"
	in := []string{"X-Mock-Scope", scope, "X-Mock-Latency", "instant"}
	with := func(h ...string) []string { return append(slices.Clone(in), h...) }

	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[
		{"name":"weather-call","match":{"model":"mock-tools","tools":["get_weather"],"turn":1},"reply":{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris","unit":"c"}}]}},
		{"name":"weather-answer","match":{"model":["mock-tools"],"tool_result":"get_weather"},"reply":{"content":"It is 12C in Paris."}},
		{"name":"refuse","match":{"last_user":{"contains":"forbidden"},"stream":false},"reply":{"refusal":"I can't help with that."}},
		{"name":"refuse-stream","match":{"last_user":{"regex":"^forbidden"},"stream":true},"reply":{"refusal":"I can't help with that."}},
		{"name":"ghost","match":{"last_user":{"equals":"call the ghost"}},"reply":{"tool_calls":[{"name":"ghost_tool","arguments":{}}]}},
		{"name":"filtered","priority":5,"match":{"header":{"x-test-case":"filtered"}},"reply":{"content":"Filtered.","finish_reason":"content_filter","usage":{"prompt_tokens":12,"completion_tokens":5}}},
		{"name":"sequence","match":{"any_message":{"contains":"again"},"system":{"equals":"Be brief."}},"replies":[{"content":"First."},{"error":"rate_limit;retry_after=1s"},{"content":"Third.","latency":"instant"}]}
	]}`, in...), http.StatusOK, `"object":"fixtures.added"`, `"weather-call"`, `"sequence"`)

	weather := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather.","strict":true,"parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}}]`
	call := `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"}],` + weather
	expect(do(j, "POST", chatPath, call+`}`, in...), http.StatusOK, `"tool_calls":[{"id":"call_`, `"name":"get_weather"`, `"finish_reason":"tool_calls"`)
	expect(do(j, "POST", chatPath, call+`,"n":2,"stream":true,"stream_options":{"include_usage":true}}`, in...), http.StatusOK, `"name":"get_weather"`, `"arguments":"\"Paris\""`)
	answer := `{"model":"mock-tools","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"c\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"12C"}],` + weather
	expect(do(j, "POST", chatPath, answer+`}`, in...), http.StatusOK, `"content":"It is 12C in Paris."`)
	expect(do(j, "POST", chatPath, answer+`,"stream":true}`, in...), http.StatusOK, `"content":" Paris."`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", `"n":2`), with("X-Mock-Fault", "")...), http.StatusOK) // generated: no fixture matches
	refuse := `{"model":"mock-chat","messages":[{"role":"user","content":"forbidden things"}]`
	expect(do(j, "POST", chatPath, refuse+`}`, in...), http.StatusOK, `"content":null,"refusal":"I can't help with that."`)
	expect(do(j, "POST", chatPath, refuse+`,"stream":true,"stream_options":{"include_usage":true}}`, in...), http.StatusOK,
		`"delta":{"role":"assistant"}`, `"delta":{"refusal":"I"}`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", ""), with("X-Test-Case", "filtered")...), http.StatusOK,
		`"finish_reason":"content_filter"`, `"prompt_tokens":12,"completion_tokens":5,"total_tokens":17`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", `"stream":true,"stream_options":{"include_usage":true}`), with("X-Test-Case", "filtered")...), http.StatusOK,
		`"finish_reason":"content_filter"`, `"prompt_tokens":12`)
	again := `{"model":"mock-echo","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"again"}]}`
	expect(do(j, "POST", chatPath, again, in...), http.StatusOK, `"content":"First."`)
	expect(do(j, "POST", chatPath, again, in...), http.StatusTooManyRequests, `"code":"simulated_rate_limit"`)
	expect(do(j, "POST", chatPath, again, in...), http.StatusOK, `"content":"Third."`)
	// fixture_mismatch: the fixture calls a tool the request did not offer.
	expect(do(j, "POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"call the ghost"}]}`, in...),
		http.StatusBadRequest, `"code":"fixture_mismatch"`, `"param":"tool_calls[0]"`)
	// no_fixture_match: a strict scope, and a request none of its fixtures (nor a file's) matches.
	strict := []string{"X-Mock-Scope", "oa-strict", "X-Mock-Latency", "instant"}
	expect(do(j, "POST", "/_mock/fixtures", `{"strict":true,"fixtures":[{"name":"only-hello","match":{"last_user":{"equals":"hello"}},"reply":{"content":"Hi."}}]}`, strict...),
		http.StatusOK, `"scope":"oa-strict"`)
	expect(do(j, "POST", chatPath, chatBody("mock-chat", ""), strict...), http.StatusBadRequest, `"code":"no_fixture_match"`, `only-hello`)
	expect(do(j, "POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"hello"}]}`, strict...), http.StatusOK, `"content":"Hi."`)

	// A malformed x-mock-scope, wherever it is read; never echoed.
	for _, r := range []struct{ method, path, body string }{
		{"POST", chatPath, chatBody("mock-chat", "")},
		{"GET", "/v1/models", ""},
		{"GET", "/v1/models/mock-chat", ""},
		{"POST", "/_mock/fixtures", `{"fixtures":[]}`},
		{"GET", "/_mock/fixtures", ""},
		{"GET", "/_mock/journal", ""},
		{"DELETE", "/_mock/scopes/" + scope, ""},
		{"DELETE", "/_mock/fixtures", ""},
	} {
		rr := do(j, r.method, r.path, r.body, "X-Mock-Scope", "not a scope/..")
		expect(rr, http.StatusBadRequest, `"code":"invalid_simulation_header"`, `"param":"X-Mock-Scope"`)
		if strings.Contains(rr.Body.String(), "not a scope") {
			t.Errorf("%s %s: the malformed scope is echoed: %s", r.method, r.path, rr.Body)
		}
	}
	do(j, "GET", "/v1/models", "", "X-Mock-Scope", scope)
	do(j, "GET", "/v1/models/mock-chat", "", "X-Mock-Scope", scope)

	// The control surface's refusals.
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[{"match":{},"reply":{"content":"x"}}]}`, in...), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"fixtures[0].name"`)
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[{"name":"refuse","reply":{"content":"x"}}]}`, in...), http.StatusBadRequest, `"code":"invalid_value"`)
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":`, in...), http.StatusBadRequest, `"code":"invalid_value"`)
	expect(do(j, "POST", "/_mock/fixtures", `fixtures: []`, with("Content-Type", "text/yaml")...), http.StatusUnsupportedMediaType)
	expect(do(j, "POST", "/_mock/fixtures", `{"fixtures":[],"pad":"`+strings.Repeat("a", 1<<20)+`"}`, in...), http.StatusRequestEntityTooLarge)
	few := newHarness(t, func(dd *Deps) { dd.Config.MaxScopeFixtures = 1 })
	expect(do(few, "POST", "/_mock/fixtures", `{"fixtures":[{"name":"a","reply":{"content":"a"}},{"name":"b","reply":{"content":"b"}}]}`), http.StatusBadRequest, `"param":"fixtures"`)
	gate := make(chan struct{})
	close(gate)
	req := httptest.NewRequest("POST", "/_mock/fixtures", &gatedBody{gate: gate, reading: make(chan struct{}), r: strings.NewReader(`{"fixtures":`), err: os.ErrDeadlineExceeded})
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	rr := httptest.NewRecorder()
	j.handler.ServeHTTP(rr, req)
	expect(rr, http.StatusRequestTimeout, `"code":"request_timeout"`)
	d.conform("read deadline", "POST", "/_mock/fixtures", rr)
	expect(do(j, "PUT", "/_mock/fixtures", `{}`), http.StatusMethodNotAllowed)

	// Reading it back: the fixtures and their hits, and the journal.
	expect(do(j, "GET", "/_mock/fixtures", "", in...), http.StatusOK, `"scope":"`+scope+`"`, `"origin":"runtime"`, `"last_user.regex"`, `"header"`)
	expect(do(j, "GET", "/_mock/fixtures?scope=oa-strict", ""), http.StatusOK, `"only-hello"`)
	expect(do(j, "GET", "/_mock/fixtures?scope=", ""), http.StatusOK, `"scope":"","data":[]`)
	expect(do(j, "GET", "/_mock/fixtures?scope=not+a+scope", ""), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"scope"`)
	journal := do(j, "GET", "/_mock/journal", "", in...)
	expect(journal, http.StatusOK, `"fixture":"weather-call"`, `"fixture":"generated"`, `"fixture":"refuse-stream"`, `"error_code":"fixture_mismatch"`,
		`"fault":"rate_limit"`, `"stream_outcome":"completed"`, `"finish_reason":"content_filter"`, `"shape":{"fields":["messages","model","tools"]`)
	var entries struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(journal.Body.Bytes(), &entries); err != nil || len(entries.Data) < 15 {
		t.Errorf("the journal has %d entries (%v), want every call of the scope", len(entries.Data), err)
	}
	do(j, "GET", "/_mock/journal?scope=oa-strict&limit=1", "")
	do(j, "GET", "/_mock/journal?scope=", "", "User-Agent", "OpenAI/Python 1.109.1", "X-Stainless-Lang", "python")
	expect(do(j, "GET", "/_mock/journal?limit=0", "", in...), http.StatusBadRequest, `"param":"limit"`)
	expect(do(j, "GET", "/_mock/journal?limit=two", "", in...), http.StatusBadRequest, `"param":"limit"`)
	expect(do(j, "GET", "/_mock/journal?limit=%2B5", "", in...), http.StatusBadRequest, `"param":"limit"`) // a signed number is not the schema's integer
	expect(do(j, "GET", "/_mock/journal?scope=a%2Fb", ""), http.StatusBadRequest, `"param":"scope"`)
	expect(do(newHarness(t), "GET", "/_mock/journal", ""), http.StatusNotFound, `"code":"not_found"`) // --journal-entries 0
	// The quota buckets of a scope whose calls drew from a quota.
	expect(do(j, "POST", chatPath, chatBody("mock-chat", ""), with("X-Mock-Quota", "rpm=5;tpm=9000;rpd=50;window=30s")...), http.StatusOK)
	expect(do(j, "GET", "/_mock/quotas", "", in...), http.StatusOK, `"model":"mock-chat"`, `"requests":{"limit":5,"remaining":4,`, `"daily":{"limit":50,"remaining":49,`)
	expect(do(j, "GET", "/_mock/quotas?scope=oa-strict&limit=1", ""), http.StatusOK, `"data":[]`)
	expect(do(j, "GET", "/_mock/quotas?limit=0", "", in...), http.StatusBadRequest, `"param":"limit"`)
	expect(do(j, "GET", "/_mock/quotas?limit=%2B5", "", in...), http.StatusBadRequest, `"param":"limit"`)

	// Dropping scopes.
	expect(do(j, "DELETE", "/_mock/scopes/"+scope, ""), http.StatusOK, `"object":"scope.deleted"`, `"deleted":true`)
	expect(do(j, "DELETE", "/_mock/scopes/"+scope, ""), http.StatusOK, `"deleted":false`)
	expect(do(j, "GET", "/_mock/journal", "", in...), http.StatusOK, `"data":[]`)
	expect(do(j, "DELETE", "/_mock/scopes/not%20a%20scope", ""), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"scope"`)
	expect(do(j, "DELETE", "/_mock/fixtures", "", "X-Mock-Scope", "oa-strict"), http.StatusOK, `"object":"fixtures.deleted"`, `"scope":"oa-strict"`, `"deleted":true`)
	expect(do(j, "DELETE", "/_mock/fixtures?scope=oa-strict", ""), http.StatusOK, `"deleted":false`)
	expect(do(j, "DELETE", "/_mock/fixtures", ""), http.StatusOK, `"scope":""`)
	expect(do(j, "DELETE", "/_mock/fixtures?scope=not+a+scope", ""), http.StatusBadRequest, `"code":"invalid_value"`, `"param":"scope"`)

	// With a local key, /_mock/* needs it too, before anything else.
	keyed := newHarness(t, func(dd *Deps) {
		dd.Config.APIKey = "local-key"
		journaled(dd)
	})
	expect(do(keyed, "POST", "/_mock/fixtures", `{"fixtures":`, "X-Mock-Scope", "bad scope"), http.StatusUnauthorized, `"code":"missing_api_key"`)
	expect(do(keyed, "GET", "/_mock/fixtures", "", "Authorization", "Bearer wrong"), http.StatusUnauthorized, `"code":"invalid_api_key"`)
	expect(do(keyed, "GET", "/_mock/journal", ""), http.StatusUnauthorized)
	expect(do(keyed, "DELETE", "/_mock/scopes/x", ""), http.StatusUnauthorized)
	expect(do(keyed, "DELETE", "/_mock/fixtures", ""), http.StatusUnauthorized)
	expect(do(keyed, "POST", "/_mock/fixtures", `{"fixtures":[{"name":"k","reply":{"content":"k"}}]}`, "Authorization", "Bearer local-key", "X-Mock-Scope", "k"), http.StatusOK)
	expect(do(keyed, "POST", chatPath, chatBody("mock-echo", ""), "Authorization", "Bearer local-key", "X-Mock-Scope", "k"), http.StatusOK, `"content":"k"`)
	expect(do(keyed, "GET", "/_mock/journal?scope=k", "", "Authorization", "Bearer local-key"), http.StatusOK, `"fixture":"k"`)
	expect(do(keyed, "DELETE", "/_mock/scopes/k", "", "Authorization", "Bearer local-key"), http.StatusOK, `"deleted":true`)
}
