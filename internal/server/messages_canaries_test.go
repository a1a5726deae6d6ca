package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
)

// canaryCall is TestCanaries' call: one request to send, with its headers.
type canaryCall = struct {
	name, method, path, body string
	disconnect               bool
	header                   []string
}

// anthropicCanaryCalls are TestCanaries' calls of the Anthropic Messages dialect: canaries in
// every place an Anthropic client puts text — the system prompt, the turns' blocks (text, tool
// use, tool results, thinking, images, documents), Claude Code's system turn, the tools,
// metadata, stop sequences, the beta and version headers, x-api-key — on every path: JSON,
// stream, count_tokens, a disconnect, a fault, a fixture's scope, and the bodies it refuses.
func anthropicCanaryCalls(c *canaries, q string, scope []string, contains, caseHeader string) []canaryCall {
	head := func(extra ...string) []string {
		return append([]string{"Anthropic-Version", c.at("anthropic-version header"), "Anthropic-Beta", c.at("anthropic-beta header"),
			"X-Api-Key", c.at("x-api-key header")}, extra...)
	}
	conv := func() string {
		id := c.at("anthropic tool_use id") // the result answers the call: one id for both
		return fmt.Sprintf(`"system":[{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}],"messages":[
			{"role":"user","content":[{"type":"text","text":%q},{"type":"image","source":{"type":"base64","media_type":"image/png","data":%q}},
				{"type":"document","title":%q,"source":{"type":"text","media_type":"text/plain","data":%q}}]},
			{"role":"system","content":%q},
			{"role":"assistant","content":[{"type":"thinking","thinking":%q,"signature":%q},{"type":"text","text":%q},
				{"type":"tool_use","id":%q,"name":%q,"input":{"q":%q}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":[{"type":"text","text":%q}],"is_error":true},{"type":"text","text":%q}]}],
			"metadata":{"user_id":%q},"stop_sequences":[%q]`,
			c.at("anthropic system"), c.at("anthropic user text"), c.at("anthropic image data"), c.at("anthropic document title"),
			c.at("anthropic document data"), c.at("claude code system turn"), c.at("anthropic thinking"), c.at("anthropic signature"),
			c.at("anthropic assistant text"), id, c.at("anthropic tool_use name"), c.at("anthropic tool_use input"),
			id, c.at("anthropic tool result"), c.at("anthropic last user text"),
			c.at("anthropic metadata user_id"), c.at("anthropic stop sequence"))
	}
	serverTool := c.at("anthropic server tool name")
	tools := func() string {
		return fmt.Sprintf(`"tools":[{"name":%q,"description":%q,"input_schema":{"type":"object","properties":{"p":{"type":"string","enum":[%q]}},"required":["p"]},"defer_loading":true},
			{"type":"web_search_20250305","name":%q}]`,
			c.at("anthropic tool name"), c.at("anthropic tool description"), c.at("anthropic tool enum"), serverTool)
	}
	answered := func(model, extra string) string {
		return `{"model":"` + model + `","max_tokens":64,` + conv() + `,` + tools() + extra + `}`
	}
	scoped := func(last, extra string) string {
		return fmt.Sprintf(`{"model":"mock-tools","max_tokens":64,"messages":[{"role":"user","content":%q}],%s%s}`, last, tools(), extra)
	}
	const path = "/v1/messages"
	return []canaryCall{
		{name: "messages json", method: "POST", path: path + q, body: answered("mock-echo", ""), header: head()},
		{name: "messages stream", method: "POST", path: path + q, body: answered("mock-echo", `,"stream":true`), header: head()},
		{name: "messages tools", method: "POST", path: path + q, body: scoped(c.at("anthropic tools user text"), ""), header: head()},
		{name: "messages tools stream", method: "POST", path: path + q, body: scoped("x", `,"stream":true`), header: head()},
		{name: "messages stream fault", method: "POST", path: path + q, body: answered("mock-echo", `,"stream":true`), header: head("X-Mock-Fault", "stream_error;after=3")},
		{name: "messages overloaded", method: "POST", path: path + q, body: answered("mock-echo", ""), header: head("X-Mock-Fault", "unavailable")},
		{name: "messages disconnect", method: "POST", path: path + q, body: answered("mock-slow", `,"stream":true`), header: head(), disconnect: true},
		{name: "messages count_tokens", method: "POST", path: path + "/count_tokens" + q, body: `{"model":"mock-echo",` + tools() + `,"messages":[{"role":"user","content":` + fmt.Sprintf("%q", c.at("count_tokens text")) + `}]}`, header: head()},
		{name: "messages no version", method: "POST", path: path + q, body: answered("mock-echo", ""), header: []string{"X-Api-Key", c.at("x-api-key, no version")}},
		{name: "messages unknown field", method: "POST", path: path, body: `{"model":"mock-echo","max_tokens":8,"messages":[{"role":"user","content":"x"}],"cnry_field":` + fmt.Sprintf("%q", c.at("anthropic unknown field value")) + `}`, header: head()},
		{name: "messages unknown model", method: "POST", path: path, body: `{"model":` + fmt.Sprintf("%q", c.at("anthropic model name")) + `,"max_tokens":8,"messages":[{"role":"user","content":"x"}]}`, header: head()},
		{name: "messages bad block", method: "POST", path: path, body: `{"model":"mock-echo","max_tokens":8,"messages":[{"role":"user","content":[{"type":` + fmt.Sprintf("%q", c.at("anthropic block type")) + `}]}]}`, header: head()},
		{name: "messages server tool required", method: "POST", path: path, body: scoped("x", `,"tool_choice":{"type":"tool","name":`+fmt.Sprintf("%q", serverTool)+`}`), header: head()},
		{name: "messages batches", method: "POST", path: path + "/batches/" + c.at("batch id") + q, body: `{}`, header: head()},
		{name: "anthropic models", method: "GET", path: "/v1/models" + q, header: head()},
		{name: "anthropic model path", method: "GET", path: "/v1/models/" + c.at("anthropic model path") + q, header: head()},
		{name: "messages scoped match", method: "POST", path: path + q, header: head(append(scope, "X-Case", caseHeader)...), body: scoped("say "+contains, "")},
		{name: "messages scoped stream match", method: "POST", path: path + q, header: head(append(scope, "X-Case", caseHeader)...), body: scoped("say "+contains, `,"stream":true`)},
		{name: "messages strict miss", method: "POST", path: path + q, header: head(scope...), body: scoped(c.at("anthropic scoped unmatched"), "")},
	}
}

