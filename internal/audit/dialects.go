package audit

import (
	"net/http"
)

// dialect is one dialect of the chat path as the audit speaks it: its route and headers, how to
// build a request with a canary in every member that takes text, how to read its stream and its
// error body, and the probes only it has. The probes every dialect shares (each model answering,
// the faults, the refused bodies, a body cut short, the fixtures of the audit's scope) are laid
// out once, by buildDialect and buildDialectFixtures, from the row.
type dialect struct {
	name string // the first word of its probes' names
	// route is the path of a request for model, streamed or not, and what its clients add to
	// the query after the canaries ("" for none): one route where the body names the model, a
	// route per model and method where the path does.
	route func(model string, stream bool) (path, query string)
	// headers adds what its clients send beside the headers every probe carries (nil: nothing).
	headers func(b builder)
	// body is a valid request with a canary in every member that takes text (model and stream
	// are in route too, for a dialect whose body does not name them).
	body func(b builder, model string, stream, tools bool) obj
	// readTo names the event a whole stream ends with, as the stream probes' names say it.
	readTo string

	// event reads one event of its stream of named events (nil: chat's chunks ending with
	// [DONE]); end names the event that ends it, in a probe's outcome.
	event namedEvent
	end   string
	// errorType reads an error body that names its error by a type of the dialect's own, in
	// place of the closed code (nil: the closed code only).
	errorType func(body []byte) (string, bool)
	// expect is what a refusal of the closed code is in this dialect ("400 invalid_json" →
	// "400 invalid_request_error" where the envelope names the type; nil: the code itself).
	expect func(closed string) string

	// toolResult names the request of the tools model answering a tool result with tool_choice
	// auto ("" for none); autoChoice is its tool_choice and limit the body member bounding the
	// answer (a cut stream asks for a long one).
	toolResult string
	autoChoice any
	limit      string
	faults     []dialectFault
	refused    []refusal
	// malformed is a body cut short with the canary tokens {c} and {c2}, and the places they go.
	malformed func(echo string) (body, c, c2 string)
	// fixtureUser puts text in the last user turn; fixtureTools makes systemText the system
	// prompt and offers the one tool named toolName, as the audit-tools fixture wants (nil: the
	// dialect has no fixture probes here).
	fixtureUser  func(b builder, body obj, text string)
	fixtureTools func(b builder, body obj, systemText, toolName string)
	// toolCall is what its answer's tool call is called; stop is the body member of stop
	// sequences, left out of the fixture requests (a fixture's reply is not to be cut).
	toolCall, stop string
	// extra lays out the probes only this dialect has.
	extra func(t *traffic, d *dialect, echo string)
}

// dialectFault is a simulated fault a dialect's probe asks for, and what its envelope says.
type dialectFault struct {
	name, header string
	stream       bool
	expect       string
}

// refusal is a body the dialect's decoder refuses: set spoils a valid body.
type refusal struct {
	name, expect string
	set          func(b builder, body obj)
}

// dialects is the table of the chat path's dialects, one row each; its builders and readers are
// in the dialect's own file (build.go for chat).
func dialects() []*dialect {
	return []*dialect{
		{
			name: "chat", route: oneRoute(chatPath, ""), body: builder.chatBody, readTo: "the end",
			extra: (*traffic).buildChat,
		},
		{
			name: "responses", route: oneRoute(responsesPath, ""), body: builder.responsesBody, readTo: "response.completed",
			event: responsesEvent, end: "its final event (response.completed or response.incomplete)",
			toolResult: "a function_call_output (tool_choice auto)", autoChoice: "auto", limit: "max_output_tokens",
			faults: responsesFaults(), refused: responsesRefused(), malformed: responsesMalformed,
			fixtureUser: responsesFixtureUser, fixtureTools: responsesFixtureTools, toolCall: "function_call",
			extra: (*traffic).buildResponses,
		},
		{
			name: "messages", route: oneRoute(messagesPath, "&beta=true"), headers: anthropicHeaders, body: builder.messagesBody, readTo: "message_stop",
			event: anthropicEvent, end: "message_stop", errorType: anthropicErrorType, expect: anthropicExpect,
			limit:  "max_tokens",
			faults: messagesFaults(), refused: messagesRefused(), malformed: messagesMalformed,
			fixtureUser: messagesFixtureUser, fixtureTools: messagesFixtureTools, toolCall: "tool_use", stop: "stop_sequences",
			extra: (*traffic).buildMessages,
		},
		{
			name: "gemini", route: geminiRoute, headers: geminiHeaders, body: builder.geminiBody, readTo: "its usageMetadata",
			event: geminiEvent, end: "the response with usageMetadata", errorType: geminiErrorType, expect: geminiExpect,
			faults: geminiFaults(), refused: geminiRefused(), malformed: geminiMalformed,
			fixtureUser: geminiFixtureUser, fixtureTools: geminiFixtureTools, toolCall: "functionCall",
			extra: (*traffic).buildGemini,
		},
	}
}

// expected is closed as this dialect's envelope says it.
func (d *dialect) expected(closed string) string {
	if d.expect == nil {
		return closed
	}
	return d.expect(closed)
}

// oneRoute is the route of a dialect whose body names the model, with what its clients add to
// the query (Claude Code's ?beta=true).
func oneRoute(path, query string) func(string, bool) (string, string) {
	return func(string, bool) (string, string) { return path, query }
}

