package audit

import (
	"net/http"
)

// headerScope is the header that puts a request in a scope (docs/fixtures.md).
const headerScope = "X-Mock-Scope"

// scopePrefix starts the audit's own scope id; the run's random part follows. A scope id is
// logged and journaled by design, so it carries no canary.
const scopePrefix = "audit-"

// Fixture names are the one fixture text the contract puts in telemetry: they carry no canary.
const (
	fixContent  = "audit-content"
	fixRefusal  = "audit-refusal"
	fixTools    = "audit-tools"
	fixMismatch = "audit-mismatch"
)

// buildFixtures lays out the probes of fixtures and the call journal (docs/fixtures.md): runtime
// fixtures in the audit's own strict scope whose conditions and replies carry canaries, requests
// that match each of them (JSON and stream), miss them all (400 no_fixture_match) or match one
// that cannot answer them (400 fixture_mismatch), refused fixture bodies, and the control calls
// with canaries wherever a client controls the text. The control API's answers (the scope's
// journal, the unscoped journal, the fixture list) are read back after the traffic, by the
// responses source; the scope is deleted at the end.
func (t *traffic) buildFixtures(echo string, ds []*dialect) {
	scope := t.scope
	// The fixtures: every condition value and every reply text is a canary; the requests that
	// match them carry the condition canaries again (the fixture's probe owns them).
	add := t.newProbe("fixtures: add runtime fixtures to the audit's scope (canaries in conditions and replies)", http.MethodPost, "/_mock/fixtures")
	userC := add.c("fixture " + fixContent + " match.last_user.contains (also in its matching requests' last user message)")
	headerC := add.c("fixture " + fixContent + " match.header value (also the X-Audit-Case header of its matching requests)")
	regexC := add.c("fixture " + fixRefusal + " match.any_message.regex (also in its matching requests' assistant message)")
	systemText := add.text("fixture " + fixTools + " match.system.equals (also its matching requests' system message)")
	toolName := add.c("fixture " + fixTools + " reply.tool_calls[0].name (also the tool its matching requests offer)")
	missC := add.c("fixture " + fixMismatch + " match.last_user.contains (also in its request's last user message)")
	fixtures := []any{
		obj{"name": fixContent,
			"match": obj{"last_user": obj{"contains": userC}, "header": obj{"X-Audit-Case": headerC}},
			"reply": obj{"content": add.text("fixture " + fixContent + " reply.content")}},
		obj{"name": fixRefusal,
			"match": obj{"any_message": obj{"regex": `\b` + regexC + `\s+\(regex\)`}},
			"reply": obj{"refusal": add.text("fixture " + fixRefusal + " reply.refusal")}},
		obj{"name": fixTools,
			"match": obj{"system": obj{"equals": systemText}},
			"reply": obj{"tool_calls": []any{obj{"name": toolName, "arguments": obj{
				"query": add.text("fixture " + fixTools + " reply.tool_calls[0].arguments value"),
				add.c("fixture " + fixTools + " reply.tool_calls[0].arguments key"): obj{"nested": add.c("fixture " + fixTools + " reply.tool_calls[0].arguments nested value")},
			}}}}},
		obj{"name": fixMismatch,
			"match": obj{"last_user": obj{"contains": missC}},
			"reply": obj{"tool_calls": []any{obj{
				"name":      add.c("fixture " + fixMismatch + " reply.tool_calls[0].name (a tool its request does not offer)"),
				"arguments": obj{"query": add.text("fixture " + fixMismatch + " reply.tool_calls[0].arguments value")}}}}},
	}
	// strict: a request of the scope that no fixture matches is 400 no_fixture_match.
	add.jsonBody(obj{"strict": true, "fixtures": fixtures}).headers(headerOpts{}).expect("200")
	add.p.Header.Set(headerScope, scope)

	// A body the store refuses whole: an unknown key (the error must not quote it or its value).
	{
		b := t.newProbe("fixtures: refused body (canaries in an unknown key, its value and the reply)", http.MethodPost, "/_mock/fixtures")
		b.jsonBody(obj{"fixtures": []any{obj{
			"name":                                  "audit-refused",
			"match":                                 obj{"last_user": obj{"contains": b.c("refused fixture match.last_user.contains")}},
			"reply":                                 obj{"content": b.text("refused fixture reply.content")},
			b.c("refused fixture unknown key name"): b.text("refused fixture unknown key's value"),
		}}}).headers(headerOpts{}).expect("400 invalid_value")
		b.p.Header.Set(headerScope, scope)
	}
	{
		b := t.newProbe("fixtures: unparsable body", http.MethodPost, "/_mock/fixtures")
		b.p.Body = []byte(b.fill(`{"fixtures":[{"name":"audit-unparsable","reply":{"content":"{c} cut short`, "{c}", "unparsable fixture body (reply.content)"))
		b.headers(headerOpts{}).expect("400")
		b.p.Header.Set(headerScope, scope)
	}

	// Requests of the scope. Each carries canaries in every message field (chatBody), the text
	// its fixture's conditions look for, and x-mock-scope.
	chat := func(name, model string, stream bool, expect string, edit func(b builder, body obj, msgs []any)) {
		b := t.newProbe(name, http.MethodPost, chatPath)
		body := b.chatBody(model, stream, false)
		if edit != nil {
			edit(b, body, body["messages"].([]any))
		}
		b.jsonBody(body).headers(headerOpts{}).expect(expect)
		b.p.Header.Set(headerScope, scope)
		b.p.Header.Set("X-Mock-Latency", "instant")
	}
	lastUser := func(b builder, msgs []any, text string) {
		msgs[len(msgs)-1].(obj)["content"] = []any{obj{"type": "text", "text": b.c("last user message, before the fixture's text") + " " + text + " please"}}
	}
	for _, stream := range []bool{false, true} {
		kind := "JSON"
		if stream {
			kind = "stream"
		}
		chat("fixture match "+fixContent+" (content), "+kind, echo, stream, "200", func(b builder, body obj, msgs []any) {
			lastUser(b, msgs, userC)
			b.p.Header.Set("X-Audit-Case", headerC)
		})
		chat("fixture match "+fixRefusal+" (refusal), "+kind, echo, stream, "200", func(b builder, body obj, msgs []any) {
			msgs[3].(obj)["content"] = b.c("assistant message, before the fixture's text") + " " + regexC + " (regex) " + b.c("assistant message, after the fixture's text")
		})
		if t.toolsModel != "" {
			chat("fixture match "+fixTools+" (tool_calls), "+kind, t.toolsModel, stream, "200", func(b builder, body obj, msgs []any) {
				msgs[0].(obj)["content"] = systemText
				body["tools"] = []any{obj{"type": "function", "function": obj{
					"name":        toolName,
					"description": b.text("tool description (fixture request)"),
					"parameters":  obj{"type": "object", "properties": obj{"query": obj{"type": "string", "description": b.text("tool parameter description (fixture request)")}}, "required": []any{"query"}},
				}}}
				body["tool_choice"] = "auto"
			})
		}
		chat("fixture miss in a strict scope, "+kind, echo, stream, "400 no_fixture_match", nil)
		chat("fixture mismatch (a tool call to a tool the request does not offer), "+kind, echo, stream, "400 fixture_mismatch", func(b builder, body obj, msgs []any) {
			lastUser(b, msgs, missC)
		})
	}
	// The same fixtures answer every other dialect.
	for _, d := range ds {
		if d.fixtureUser != nil {
			t.buildDialectFixtures(d, echo, userC, headerC, systemText, toolName)
		}
	}

	// Scope ids and control parameters a client controls, malformed: refused, never echoed.
	{
		b := t.newProbe("malformed x-mock-scope on chat", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{}).expect("400 invalid_simulation_header")
		b.p.Header.Set(headerScope, b.c("malformed x-mock-scope (has a space)")+" x")
	}
	{
		b := t.newProbe("malformed x-mock-scope on the fixture list", http.MethodGet, "/_mock/fixtures")
		b.headers(headerOpts{}).expect("400 invalid_simulation_header")
		b.p.Header.Set(headerScope, b.c("malformed x-mock-scope on /_mock (has a slash)")+"/x")
	}
	{
		b := t.newProbe("fixture list with a malformed ?scope=", http.MethodGet, "")
		b.p.Path = "/_mock/fixtures?scope=" + b.c("malformed ?scope= of the fixture list") + "%20x"
		b.headers(headerOpts{}).expect("400 invalid_value")
	}
	{
		b := t.newProbe("delete a malformed scope", http.MethodDelete, "")
		b.p.Path = "/_mock/scopes/" + b.c("malformed scope in the DELETE path") + "%20" + b.query()
		b.headers(headerOpts{}).expect("400 invalid_value")
	}
	{
		b := t.newProbe("journal with a malformed limit", http.MethodGet, "")
		b.p.Path = "/_mock/journal?limit=" + b.c("malformed journal limit")
		b.headers(headerOpts{}).expect("400 invalid_value")
		b.p.Header.Set(headerScope, scope)
	}
}
