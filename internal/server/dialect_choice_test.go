package server

import (
	"strings"
	"testing"
)

// TestRouteChoosesTheDialect: a route of one dialect answers in it whatever the request carries
// (an OpenAI route with anthropic-version answers as OpenAI); on the routes the dialects share,
// and before any route is matched, the marker header chooses (anthropic-version: Anthropic's,
// else OpenAI's); Anthropic's message batches are refused in Anthropic's words.
func TestRouteChoosesTheDialect(t *testing.T) {
	h := newHarness(t)
	const openAI, anthropic = `{"error":{"message":`, `{"type":"error","error":{`
	for _, c := range []struct {
		name, method, path, body string
		header                   []string
		want                     string
	}{
		{"chat route, anthropic-version sent", "POST", chatPath, "{", anthropicHeaders, openAI},
		{"responses route, anthropic-version sent", "POST", "/v1/responses", "{", anthropicHeaders, openAI},
		{"messages route, no anthropic-version", "POST", messagesPath, "{", nil, anthropic},
		{"model list, anthropic-version", "GET", "/v1/models/no-such-model", "", anthropicHeaders, anthropic},
		{"model list, no marker", "GET", "/v1/models/no-such-model", "", nil, openAI},
		{"unknown path, anthropic-version", "GET", "/nowhere", "", anthropicHeaders, anthropic},
		{"unknown path, no marker", "GET", "/nowhere", "", nil, openAI},
		{"message batches", "POST", "/v1/messages/batches", "{}", nil, anthropic},
		{"a message batch", "GET", "/v1/messages/batches/b1", "", nil, anthropic},
		{"wrong method on the messages route", "GET", messagesPath, "", nil, anthropic},
	} {
		rr := h.do(c.method, c.path, c.body, c.header...)
		if !strings.HasPrefix(rr.Body.String(), c.want) {
			t.Errorf("%s: %d %s, want an envelope starting %s", c.name, rr.Code, rr.Body.String(), c.want)
		}
		if got := rr.Header().Get("Request-Id") != ""; got != (c.want == anthropic) {
			t.Errorf("%s: request-id %v", c.name, got)
		}
	}
}
