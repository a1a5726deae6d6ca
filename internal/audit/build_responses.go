package audit

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// responsesPath is the Responses API (docs/protocol.md): a second dialect of the chat path.
const responsesPath = "/v1/responses"

// responsesInput is a conversation in the Responses dialect with a canary in every place an
// input item can hold text: message items of every role (a string, input_text parts, an earlier
// answer's output_text and refusal parts and item id sent back), a function_call (its id,
// call_id, name and arguments), its function_call_output (output and call_id), an
// item_reference and a reasoning item (id, encrypted_content, summary). The last item is the
// user message mock-echo repeats.
func (b builder) responsesInput() []any {
	callID := b.c("responses function_call call_id / function_call_output call_id")
	return []any{
		obj{"role": "system", "content": b.text("responses input system message (string)")},
		obj{"type": "message", "role": "developer", "content": []any{obj{"type": "input_text", "text": b.text("responses input developer message (input_text)")}}},
		obj{"role": "user", "content": b.text("responses input user message (string)")},
		obj{"type": "message", "role": "assistant", "id": b.c("responses input assistant message item id"), "status": "completed",
			"content": []any{
				obj{"type": "output_text", "text": b.text("responses input assistant output_text (sent back)"), "annotations": []any{}},
				obj{"type": "refusal", "refusal": b.text("responses input assistant refusal part (sent back)")},
			}},
		obj{"type": "function_call", "id": b.c("responses function_call item id"), "call_id": callID, "status": "completed",
			"name":      b.c("responses function_call name"),
			"arguments": `{"` + b.c("responses function_call arguments (key)") + `":"` + b.c("responses function_call arguments (value)") + `"}`},
		obj{"type": "function_call_output", "id": b.c("responses function_call_output item id"), "call_id": callID,
			"output": b.text("responses function_call_output output")},
		obj{"type": "function_call_output", "call_id": callID,
			"output": []any{obj{"type": "input_text", "text": b.text("responses function_call_output output (input_text part)")}}},
		obj{"type": "item_reference", "id": b.c("responses item_reference id")},
		obj{"type": "reasoning", "id": b.c("responses reasoning item id"), "encrypted_content": b.c("responses reasoning encrypted_content") + "==",
			"summary": []any{obj{"type": "summary_text", "text": b.text("responses reasoning summary text")}}},
		obj{"role": "user", "content": []any{obj{"type": "input_text", "text": b.c("responses last user input_text (mock-echo repeats it as output text)") + " please"}}},
	}
}

// responsesTools is one flat function tool with canaries in its name, description and schema
// (property name, description, enum value); it returns the tool's name for tool_choice.
func (b builder) responsesTools() ([]any, string) {
	name := b.c("responses tool name")
	prop := b.c("responses tool parameter property name")
	return []any{obj{"type": "function", "name": name, "description": b.text("responses tool description"), "strict": false,
		"parameters": obj{"type": "object", "required": []any{prop}, "additionalProperties": false,
			"properties": obj{prop: obj{"type": "string", "description": b.text("responses tool parameter description"),
				"enum": []any{b.c("responses tool parameter enum value (mock-tools puts it in the call's arguments)")}}}},
	}}, name
}

// responsesBody is a valid Responses request with canaries in every member that takes text.
func (b builder) responsesBody(model string, stream, tools bool) obj {
	body := obj{
		"model":             model,
		"instructions":      b.text("responses instructions"),
		"input":             b.responsesInput(),
		"user":              b.c("responses user"),
		"safety_identifier": b.c("responses safety_identifier"),
		"prompt_cache_key":  b.c("responses prompt_cache_key"),
		"metadata":          obj{b.c("responses metadata key"): b.c("responses metadata value"), "team": b.c("responses second metadata value")},
		"max_output_tokens": 24,
		"temperature":       0.3,
		"store":             false,
	}
	if stream {
		body["stream"] = true
		body["stream_options"] = obj{"include_obfuscation": false}
	}
	if tools {
		t, name := b.responsesTools()
		body["tools"] = t
		body["tool_choice"] = obj{"type": "function", "name": name}
	}
	return body
}

