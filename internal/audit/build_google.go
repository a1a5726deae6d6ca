package audit

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// Google's Gemini API (docs/protocol.md): the chat path's fourth dialect, whose route names the
// model and the method, and whose clients send the key in x-goog-api-key.

// geminiRoute is the route of a Gemini request for model: generateContent, or
// streamGenerateContent with alt=sse.
func geminiRoute(model string, stream bool) (string, string) {
	if stream {
		return "/v1beta/models/" + model + ":streamGenerateContent", "&alt=sse"
	}
	return "/v1beta/models/" + model + ":generateContent", ""
}

// geminiContents is a conversation in Gemini's dialect with a canary in every place a content can
// hold text: user text parts, inline data, a file's URI, a thought sent back, the model's text and
// function call (name, args), the function response answering it, and the last user text, which
// mock-echo repeats.
func (b builder) geminiContents() []any {
	name := b.c("gemini functionCall name / functionResponse name")
	return []any{
		obj{"role": "user", "parts": []any{
			obj{"text": b.text("gemini user text part")},
			obj{"inlineData": obj{"mimeType": "image/png", "data": base64.StdEncoding.EncodeToString([]byte(b.c("gemini inlineData data")))}},
			obj{"fileData": obj{"mimeType": "application/pdf", "fileUri": b.c("gemini fileData fileUri")}},
		}},
		obj{"role": "model", "parts": []any{
			obj{"text": b.text("gemini thought sent back"), "thought": true},
			obj{"text": b.text("gemini model text")},
			obj{"functionCall": obj{"name": name, "args": obj{b.c("gemini functionCall args (key)"): b.c("gemini functionCall args (value)")}},
				"thoughtSignature": "skip_thought_signature_validator"},
		}},
		obj{"role": "user", "parts": []any{
			obj{"functionResponse": obj{"name": name, "response": obj{"result": b.text("gemini functionResponse response")}}},
			obj{"text": b.c("gemini last user text (mock-echo repeats it)") + " please"},
		}},
	}
}

// geminiTools is one function declaration with canaries in its name, description and schema (in
// Google's OpenAPI subset); it returns the function's name.
func (b builder) geminiTools() ([]any, string) {
	name := b.c("gemini function declaration name")
	prop := b.c("gemini parameters property name")
	return []any{obj{"functionDeclarations": []any{obj{
		"name": name, "description": b.text("gemini function declaration description"),
		"parameters": obj{"type": "OBJECT", "required": []any{prop}, "propertyOrdering": []any{prop},
			"properties": obj{prop: obj{"type": "STRING", "description": b.text("gemini parameters description"),
				"enum": []any{b.c("gemini parameters enum value (mock-tools puts it in the call's args)")}}}},
	}}}}, name
}

// geminiBody is a valid Gemini request with canaries in every member that takes text (the model
// and the method are the route's).
func (b builder) geminiBody(_ string, _, tools bool) obj {
	body := obj{
		"systemInstruction": obj{"role": "user", "parts": []any{obj{"text": b.text("gemini systemInstruction")}}},
		"contents":          b.geminiContents(),
		"generationConfig": obj{"maxOutputTokens": 24, "temperature": 0.3, "stopSequences": []any{b.c("gemini stop sequence")},
			"thinkingConfig": obj{"includeThoughts": true}},
		"safetySettings": []any{obj{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}},
		"labels":         obj{"k": b.c("gemini label value")},
	}
	if tools {
		t, name := b.geminiTools()
		body["tools"] = t
		body["toolConfig"] = obj{"functionCallingConfig": obj{"mode": "ANY", "allowedFunctionNames": []any{name}}}
	}
	return body
}

// geminiHeaders adds what a Gemini client sends beside the headers every probe carries: its key,
// and its SDK's identity.
func geminiHeaders(b builder) {
	b.p.Header.Set("X-Goog-Api-Key", b.c("x-goog-api-key header"))
	b.p.Header.Set("X-Goog-Api-Client", "google-genai-sdk/1.30.0 "+b.c("x-goog-api-client header"))
}

// geminiExpect is a refusal of the closed code as Google's envelope says it: by the status and
// Google's status for it (in lower case, as the report prints codes).
func geminiExpect(closed string) string {
	status, _, _ := strings.Cut(closed, " ")
	typ, ok := map[string]string{"400": "invalid_argument", "401": "unauthenticated", "403": "permission_denied",
		"404": "not_found", "429": "resource_exhausted", "500": "internal", "503": "unavailable", "504": "deadline_exceeded"}[status]
	if !ok {
		return closed
	}
	return status + " " + typ
}

