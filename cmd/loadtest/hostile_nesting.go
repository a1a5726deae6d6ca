package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"mockgateway/internal/chatclient"
)

// nestingDepth is the depth of the nested tool_result body and the nested schemas, the depth
// BenchmarkDecodeDeepNesting decodes (docs/performance.md gives their sizes).
const nestingDepth = 4900

// nestingCases are each dialect's worst nesting: a tool_result nested in a tool_result on
// /v1/messages and /v1/messages/count_tokens, alone and from four clients at once, and a tool's
// JSON Schema nested as deep in chat, the Responses API and Messages. What each once cost is
// in docs/performance.md.
func nestingCases() []hostileCase {
	results := strings.Repeat(`{"type":"tool_result","tool_use_id":"toolu_1","content":[`, nestingDepth) +
		`{"type":"text","text":"x"}` + strings.Repeat(`]}`, nestingDepth)
	conversation := `"messages":[{"role":"user","content":"read it"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a"}}]},` +
		`{"role":"user","content":[` + results + `]}]}`
	schema := strings.Repeat(`{"type":"object","properties":{"a":`, nestingDepth) + `{"type":"string"}` +
		strings.Repeat(`}}`, nestingDepth)
	anthropic := messagesDialect().header // what every Anthropic client sends beside the body
	messages := dialect{path: "/v1/messages", header: anthropic}
	counting := dialect{path: "/v1/messages/count_tokens", header: anthropic}
	chat := dialect{path: chatclient.ChatPath}
	responses := dialect{path: "/v1/responses"}
	deep := fmt.Sprintf("nested %d levels", nestingDepth)
	return []hostileCase{
		{name: "/v1/messages, tool_result in tool_result, " + deep, limits: issueLimits,
			drive: messages.expect(1, 400, "invalid_request_error"), body: `{"model":"mock-echo","max_tokens":64,` + conversation},
		{name: "/v1/messages, tool_result in tool_result, " + deep + ", 4 clients at once", limits: issueLimits,
			drive: messages.expect(4, 400, "invalid_request_error"), body: `{"model":"mock-echo","max_tokens":64,` + conversation},
		{name: "/v1/messages/count_tokens, tool_result in tool_result, " + deep, limits: issueLimits,
			drive: counting.expect(1, 400, "invalid_request_error"), body: `{"model":"mock-echo",` + conversation},
		{name: "chat, mock-tools, tool parameters " + deep, limits: issueLimits, drive: chat.expect(1, 200, ""),
			body: `{"model":"mock-tools","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]}`},
		{name: "/v1/responses, mock-tools, tool parameters " + deep, limits: issueLimits, drive: responses.expect(1, 200, ""),
			body: `{"model":"mock-tools","input":"hi","tools":[{"type":"function","name":"f","parameters":` + schema + `}]}`},
		{name: "/v1/messages, mock-tools, input_schema " + deep, limits: issueLimits, drive: messages.expect(1, 200, ""),
			body: `{"model":"mock-tools","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + schema + `}]}`},
	}
}

// dialect is a route and the headers its clients send.
type dialect struct {
	path   string
	header map[string]string
}

// answer sends body and describes the answer: its status and its error's code (chat, the
// Responses API) or type (Anthropic's), with its size.
func (d dialect) answer(ctx context.Context, s *server, body string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	resp, b, err := chatclient.Request{URL: s.url(d.path), Body: []byte(body), Header: d.header}.Do(ctx, client, maxAnswer)
	if err != nil {
		return 0, "", err
	}
	var v struct {
		Error *struct{ Code, Type string } `json:"error"`
	}
	_ = json.Unmarshal(b, &v)
	kind := ""
	if v.Error != nil {
		kind = v.Error.Code
		if kind == "" {
			kind = v.Error.Type
		}
	}
	return resp.StatusCode, strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, kind)) + ", " + num(float64(len(b))) + " B", nil
}

// expect sends the body from n clients at once; each answer is to be status, with an error of
// kind when kind is not "".
func (d dialect) expect(n, status int, kind string) func(context.Context, *server, string) (string, []check, error) {
	want := strings.TrimSpace(fmt.Sprintf("%d %s", status, kind)) + ","
	return func(ctx context.Context, s *server, body string) (string, []check, error) {
		answers, errs := make([]string, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, answers[i], errs[i] = d.answer(ctx, s, body) })
		}
		wg.Wait()
		all := true
		for _, a := range answers {
			all = all && strings.HasPrefix(a, want)
		}
		err := errors.Join(errs...)
		return tally(answers), []check{{strings.TrimSuffix(want, ","), all}}, err
	}
}