// dialectProbe is a POST of the dialect's request for model, streamed or not and offering tools
// or not, that edit changes (nil: none); see request.
func (t *traffic) dialectProbe(d *dialect, name, model string, stream, tools bool, edit func(b builder, body obj), expect string) builder {
	return t.newProbe(name, http.MethodPost, "").request(d, model, stream, tools, edit).expect(expect)
}

// request makes b's probe a POST of the dialect's request to its route (the query of canaries
// and the dialect's own), with every client header, the dialect's own, and no latency.
func (b builder) request(d *dialect, model string, stream, tools bool, edit func(b builder, body obj)) builder {
	path, query := d.route(model, stream)
	b.p.Path = path + b.query() + query
	b.p.dialect = d
	body := d.body(b, model, stream, tools)
	if edit != nil {
		edit(b, body)
	}
	b.jsonBody(body).headers(headerOpts{})
	d.addHeaders(b)
	b.p.Header.Set("X-Mock-Latency", "instant")
	return b
}

func (d *dialect) addHeaders(b builder) {
	if d.headers != nil {
		d.headers(b)
	}
}

// cutModel is the model of a stream the client cuts: a long answer, so the stream is still
// running when the client leaves.
func (t *traffic) cutModel(echo string) string {
	switch {
	case t.slowModel != "":
		return t.slowModel
	case t.hasModel("mock-chat"):
		return "mock-chat"
	}
	return echo
}

// buildDialect lays out the probes of one dialect: every executable model answering, JSON and
// streamed; the tools model answering a tool result; a stream the client cuts; the simulated
// faults; the bodies the decoder refuses and one cut short; then the dialect's own.
func (t *traffic) buildDialect(d *dialect, echo string) {
	// A catalog model's own latency is overridden (the latency paths have probes of their own);
	// its own faults are not, so a model that fails by design (mock-flaky) has no expectation.
	for _, m := range t.models {
		expect := ""
		if m.ID == "mock-echo" || m.ID == "mock-chat" || m.ID == "mock-tools" {
			expect = "200"
		}
		t.dialectProbe(d, d.name+" JSON "+m.ID, m.ID, false, m.Tools, nil, expect)
		if m.Streaming {
			t.dialectProbe(d, d.name+" stream "+m.ID+" (read to "+d.readTo+")", m.ID, true, m.Tools, nil, expect)
		}
	}
	if t.toolsModel != "" && d.toolResult != "" {
		t.dialectProbe(d, d.name+" JSON "+t.toolsModel+" answering "+d.toolResult, t.toolsModel, false, true,
			func(_ builder, body obj) { body["tool_choice"] = d.autoChoice }, "200")
	}
	if d.limit != "" {
		m := t.cutModel(echo)
		b := t.dialectProbe(d, d.name+" stream cut by the client after the first event ("+m+")", m, true, false,
			func(_ builder, body obj) { body[d.limit] = 400 }, "200")
		b.p.Header.Set("X-Mock-Latency", "ttfc=10ms;between=40ms")
		b.p.Mode = readFirstEvent
	}
	for _, f := range d.faults {
		b := t.dialectProbe(d, d.name+" fault "+f.name, echo, f.stream, false, nil, f.expect)
		b.p.Header.Set("X-Mock-Fault", f.header)
	}
	for _, r := range d.refused {
		t.dialectProbe(d, d.name+" refused: "+r.name, echo, false, false, r.set, r.expect)
	}
	if d.malformed != nil {
		body, c, c2 := d.malformed(echo)
		path, _ := d.route(echo, false)
		b := t.newProbe(d.name+" malformed JSON", http.MethodPost, path)
		b.p.Body = []byte(b.fill(body, "{c}", c, "{c2}", c2))
		b.p.dialect = d
		b.headers(headerOpts{})
		d.addHeaders(b)
		b.expect(d.expected("400 invalid_json"))
	}
	if d.extra != nil {
		d.extra(t, d, echo)
	}
}

// buildDialectFixtures adds the dialect's requests of the audit's scope: matching the content
// and tools fixtures (answered in the dialect with the fixture's canary reply), JSON and
// streamed, and missing every fixture of the strict scope.
func (t *traffic) buildDialectFixtures(d *dialect, echo, userC, headerC, systemText, toolName string) {
	req := func(name, model string, stream bool, expect string, edit func(b builder, body obj)) {
		b := t.dialectProbe(d, d.name+" "+name, model, stream, false, func(b builder, body obj) {
			delete(body, d.stop)
			if edit != nil {
				edit(b, body)
			}
		}, expect)
		b.p.Header.Set(headerScope, t.scope)
	}
	for _, stream := range []bool{false, true} {
		kind := "JSON"
		if stream {
			kind = "stream"
		}
		req("fixture match "+fixContent+" (content), "+kind, echo, stream, "200", func(b builder, body obj) {
			d.fixtureUser(b, body, userC)
			b.p.Header.Set("X-Audit-Case", headerC)
		})
		if t.toolsModel != "" {
			req("fixture match "+fixTools+" ("+d.toolCall+"), "+kind, t.toolsModel, stream, "200", func(b builder, body obj) {
				d.fixtureTools(b, body, systemText, toolName)
			})
		}
		req("fixture miss in a strict scope, "+kind, echo, stream, d.expected("400 no_fixture_match"), nil)
	}
}