// buildGemini lays out the probes only the Gemini dialect has (buildDialect lays out the rest):
// countTokens, the tools model answering a function response, a stream the client cuts, the JSON
// array, the model lists in Google's shape, a model and a method in the path it does not serve.
func (t *traffic) buildGemini(d *dialect, echo string) {
	{
		b := t.newProbe("gemini countTokens", http.MethodPost, "")
		b.p.Path = "/v1beta/models/" + echo + ":countTokens" + b.query()
		b.p.dialect = d
		b.jsonBody(obj{"generateContentRequest": b.geminiBody(echo, false, true)}).headers(headerOpts{})
		geminiHeaders(b)
		b.expect("200")
	}
	if t.toolsModel != "" {
		b := t.newProbe("gemini JSON "+t.toolsModel+" answering a functionResponse (mode AUTO)", http.MethodPost, "")
		b.p.Path = "/v1beta/models/" + t.toolsModel + ":generateContent" + b.query()
		b.p.dialect = d
		body := b.geminiBody(t.toolsModel, false, true)
		body["toolConfig"] = obj{"functionCallingConfig": obj{"mode": "AUTO"}}
		b.jsonBody(body).headers(headerOpts{})
		geminiHeaders(b)
		b.expect("200")
	}
	{
		m := t.cutModel(echo)
		b := t.dialectProbe(d, "gemini stream cut by the client after the first event ("+m+")", m, true, false,
			func(_ builder, body obj) { body["generationConfig"].(obj)["maxOutputTokens"] = 400 }, "200")
		b.p.Header.Set("X-Mock-Latency", "ttfc=10ms;between=40ms")
		b.p.Mode = readFirstEvent
	}
	{
		b := t.newProbe("gemini streamGenerateContent without alt=sse (the JSON array)", http.MethodPost, "")
		b.p.Path = "/v1/models/" + echo + ":streamGenerateContent" + b.query()
		b.p.dialect = d
		b.jsonBody(b.geminiBody(echo, false, false)).headers(headerOpts{})
		geminiHeaders(b)
		b.expect("200")
	}
	for _, path := range []string{"/v1beta/models", "/v1/models", "/v1beta/models/{c}"} {
		b := t.newProbe("models in Google's shape: "+path, http.MethodGet, "")
		b.p.Path = b.fill(path, "{c}", "model id in the path (Gemini request)") + "?pageToken=" + b.c("gemini pageToken")
		b.p.dialect = d
		b.headers(headerOpts{})
		geminiHeaders(b)
		if strings.Contains(path, "{c}") {
			b.expect("404 not_found")
		} else {
			b.expect("200")
		}
	}
	if t.hasModel("mock-reasoning") {
		// A thinking model checks the signatures sent back (others ignore them).
		t.dialectProbe(d, "gemini refused: a forged thoughtSignature (mock-reasoning)", "mock-reasoning", false, false, func(b builder, body obj) {
			parts := body["contents"].([]any)[1].(obj)["parts"].([]any)
			parts[2].(obj)["thoughtSignature"] = base64.StdEncoding.EncodeToString([]byte(b.c("gemini forged thoughtSignature")))
		}, "400 invalid_argument")
	}
	{
		b := t.newProbe("gemini unknown model in the path", http.MethodPost, "")
		b.p.Path = "/v1beta/models/" + b.c("gemini model in the path (unknown model)") + ":generateContent"
		b.p.dialect = d
		b.jsonBody(b.geminiBody(echo, false, false)).headers(headerOpts{})
		geminiHeaders(b)
		b.expect("404 not_found")
	}
	{
		b := t.newProbe("gemini a method it does not serve", http.MethodPost, "")
		b.p.Path = "/v1beta/models/" + echo + ":" + b.c("gemini method in the path")
		b.p.dialect = d
		b.jsonBody(b.geminiBody(echo, false, false)).headers(headerOpts{})
		geminiHeaders(b)
		b.expect("404 not_found")
	}
}

// geminiFaults are the simulated faults of the Gemini probes, as Google's envelope names them.
func geminiFaults() []dialectFault {
	return []dialectFault{
		{"stream_error mid-stream", "stream_error;after=3", true, "200"},
		{"stream_cut mid-stream", "stream_cut;after=3", true, "200"},
		{"rate_limit", "rate_limit;retry_after=2s", false, "429 resource_exhausted"},
		{"unavailable", "unavailable", true, "503 unavailable"},
		{"server_error", "server_error", false, "500 internal"},
		{"timeout", "timeout;for=300ms", false, "504 deadline_exceeded"},
	}
}