// thinkingCanaryCalls are TestCanaries' calls of Anthropic thinking on mock-reasoning: a first
// turn's thinking text and signature — the mock's own text, canaries once the answer names them
// (thinkingCanaries) — sent back on a next turn, JSON and streamed; a canary as a signature and
// as redacted data, refused; display omitted; and a fixture's scripted summary as the thinking
// of a call in its scope.
func thinkingCanaryCalls(t *testing.T, h *harness, c *canaries, q string, scope []string) []canaryCall {
	t.Helper()
	head := []string{"Anthropic-Version", "2023-06-01"}
	const thinking = `"thinking":{"type":"enabled","budget_tokens":1024}`
	first := h.anthropic("/v1/messages", fmt.Sprintf(`{"model":"mock-reasoning","max_tokens":2048,%s,"messages":[{"role":"user","content":%q}]}`,
		thinking, c.at("thinking first input")))
	var turn struct{ Content []json.RawMessage }
	if err := json.Unmarshal(first.Body.Bytes(), &turn); err != nil || len(turn.Content) != 2 {
		t.Fatalf("thinking first turn: %d %s", first.Code, first.Body)
	}
	thinkingCanaries(t, c, "thinking first turn", first.Body.Bytes())
	next := func(stream bool, block string) string {
		return fmt.Sprintf(`{"model":"mock-reasoning","max_tokens":2048,"stream":%t,%s,"messages":[{"role":"user","content":%q},`+
			`{"role":"assistant","content":[%s,%s]},{"role":"user","content":%q}]}`,
			stream, thinking, c.at("thinking first input"), block, turn.Content[1], c.at("thinking next input"))
	}
	const path = "/v1/messages"
	return []canaryCall{
		{name: "thinking json", method: "POST", path: path + q, body: next(false, string(turn.Content[0])), header: head},
		{name: "thinking stream", method: "POST", path: path + q, body: next(true, string(turn.Content[0])), header: head},
		{name: "thinking forged signature", method: "POST", path: path + q, header: head,
			body: next(false, fmt.Sprintf(`{"type":"thinking","thinking":%q,"signature":%q}`, c.at("forged thinking"), c.at("forged signature")))},
		{name: "thinking forged redacted", method: "POST", path: path + q, header: head,
			body: next(true, fmt.Sprintf(`{"type":"redacted_thinking","data":%q}`, c.at("forged redacted data")))},
		{name: "thinking omitted", method: "POST", path: path + q, header: head,
			body: fmt.Sprintf(`{"model":"mock-reasoning","max_tokens":2048,"stream":true,"thinking":{"type":"adaptive","display":"omitted"},"messages":[{"role":"user","content":%q}]}`, c.at("thinking omitted input"))},
		{name: "thinking scoped fixture", method: "POST", path: path + q, header: append(append([]string{}, head...), scope...),
			body: `{"model":"mock-reasoning","max_tokens":2048,"stream":true,` + thinking + `,"messages":[{"role":"user","content":"x"}]}`},
	}
}

// thinkingCanaries makes canaries of an answer's thinking texts and signatures.
func thinkingCanaries(t *testing.T, c *canaries, name string, body []byte) {
	t.Helper()
	n := 0
	for _, m := range thinkingText.FindAllSubmatch(body, -1) {
		var s string
		if err := json.Unmarshal(m[1], &s); err != nil || s == "" {
			continue
		}
		c.places[s] = name + " thinking text or signature"
		n++
	}
	if n < 2 {
		t.Fatalf("%s: no thinking text and signature in %s", name, body)
	}
}

// thinkingText finds the thinking texts and signatures of an answer.
var thinkingText = regexp.MustCompile(`"(?:thinking|signature)":("(?:[^"\\]|\\.)*")`)