// responsesFormat is text.format as a json_schema with canaries in its name, description and
// schema.
func (b builder) responsesFormat() obj {
	prop := b.c("responses text.format schema property name")
	return obj{"format": obj{"type": "json_schema", "name": b.c("responses text.format name"), "description": b.text("responses text.format description"),
		"schema": obj{"type": "object", "properties": obj{prop: obj{"type": "string", "description": b.text("responses text.format schema description"),
			"enum": []any{b.c("responses text.format schema enum value")}}}}}, "verbosity": "low"}
}

// buildResponses lays out the probes only the Responses API has (buildDialect lays out the
// rest): a text.format and input as a string, JSON and streamed; a malformed fault header and an
// unknown model; the stored-response routes with a canary id; a request the client gives up on.
func (t *traffic) buildResponses(d *dialect, echo string) {
	format := func(b builder, body obj) { body["text"] = b.responsesFormat() }
	t.dialectProbe(d, "responses JSON with a json_schema text.format", echo, false, false, format, "200")
	t.dialectProbe(d, "responses stream with a json_schema text.format", echo, true, false, format, "200")
	t.dialectProbe(d, "responses JSON with input as a string", echo, false, false, func(b builder, body obj) {
		body["input"] = b.text("responses input (a string)")
	}, "200")
	t.dialectProbe(d, "responses stream with input as a string", echo, true, false, func(b builder, body obj) {
		body["input"] = b.text("responses input (a string, stream)")
	}, "200")
	{
		b := t.dialectProbe(d, "responses malformed X-Mock-Fault", echo, false, false, nil, "400 invalid_simulation_header")
		b.p.Header.Set("X-Mock-Fault", b.c("responses X-Mock-Fault value (unknown fault kind)"))
	}
	{
		b := t.newProbe("responses unknown model name, stream", http.MethodPost, "")
		b.request(d, b.c("responses model name (unknown model)"), true, false, nil).expect("404 model_not_found")
	}

	// The stored-response routes: the mock keeps no responses, and a canary id is not echoed.
	stored := []struct{ name, method, path, body string }{
		{"retrieve", http.MethodGet, "/v1/responses/resp_{c}?include[]=message.output_text.logprobs&starting_after={c2}", ""},
		{"retrieve, stream", http.MethodGet, "/v1/responses/resp_{c}?stream=true&starting_after=3", ""},
		{"delete", http.MethodDelete, "/v1/responses/resp_{c}", ""},
		{"cancel", http.MethodPost, "/v1/responses/resp_{c}/cancel", `{"reason":"{c2}"}`},
		{"input_items", http.MethodGet, "/v1/responses/resp_{c}/input_items?after={c2}&limit=5", ""},
		{"input_tokens", http.MethodPost, "/v1/responses/input_tokens", `{"model":"` + echo + `","input":"{c}","instructions":"{c2}"}`},
		{"compact", http.MethodPost, "/v1/responses/compact", `{"model":"` + echo + `","input":[{"role":"user","content":"{c}"}],"previous_response_id":"resp_{c2}"}`},
	}
	for _, s := range stored {
		b := t.newProbe("responses stored route: "+s.name, s.method, "")
		b.p.Path = b.fill(s.path, "{c}", "stored response route "+s.name+" (path)", "{c2}", "stored response route "+s.name+" (query)")
		if s.body != "" {
			b.p.Body = []byte(b.fill(s.body, "{c}", "stored response route "+s.name+" (body)", "{c2}", "stored response route "+s.name+" (body, second)"))
		}
		b.headers(headerOpts{}).expect("404 not_found")
	}
	{
		b := t.dialectProbe(d, "responses JSON the client gives up on during simulated latency", echo, false, false, nil, "")
		b.p.Header.Set("X-Mock-Latency", "slow")
		b.p.Timeout = 400 * time.Millisecond
	}
}