// geminiRefused are the bodies the Gemini decoder refuses.
func geminiRefused() []refusal {
	return []refusal{
		{"unknown top-level member", "400 invalid_argument", func(b builder, body obj) {
			body[b.ck("gemini unknown top-level member name (echoed in the message by contract)", kindUnknownField)] = b.text("gemini unknown top-level member value")
		}},
		{"unknown generationConfig member", "400 invalid_argument", func(b builder, body obj) {
			body["generationConfig"].(obj)[b.ck("gemini unknown generationConfig member (echoed in the message by contract)", kindUnknownField)] = b.c("gemini unknown generationConfig value")
		}},
		{"a part with two data members", "400 invalid_argument", func(b builder, body obj) {
			body["contents"] = []any{obj{"role": "user", "parts": []any{obj{"text": b.text("gemini text of a part with two data members"),
				"fileData": obj{"mimeType": "text/plain", "fileUri": b.c("gemini fileUri of a part with two data members")}}}}}
		}},
		{"functionResponse answering no call", "400 invalid_argument", func(b builder, body obj) {
			body["contents"] = []any{obj{"role": "user", "parts": []any{obj{"functionResponse": obj{"name": b.c("gemini functionResponse name of no call"),
				"response": obj{"r": b.text("gemini orphan functionResponse")}}}}}}
		}},
		{"Google's search tool", "400 invalid_argument", func(b builder, body obj) {
			body["tools"] = []any{obj{"googleSearch": obj{}}}
		}},
		{"temperature above 2", "400 invalid_argument", func(b builder, body obj) { body["generationConfig"].(obj)["temperature"] = 2.5 }},
	}
}

func geminiMalformed(string) (string, string, string) {
	return `{"systemInstruction":{"parts":[{"text":"{c}"}]},"contents":[{"role":"user","parts":[{"text":"{c2} cut short`,
		"gemini malformed JSON (systemInstruction)", "gemini malformed JSON (contents)"
}

// geminiFixtureUser puts text in a part of the last user content, after its function response.
func geminiFixtureUser(b builder, body obj, text string) {
	delete(body["generationConfig"].(obj), "stopSequences") // a fixture's reply is not to be cut
	turns := body["contents"].([]any)
	last := turns[len(turns)-1].(obj)
	last["parts"] = []any{last["parts"].([]any)[0],
		obj{"text": b.c("gemini last user text, before the fixture's text") + " " + text + " please"}}
}

// geminiFixtureTools makes systemText the system instruction and offers the one function named
// toolName, as the fixture's conditions want.
func geminiFixtureTools(b builder, body obj, systemText, toolName string) {
	delete(body["generationConfig"].(obj), "stopSequences")
	body["systemInstruction"] = obj{"parts": []any{obj{"text": systemText}}}
	body["contents"] = body["contents"].([]any)[:1]
	body["tools"] = []any{obj{"functionDeclarations": []any{obj{"name": toolName, "description": b.text("gemini function description (fixture request)"),
		"parametersJsonSchema": obj{"type": "object", "properties": obj{"query": obj{"type": "string", "description": b.text("gemini parameters description (fixture request)")}}, "required": []any{"query"}}}}}}
	body["toolConfig"] = obj{"functionCallingConfig": obj{"mode": "AUTO"}}
}

// geminiEvent reads one event of a Gemini stream: data lines only, ending with the response that
// carries the usage (and the last finishReason), no [DONE]. A failure is a data line holding the
// error envelope, named by its status.
func geminiEvent(data []byte) (end, failed bool, code string, err error) {
	var r struct {
		Usage json.RawMessage `json:"usageMetadata"`
		Error *struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return false, false, "", err
	}
	if r.Error != nil {
		return false, true, strings.ToLower(r.Error.Status), nil
	}
	return len(r.Usage) > 0, false, "", nil
}

// geminiErrorType is a Gemini error body's status in lower case: what a Gemini probe's
// expectation names in place of the closed code, which Google's envelope does not carry.
func geminiErrorType(body []byte) (string, bool) {
	var env struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error.Status == "" {
		return "", false
	}
	return strings.ToLower(env.Error.Status), true
}
