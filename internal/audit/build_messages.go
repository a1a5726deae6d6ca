package audit

import (
	"encoding/json"
	"net/http"
	"strings"
)

// messagesPath is Anthropic's Messages API (docs/protocol.md): the chat path's third dialect.
const messagesPath = "/v1/messages"

// messagesTurns is a conversation in Anthropic's dialect with a canary in every place a turn can
// hold text: user text blocks, an image's data, a document's title, context and data, Claude
// Code's system turn, an assistant's thinking (and signature), text and tool_use (id, name,
// input), the tool_result answering it (its content as a string and as blocks), and the last
// user turn, which mock-echo repeats.
func (b builder) messagesTurns() []any {
	id := b.c("messages tool_use id / tool_result tool_use_id")
	return []any{
		obj{"role": "user", "content": []any{
			obj{"type": "text", "text": b.text("messages user text block"), "cache_control": obj{"type": "ephemeral"}},
			obj{"type": "image", "source": obj{"type": "base64", "media_type": "image/png", "data": b.c("messages image data")}},
			obj{"type": "document", "title": b.c("messages document title"), "context": b.text("messages document context"),
				"source": obj{"type": "text", "media_type": "text/plain", "data": b.text("messages document data")}},
		}},
		obj{"role": "system", "content": b.text("messages system turn (Claude Code's)")},
		obj{"role": "assistant", "content": []any{
			obj{"type": "thinking", "thinking": b.text("messages assistant thinking"), "signature": b.c("messages thinking signature")},
			obj{"type": "text", "text": b.text("messages assistant text")},
			obj{"type": "tool_use", "id": id, "name": b.c("messages tool_use name"),
				"input": obj{b.c("messages tool_use input (key)"): b.c("messages tool_use input (value)")}},
		}},
		obj{"role": "user", "content": []any{
			obj{"type": "tool_result", "tool_use_id": id, "is_error": true,
				"content": []any{obj{"type": "text", "text": b.text("messages tool_result content (text block)")}}},
			obj{"type": "text", "text": b.c("messages last user text (mock-echo repeats it)") + " please"},
		}},
	}
}

// messagesTools is one custom tool with canaries in its name, description and schema, and a
// server tool with one in its name; it returns the custom tool's name for tool_choice.
func (b builder) messagesTools() ([]any, string) {
	name := b.c("messages tool name")
	prop := b.c("messages tool input_schema property name")
	return []any{
		obj{"name": name, "description": b.text("messages tool description"), "defer_loading": false, "cache_control": obj{"type": "ephemeral"},
			"input_schema": obj{"type": "object", "required": []any{prop},
				"properties": obj{prop: obj{"type": "string", "description": b.text("messages tool input_schema description"),
					"enum": []any{b.c("messages tool enum value (mock-tools puts it in the call's input)")}}}}},
		obj{"type": "web_search_20250305", "name": b.c("messages server tool name"), "max_uses": 1},
	}, name
}

// messagesBody is a valid Messages request with canaries in every member that takes text.
func (b builder) messagesBody(model string, stream, tools bool) obj {
	body := obj{
		"model":          model,
		"max_tokens":     24,
		"system":         []any{obj{"type": "text", "text": b.text("messages system block"), "cache_control": obj{"type": "ephemeral"}}},
		"messages":       b.messagesTurns(),
		"metadata":       obj{"user_id": b.c("messages metadata.user_id")},
		"stop_sequences": []any{b.c("messages stop sequence")},
		"temperature":    0.3,
		"thinking":       obj{"type": "adaptive", "display": "omitted"},
		"output_config":  obj{"effort": "high"},
	}
	if stream {
		body["stream"] = true
	}
	if tools {
		t, name := b.messagesTools()
		body["tools"] = t
		body["tool_choice"] = obj{"type": "tool", "name": name}
	}
	return body
}

// anthropicHeaders adds what an Anthropic client sends beside the headers every probe carries
// (x-api-key among them): the version, which any value satisfies, and the beta flags.
func anthropicHeaders(b builder) {
	b.p.Header.Set("Anthropic-Version", b.c("anthropic-version header"))
	b.p.Header.Set("Anthropic-Beta", "claude-code-20250219,"+b.c("anthropic-beta header"))
}

// anthropicExpect is a refusal of the closed code as Anthropic's envelope says it: by the
// status and the error type Anthropic gives that status, as no closed code is in its envelope.
func anthropicExpect(closed string) string {
	status, _, _ := strings.Cut(closed, " ")
	typ, ok := map[string]string{"400": "invalid_request_error", "401": "authentication_error", "403": "permission_error",
		"404": "not_found_error", "429": "rate_limit_error", "500": "api_error"}[status]
	if !ok {
		return closed
	}
	return status + " " + typ
}

