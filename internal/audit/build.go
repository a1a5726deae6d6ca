package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"mockgateway/internal/chatclient"
)

const chatPath = chatclient.ChatPath

// discover asks for the model list; it is a probe like any other.
func (t *traffic) discover(ctx context.Context) error {
	b := t.newProbe("list models", http.MethodGet, "")
	b.p.Path = "/v1/models" + b.query()
	b.headers(headerOpts{}).expect("200")
	t.send(ctx, b.p)
	if !b.p.Reached {
		return fmt.Errorf("the target %s is unreachable: %s", t.base, b.p.Outcome)
	}
	if b.p.Status == http.StatusOK {
		var list struct {
			Data []struct {
				ID           string `json:"id"`
				Capabilities struct {
					Streaming bool `json:"streaming"`
					Tools     bool `json:"tools"`
				} `json:"capabilities"`
			} `json:"data"`
		}
		if json.Unmarshal(b.p.okBody, &list) == nil {
			for _, m := range list.Data {
				if len(t.models) < 16 {
					t.models = append(t.models, model{m.ID, m.Capabilities.Streaming, m.Capabilities.Tools})
				}
			}
		}
	}
	if len(t.models) == 0 {
		t.models = []model{{"mock-echo", true, false}, {"mock-tools", true, true}}
	}
	for _, m := range t.models {
		switch {
		case m.ID == "mock-echo":
			t.echoModel = m.ID
		case m.ID == "mock-slow":
			t.slowModel = m.ID
		}
		if m.Tools && t.toolsModel == "" {
			t.toolsModel = m.ID
		}
	}
	if t.echoModel == "" {
		t.echoModel = t.models[0].ID
	}
	return nil
}

// build lays out every probe after discovery: each dialect's (dialects.go), the refusals and
// the fixtures.
func (t *traffic) build() {
	echo := t.echoModel
	ds := dialects()
	for _, d := range ds {
		t.buildDialect(d, echo)
	}
	t.buildRejected(echo)
	t.buildFixtures(echo, ds)
}

// buildChat lays out the probes only the chat dialect has (buildDialect lays out each model
// answering): the tools model answering a tool result, a json_schema response_format, streams
// the client cuts and a request it gives up on, each simulated fault, malformed simulation
// headers.
func (t *traffic) buildChat(_ *dialect, echo string) {
	if t.toolsModel != "" {
		b := t.newProbe("chat JSON "+t.toolsModel+" answering a tool result", http.MethodPost, chatPath)
		body := b.chatBody(t.toolsModel, false, false)
		tools, _ := b.tools()
		body["tools"] = tools
		body["tool_choice"] = "auto"
		b.jsonBody(body).headers(headerOpts{noTraceparent: true}).expect("200")
	}
	{
		b := t.newProbe("chat JSON with a json_schema response_format", http.MethodPost, chatPath)
		body := b.chatBody(echo, false, false)
		prop := b.c("response_format schema property name")
		body["response_format"] = obj{"type": "json_schema", "json_schema": obj{
			"name": b.c("response_format json_schema name"), "description": b.text("response_format json_schema description"),
			"schema": obj{"type": "object", "properties": obj{prop: obj{"type": "string", "description": b.text("response_format schema description")}}},
		}}
		b.jsonBody(body).headers(headerOpts{}).expect("200")
	}

	// Streams the client cuts, and a JSON request the client gives up on.
	{
		// A long answer, so the stream is still running when the client leaves.
		m := echo
		switch {
		case t.slowModel != "":
			m = t.slowModel
		case t.hasModel("mock-chat"):
			m = "mock-chat"
		}
		b := t.newProbe("stream cut by the client after the first event ("+m+")", http.MethodPost, chatPath)
		body := b.chatBody(m, true, false)
		body["max_tokens"] = 400
		b.jsonBody(body).headers(headerOpts{})
		b.p.Header.Set("X-Mock-Latency", "ttfc=10ms;between=40ms")
		b.p.Mode = readFirstEvent
		b.expect("200")
	}
	{
		b := t.newProbe("chat JSON the client gives up on during simulated latency", http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{})
		b.p.Header.Set("X-Mock-Latency", "slow")
		b.p.Timeout = 400 * time.Millisecond
	}

	// Each simulated fault of the spec, with canaries in the body.
	type fault struct {
		name, header string
		stream       bool
		expect       string
		timeout      time.Duration
		extra        map[string]string
	}
	faults := []fault{
		{"rate_limit", "rate_limit;retry_after=2s", false, "429 simulated_rate_limit", 0, nil},
		{"rate_limit, stream", "rate_limit", true, "429 simulated_rate_limit", 0, nil},
		{"rate_limit recovered on the 2nd attempt", "rate_limit;attempts=1", false, "200", 0, map[string]string{"X-Stainless-Retry-Count": "1"}},
		{"server_error", "server_error", false, "500 simulated_server_error", 0, nil},
		{"unavailable", "unavailable;retry_after=1s", false, "503 simulated_unavailable", 0, nil},
		{"unavailable, stream", "unavailable", true, "503 simulated_unavailable", 0, nil},
		{"stream_error", "stream_error;after=2", true, "200", 0, nil},
		{"stream_error, JSON", "stream_error", false, "500 simulated_stream_error", 0, nil},
		{"stream_cut", "stream_cut;after=2", true, "200", 0, nil},
		{"stream_cut, JSON", "stream_cut", false, "", 0, nil},
		{"timeout", "timeout;for=300ms", false, "504 simulated_timeout", 0, nil},
		{"timeout, stream", "timeout;for=300ms", true, "504 simulated_timeout", 0, nil},
		{"timeout the client gives up on", "timeout;for=3s", false, "", 400 * time.Millisecond, nil},
	}
	for _, f := range faults {
		b := t.newProbe("fault "+f.name, http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, f.stream, false)).headers(headerOpts{}).expect(f.expect)
		b.p.Header.Set("X-Mock-Fault", f.header)
		for k, v := range f.extra {
			b.p.Header.Set(k, v)
		}
		b.p.Timeout = f.timeout
	}
	// Malformed simulation headers: 400 invalid_simulation_header must not quote them.
	bad := []struct{ name, header, value string }{
		{"unknown fault kind", "X-Mock-Fault", "{c}"},
		{"bad fault parameter value", "X-Mock-Fault", "rate_limit;retry_after={c}"},
		{"unknown fault parameter", "X-Mock-Fault", "rate_limit;{c}=1"},
		{"unknown latency profile", "X-Mock-Latency", "{c}"},
		{"unknown latency parameter", "X-Mock-Latency", "{c}=2s"},
		{"bad latency duration", "X-Mock-Latency", "ttfc={c}"},
		{"unknown latency parameter with a bad duration", "X-Mock-Latency", "{c}=x"},
		{"profile name and parameter", "X-Mock-Latency", "slow;{c}"},
		{"bad attempt number", "X-Mock-Attempt", "{c}"},
	}
	for _, s := range bad {
		b := t.newProbe("malformed "+s.header+": "+s.name, http.MethodPost, chatPath)
		b.jsonBody(b.chatBody(echo, false, false)).headers(headerOpts{}).expect("400 invalid_simulation_header")
		b.p.Header.Set(s.header, b.fill(s.value, "{c}", s.header+" value ("+s.name+")"))
		if s.header == "X-Mock-Attempt" {
			b.p.Header.Set("X-Mock-Fault", "rate_limit;attempts=1")
		}
	}
}
