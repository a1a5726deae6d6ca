package traffic

import (
	"context"
	"encoding/json"
	"net/http"

	"mockgateway/internal/chatclient"
)

// Answer is how the contract says a request ends.
type Answer int

const (
	AnswerJSON        Answer = iota // the status and, for an error, its code
	AnswerStreamError               // 200, an error frame with the code, then [DONE]
	AnswerStreamCut                 // 200, then the connection drops before [DONE]
	AnswerJSONCut                   // 200, then the connection drops mid-body
)

// Case is a request whose answer the contract fixes: a client error or a simulated fault. The
// traffic generator and the soak (cmd/loadtest) both send them from this one table, so the two
// cannot drift apart on which status and code a request earns. The happy paths are not here:
// each tool checks those its own way (the generator's tool round trips and retries, the soak's
// bare load).
type Case struct {
	Name       string
	Weight     int // cards in each round of the generator's deck; 0: the generator does not send it
	SoakWeight int // share of the soak's mix; 0: the soak does not send it
	// Model is the chat body's model; when Listed, GET /v1/models must list it for the
	// generator to send the case.
	Model  string
	Listed bool
	Method string // "" is POST
	Path   string // "" is /v1/chat/completions
	Fields map[string]any
	// Body, when set, is sent as is instead of a chat body.
	Body        string
	ContentType string
	Header      map[string]string
	Status      int
	Code        string
	Answer      Answer
	// Simulated is an x-mock-fault case: a service started with --allow-simulation-headers=false
	// answers it normally, which the generator accepts too.
	Simulated bool
}

// Cases is the table.
func Cases() []Case {
	fault := func(f string) map[string]string { return map[string]string{"X-Mock-Fault": f} }
	return []Case{
		{Name: "error_unknown_model", Weight: 1, SoakWeight: 2, Model: "mock-lorem-unknown", Status: 404, Code: "model_not_found"},
		{Name: "error_unknown_field", Weight: 1, SoakWeight: 2, Model: "mock-chat", Listed: true, Fields: map[string]any{"temprature": 0.5}, Status: 400, Code: "unknown_parameter"},
		{Name: "error_bad_json", Weight: 1, SoakWeight: 3, Body: `{"model":"mock-chat","messages":[{"role":"user","content":"Lorem ipsum"`, Status: 400, Code: "invalid_json"},
		// gpt-4o is metadata only in the built-in catalog: known, never executed.
		{Name: "error_external_model", Weight: 1, SoakWeight: 1, Model: "gpt-4o", Status: 400, Code: "model_not_executable"},
		{Name: "error_not_found", Weight: 1, Method: http.MethodGet, Path: "/v1/lorem-ipsum", Status: 404, Code: "not_found"},
		{Name: "error_unsupported_surface", Weight: 1, SoakWeight: 1, Path: "/v1/embeddings", Body: `{"model":"mock-chat","input":"` + lorem[0] + `"}`, Status: 404, Code: "unsupported_surface"},
		{Name: "error_method", Weight: 1, SoakWeight: 1, Method: http.MethodGet, Status: 405, Code: "method_not_allowed"},
		{Name: "error_content_type", SoakWeight: 1, Model: "mock-echo", ContentType: "text/plain", Status: 415, Code: "unsupported_media_type"},
		{Name: "error_simulation_header", SoakWeight: 1, Model: "mock-echo", Header: fault("bogus"), Status: 400, Code: "invalid_simulation_header"},

		{Name: "fault_rate_limit_first", SoakWeight: 2, Model: "mock-echo", Header: fault("rate_limit"), Status: 429, Code: "simulated_rate_limit", Simulated: true},
		{Name: "fault_server_error", Weight: 1, SoakWeight: 2, Model: "mock-chat", Listed: true, Header: fault("server_error"), Status: 500, Code: "simulated_server_error", Simulated: true},
		{Name: "fault_unavailable", Weight: 1, SoakWeight: 2, Model: "mock-chat", Listed: true, Header: fault("unavailable;retry_after=200ms"), Status: 503, Code: "simulated_unavailable", Simulated: true},
		{Name: "fault_timeout", SoakWeight: 1, Model: "mock-echo", Header: fault("timeout;for=200ms"), Status: 504, Code: "simulated_timeout", Simulated: true},
		{Name: "fault_stream_error", Weight: 1, SoakWeight: 2, Model: "mock-chat", Listed: true, Fields: map[string]any{"stream": true, "max_tokens": 24},
			Header: fault("stream_error;after=3"), Status: 200, Code: "simulated_stream_error", Answer: AnswerStreamError, Simulated: true},
		{Name: "fault_stream_cut", Weight: 1, SoakWeight: 2, Model: "mock-chat", Listed: true, Fields: map[string]any{"stream": true, "max_tokens": 24},
			Header: fault("stream_cut;after=4"), Status: 200, Answer: AnswerStreamCut, Simulated: true},
		// mock-flaky fails every first attempt by itself, with no header.
		{Name: "model_flaky_first", SoakWeight: 1, Model: "mock-flaky", Listed: true, Status: 503, Code: "simulated_unavailable"},
		{Name: "fault_stream_cut_json", SoakWeight: 1, Model: "mock-echo", Header: fault("stream_cut"), Status: 200, Answer: AnswerJSONCut, Simulated: true},
	}
}