// responsesFaults are the simulated faults of the Responses probes: before the answer, and in
// the middle of a stream (an error event).
func responsesFaults() []dialectFault {
	return []dialectFault{
		{"stream_error mid-stream", "stream_error;after=3", true, "200"},
		{"stream_cut mid-stream", "stream_cut;after=3", true, "200"},
		{"stream_error, JSON", "stream_error", false, "500 simulated_stream_error"},
		{"rate_limit", "rate_limit;retry_after=2s", false, "429 simulated_rate_limit"},
		{"unavailable, stream", "unavailable", true, "503 simulated_unavailable"},
		{"timeout, stream", "timeout;for=300ms", true, "504 simulated_timeout"},
	}
}

// responsesRefused are the bodies the Responses decoder refuses (state the mock does not keep,
// unknown members, hosted tools with their options, bad item and part types): the error names
// the member, never the client's text.
func responsesRefused() []refusal {
	return []refusal{
		{"previous_response_id", "400 unsupported_parameter", func(b builder, body obj) {
			body["previous_response_id"] = "resp_" + b.c("responses previous_response_id value")
		}},
		{"conversation", "400 unsupported_parameter", func(b builder, body obj) {
			body["conversation"] = obj{"id": "conv_" + b.c("responses conversation id")}
		}},
		{"prompt (a stored prompt template)", "400 unsupported_parameter", func(b builder, body obj) {
			body["prompt"] = obj{"id": "pmpt_" + b.c("responses prompt id"), "variables": obj{b.c("responses prompt variable name"): b.text("responses prompt variable value")}}
		}},
		{"background", "400 unsupported_parameter", func(b builder, body obj) { body["background"] = true }},
		{"unknown top-level member", "400 unknown_parameter", func(b builder, body obj) {
			body[b.ck("responses unknown top-level member name (echoed in param by contract)", kindUnknownField)] = b.text("responses unknown top-level member value")
		}},
		{"unknown member in an input item", "400 unknown_parameter", func(b builder, body obj) {
			in := body["input"].([]any)
			in[4].(obj)[b.ck("responses unknown function_call member name (echoed in param by contract)", kindUnknownField)] = b.text("responses unknown function_call member value")
		}},
		{"unknown member in a tool", "400 unknown_parameter", func(b builder, body obj) {
			tools, _ := b.responsesTools()
			tools[0].(obj)[b.ck("responses unknown tool member name (echoed in param by contract)", kindUnknownField)] = b.text("responses unknown tool member value")
			body["tools"] = tools
		}},
		{"chat's messages on the Responses route", "400 unknown_parameter", func(b builder, body obj) {
			body["messages"] = []any{obj{"role": "user", "content": b.text("chat messages sent to /v1/responses")}}
		}},
		{"web_search tool with its options (accepted, never called)", "200", func(b builder, body obj) {
			body["tools"] = []any{obj{"type": "web_search", "search_context_size": "low", "filters": obj{"allowed_domains": []any{b.c("responses web_search allowed domain") + ".example"}},
				"user_location": obj{"type": "approximate", "city": b.c("responses web_search user_location city"), "region": b.c("responses web_search user_location region")}}}
		}},
		{"hosted tool mcp with a server URL and credentials", "400 unsupported_parameter", func(b builder, body obj) {
			body["tools"] = []any{obj{"type": "mcp", "server_label": b.c("responses mcp server_label"), "server_url": "https://" + b.c("responses mcp server_url host") + ".example/mcp",
				"authorization": b.c("responses mcp authorization token"), "headers": obj{"Authorization": "Bearer " + b.c("responses mcp headers Authorization")},
				"allowed_tools": []any{b.c("responses mcp allowed tool")}}}
		}},
		{"hosted tool file_search with vector stores", "400 unsupported_parameter", func(b builder, body obj) {
			body["tools"] = []any{obj{"type": "file_search", "vector_store_ids": []any{"vs_" + b.c("responses file_search vector_store_id")}}}
		}},
		{"tool of an unknown type", "400 invalid_value", func(b builder, body obj) {
			body["tools"] = []any{obj{"type": b.c("responses unknown tool type"), "name": b.c("responses name of a tool of an unknown type")}}
		}},
		{"input item of an unknown type", "400 invalid_value", func(b builder, body obj) {
			body["input"] = []any{obj{"type": b.c("responses unknown input item type"), "content": b.text("responses content of an unknown input item")}}
		}},
		{"hosted input item (web_search_call)", "400 unsupported_parameter", func(b builder, body obj) {
			body["input"] = []any{obj{"type": "web_search_call", "id": "ws_" + b.c("responses web_search_call id"), "status": "completed",
				"action": obj{"type": "search", "query": b.text("responses web_search_call query")}}}
		}},
		{"content part of an unknown type", "400 invalid_value", func(b builder, body obj) {
			body["input"] = []any{obj{"role": "user", "content": []any{obj{"type": b.c("responses unknown content part type"), "text": b.text("responses text of an unknown part")}}}}
		}},
		{"input_image part", "400 unsupported_parameter", func(b builder, body obj) {
			body["input"] = []any{obj{"role": "user", "content": []any{obj{"type": "input_image", "image_url": "https://" + b.c("responses input_image URL host") + ".example/a.png"}}}}
		}},
		{"message role unknown", "400 invalid_value", func(b builder, body obj) {
			body["input"] = []any{obj{"role": b.c("responses message role"), "content": b.text("responses content of a message with an unknown role")}}
		}},
		{"tool_choice naming no tool", "400 invalid_value", func(b builder, body obj) {
			tools, _ := b.responsesTools()
			body["tools"] = tools
			body["tool_choice"] = obj{"type": "function", "name": b.c("responses tool_choice name (no such tool)")}
		}},
		{"text.format type unknown", "400 invalid_value", func(b builder, body obj) {
			body["text"] = obj{"format": obj{"type": b.c("responses text.format type"), "name": b.c("responses text.format name (unknown type)")}}
		}},
		{"metadata value too long", "400 invalid_value", func(b builder, body obj) {
			body["metadata"] = obj{b.c("responses metadata key (value too long)"): b.c("responses metadata value too long") + strings.Repeat("v", 600)}
		}},
		{"max_output_tokens below 16", "400 invalid_value", func(b builder, body obj) { body["max_output_tokens"] = 3 }},
		{"missing input", "400 missing_required_parameter", func(b builder, body obj) { delete(body, "input") }},
	}
}

