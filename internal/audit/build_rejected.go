package audit

import (
	"net/http"
	"strings"
)

// buildRejected lays out the probes the service must refuse: fields the decoder rejects,
// bodies that are not a request, paths and methods a client chooses, headers it must not keep.
func (t *traffic) buildRejected(echo string) {
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
		{"unsupported surface with a path", "POST", "/v1/files/{c}", `{"purpose":"{c2}"}`, "404 unsupported_surface"},
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
		// A DNS name neither loopback nor allowed is refused on any listener (DNS rebinding).
		b := t.newProbe("Host header with a canary", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{})
		b.p.Host = b.c("Host header") + ".invalid"
		b.expect("403 host_not_allowed")
	}
	{
		// Sec-Fetch-Site is a browser's: cross-site is refused, any other value served.
		b := t.newProbe("Sec-Fetch-Site with a canary", http.MethodGet, "/v1/models")
		b.headers(headerOpts{})
		b.p.Header.Set("Sec-Fetch-Site", b.c("Sec-Fetch-Site header"))
		b.expect("200")
		b = t.newProbe("Sec-Fetch-Site cross-site", http.MethodGet, "/v1/models")
		b.headers(headerOpts{})
		b.p.Header.Set("Sec-Fetch-Site", "cross-site")
		b.expect("403 origin_not_allowed")
	}
	{
		// What a web page on another origin sends: refused, reads included.
		b := t.newProbe("Origin header with a canary", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{})
		b.p.Header.Set("Origin", "https://"+b.c("Origin header")+".example")
		b.expect("403 origin_not_allowed")
		b = t.newProbe("Origin header with a canary on a read", http.MethodGet, "/v1/models")
		b.headers(headerOpts{})
		b.p.Header.Set("Origin", "http://"+b.c("Origin header (read)")+".example:8080")
		b.expect("403 origin_not_allowed")
	}
	{
		// A browser sends a body without Content-Type cross-origin with no preflight: never JSON.
		b := t.newProbe("body without Content-Type", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{})
		b.p.Header.Del("Content-Type")
		b.expect("415 unsupported_media_type")
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