// Request is the case's request: its Body, or a chat body of Model with messages from
// messages and Fields on top.
func (k Case) Request(base string, messages []map[string]any) chatclient.Request {
	r := chatclient.Request{Method: k.Method, URL: base + k.Path, ContentType: k.ContentType, Header: k.Header}
	if k.Path == "" {
		r.URL = base + chatclient.ChatPath
	}
	switch {
	case k.Body != "":
		r.Body = []byte(k.Body)
	case k.Model != "":
		b := map[string]any{"model": k.Model, "messages": messages}
		for f, v := range k.Fields {
			b[f] = v
		}
		r.Body = mustJSON(b)
	}
	return r
}

// scenario is the case as one of the generator's scenarios.
func (k Case) scenario() *scenario {
	model := ""
	if k.Listed {
		model = k.Model
	}
	return &scenario{name: k.Name, weight: k.Weight, model: model, run: k.run}
}

// run sends the case with the generator's lorem messages and checks the contract's answer.
func (k Case) run(ctx context.Context, c *call) error {
	body := chatBody(k.Model, c.variant, nil)
	cr := k.Request("", body["messages"].([]map[string]any))
	if k.Model != "" && k.Body == "" {
		// The generator's own lengths and seeds ride along, under the case's fields.
		var m map[string]any
		_ = json.Unmarshal(cr.Body, &m)
		for f, v := range body {
			if _, set := m[f]; !set {
				m[f] = v
			}
		}
		cr.Body = mustJSON(m)
	}
	r := request{method: cr.Method, path: cr.URL, body: cr.Body, header: k.Header}
	if r.method == "" {
		r.method = http.MethodPost
	}
	switch k.Answer {
	case AnswerStreamError:
		res, err := c.stream(ctx, r, 0)
		switch {
		case err != nil:
			return err
		case res.ErrorCode == k.Code && res.Done:
			return nil
		case res.ErrorCode == "" && res.Done: // simulation headers off
			return nil
		}
		return unexpected("%s: error frame %q, [DONE] %v", k.Name, res.ErrorCode, res.Done)
	case AnswerStreamCut:
		res, err := c.stream(ctx, r, 0)
		if err != nil {
			return err
		}
		if res.ErrorCode != "" {
			return unexpected("%s sent an error frame %q", k.Name, res.ErrorCode)
		}
		return nil // cut (no [DONE]) or, with simulation headers off, a normal stream
	}
	resp, err := c.expect(ctx, r, k.Status, k.Code, nil)
	if err != nil && k.Simulated && resp != nil && resp.StatusCode == http.StatusOK {
		return nil
	}
	return err
}