func responsesMalformed(echo string) (string, string, string) {
	return `{"model":"` + echo + `","instructions":"{c}","input":[{"role":"user","content":"{c2} cut short`,
		"responses malformed JSON (instructions)", "responses malformed JSON (input)"
}

// responsesFixtureUser puts text in the last input item, the user message.
func responsesFixtureUser(b builder, body obj, text string) {
	in := body["input"].([]any)
	in[len(in)-1].(obj)["content"] = []any{obj{"type": "input_text", "text": b.c("responses last user input_text, before the fixture's text") + " " + text + " please"}}
}

// responsesFixtureTools makes the first input item, not instructions, the system message: the
// fixture's condition is on the system message, and instructions come first.
func responsesFixtureTools(b builder, body obj, systemText, toolName string) {
	delete(body, "instructions")
	body["input"].([]any)[0].(obj)["content"] = systemText
	body["tools"] = []any{obj{"type": "function", "name": toolName, "description": b.text("responses tool description (fixture request)"),
		"parameters": obj{"type": "object", "properties": obj{"query": obj{"type": "string", "description": b.text("responses tool parameter description (fixture request)")}}, "required": []any{"query"}}}}
	body["tool_choice"] = "auto"
}

// responsesEvent reads one event of a Responses stream: named events ending with
// response.completed or response.incomplete and no [DONE]. A failure is an error event
// ({"type":"error","code":…,"message":…}) or a response.failed, named by its code when it has
// one.
func responsesEvent(data []byte) (end, failed bool, code string, err error) {
	var head struct {
		Type string `json:"type"`
		Code any    `json:"code"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return false, false, "", err
	}
	if failed = head.Type == "error" || head.Type == "response.failed"; failed {
		code = head.Type
		if c, ok := head.Code.(string); ok {
			code = c
		}
	}
	return head.Type == "response.completed" || head.Type == "response.incomplete", failed, code, nil
}