// buildMessages lays out the probes only the Messages dialect has (buildDialect lays out the
// rest): count_tokens; the models list in Anthropic's shape; a request without
// anthropic-version; the batches surface. Anthropic's errors carry their type, not the closed
// code, so a refusal is expected by its status and type.
func (t *traffic) buildMessages(d *dialect, echo string) {
	{
		b := t.newProbe("messages count_tokens", http.MethodPost, messagesPath+"/count_tokens")
		b.p.dialect = d
		body := b.messagesBody(echo, false, true)
		for _, k := range []string{"max_tokens", "stop_sequences", "metadata", "temperature"} {
			delete(body, k)
		}
		b.jsonBody(body).headers(headerOpts{})
		anthropicHeaders(b)
		b.expect("200")
	}
	for _, path := range []string{"/v1/models", "/v1/models/{c}"} {
		b := t.newProbe("models in Anthropic's shape: "+path, http.MethodGet, "")
		b.p.Path = b.fill(path, "{c}", "model id in the path (Anthropic request)")
		b.p.dialect = d
		b.headers(headerOpts{})
		anthropicHeaders(b)
		if path == "/v1/models" {
			b.expect("200")
		} else {
			b.expect("404 not_found_error")
		}
	}
	{
		b := t.dialectProbe(d, "messages without anthropic-version", echo, false, false, nil, "400 invalid_request_error")
		b.p.Header.Del("Anthropic-Version")
	}
	{
		b := t.newProbe("messages batches (unsupported surface)", http.MethodPost, "")
		b.p.Path = b.fill("/v1/messages/batches/{c}", "{c}", "messages batch id (path)")
		b.p.dialect = d
		b.jsonBody(obj{"requests": []any{obj{"custom_id": b.c("messages batch custom_id"), "params": b.messagesBody(echo, false, false)}}}).headers(headerOpts{})
		anthropicHeaders(b)
		b.expect("404 not_found_error")
	}
}

// messagesFaults are the simulated faults of the Messages probes, as Anthropic's envelope names
// them.
func messagesFaults() []dialectFault {
	return []dialectFault{
		{"stream_error mid-stream", "stream_error;after=3", true, "200"},
		{"stream_cut mid-stream", "stream_cut;after=3", true, "200"},
		{"rate_limit", "rate_limit;retry_after=2s", false, "429 rate_limit_error"},
		{"unavailable (Anthropic's overload)", "unavailable", true, "529 overloaded_error"},
		{"server_error", "server_error", false, "500 api_error"},
	}
}

// messagesRefused are the bodies the Messages decoder refuses.
func messagesRefused() []refusal {
	return []refusal{
		{"unknown top-level member", "400 invalid_request_error", func(b builder, body obj) {
			body[b.ck("messages unknown top-level member name (echoed in the message by contract)", kindUnknownField)] = b.text("messages unknown top-level member value")
		}},
		{"block of an unknown type", "400 invalid_request_error", func(b builder, body obj) {
			body["messages"] = []any{obj{"role": "user", "content": []any{obj{"type": b.c("messages unknown block type"), "text": b.text("messages text of an unknown block")}}}}
		}},
		{"tool_result answering no call", "400 invalid_request_error", func(b builder, body obj) {
			body["messages"] = []any{obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": b.c("messages tool_result id of no call"), "content": b.text("messages orphan tool_result")}}}}
		}},
		{"tool_choice requiring a server tool", "400 invalid_request_error", func(b builder, body obj) {
			tools, _ := b.messagesTools()
			body["tools"] = tools
			body["tool_choice"] = obj{"type": "tool", "name": tools[1].(obj)["name"]}
		}},
		{"metadata beyond user_id", "400 invalid_request_error", func(b builder, body obj) {
			body["metadata"] = obj{b.ck("messages metadata key (echoed in the message by contract)", kindUnknownField): b.c("messages metadata value")}
		}},
		{"temperature above 1", "400 invalid_request_error", func(b builder, body obj) { body["temperature"] = 1.5 }},
		{"missing max_tokens", "400 invalid_request_error", func(b builder, body obj) { delete(body, "max_tokens") }},
		{"unknown model", "404 not_found_error", func(b builder, body obj) { body["model"] = b.c("messages model name (unknown model)") }},
	}
}

func messagesMalformed(echo string) (string, string, string) {
	return `{"model":"` + echo + `","max_tokens":8,"system":"{c}","messages":[{"role":"user","content":"{c2} cut short`,
		"messages malformed JSON (system)", "messages malformed JSON (messages)"
}

// messagesFixtureUser puts text in a block of the last user turn, after its first.
func messagesFixtureUser(b builder, body obj, text string) {
	turns := body["messages"].([]any)
	last := turns[len(turns)-1].(obj)
	last["content"] = []any{last["content"].([]any)[0],
		obj{"type": "text", "text": b.c("messages last user text, before the fixture's text") + " " + text + " please"}}
}

// messagesFixtureTools makes systemText the system prompt (and leaves out Claude Code's system
// turn): the fixture's condition is on the system message.
func messagesFixtureTools(b builder, body obj, systemText, toolName string) {
	body["system"] = systemText
	body["messages"] = body["messages"].([]any)[:1]
	body["tools"] = []any{obj{"name": toolName, "description": b.text("messages tool description (fixture request)"),
		"input_schema": obj{"type": "object", "properties": obj{"query": obj{"type": "string", "description": b.text("messages tool input_schema description (fixture request)")}}, "required": []any{"query"}}}}
	body["tool_choice"] = obj{"type": "auto"}
}

// anthropicEvent reads one event of a Messages stream: named events ending with message_stop
// and no [DONE]. A failure is an error event ({"type":"error","error":{"type":…,"message":…}}),
// named by its error's type.
func anthropicEvent(data []byte) (end, failed bool, code string, err error) {
	var head struct {
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return false, false, "", err
	}
	return head.Type == "message_stop", head.Type == "error", head.Error.Type, nil
}

// anthropicErrorType is an Anthropic error body's error.type: what an Anthropic probe's
// expectation names in place of the closed code, which Anthropic's envelope does not carry.
func anthropicErrorType(body []byte) (string, bool) {
	var env struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error.Type == "" {
		return "", false
	}
	return env.Error.Type, true
}
