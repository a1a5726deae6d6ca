package main

import (
	"net/http"

	"mockgateway/internal/traffic"
)

// expectKind is how a soak request must end for it to count as served as intended.
type expectKind int

const (
	expJSON        expectKind = iota // the status (and, for errors, the code)
	expStream                        // 200, SSE, ends with [DONE], no error frame
	expStreamError                   // 200, an error frame with the code, then [DONE]
	expStreamCut                     // 200, then the connection drops: no [DONE]
	expJSONCut                       // 200, then the connection drops mid-body
	expDisconnect                    // 200; the client reads three frames and goes away
)

type scenario struct {
	name   string
	weight int
	method string
	path   string
	body   string // "{N}" is replaced by the request's sequence number
	ctype  string
	header map[string]string
	status int
	code   string // the error code an error response must carry
	kind   expectKind
}

const toolsJSON = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}}]`

func msg(model, extra string) string {
	b := `{"model":"` + model + `","messages":[{"role":"user","content":"soak request {N} says hello to the world"}]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// soakScenarios is the traffic mix: mostly successful JSON and streams, tools, clients that
// disconnect, then the client errors and simulated faults of the contract table the traffic
// generator sends too (traffic.Cases).
func soakScenarios() []scenario {
	out := []scenario{
		{name: "json echo", weight: 18, body: msg("mock-echo", ""), status: 200},
		{name: "json chat", weight: 10, body: msg("mock-chat", `"max_tokens":48,"seed":{N}`), status: 200},
		{name: "stream echo", weight: 12, body: msg("mock-echo", `"stream":true`), status: 200, kind: expStream},
		{name: "stream chat fast+usage", weight: 8, body: msg("mock-chat", `"stream":true,"stream_options":{"include_usage":true}`), header: map[string]string{"x-mock-latency": "fast"}, status: 200, kind: expStream},
		{name: "tools json", weight: 6, body: msg("mock-tools", toolsJSON), status: 200},
		{name: "tools stream", weight: 4, body: msg("mock-tools", `"stream":true,`+toolsJSON), status: 200, kind: expStream},
		{name: "json_schema", weight: 2, body: msg("mock-chat", `"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":"string"}}},"required":["a","b"]}}}`), status: 200},
		{name: "models", weight: 3, method: http.MethodGet, path: "/v1/models", status: 200},
		{name: "health", weight: 1, method: http.MethodGet, path: "/health", status: 200},
		{name: "client disconnects mid-stream", weight: 4, body: msg("mock-chat", `"stream":true`), header: map[string]string{"x-mock-latency": "ttfc=0s;between=20ms"}, status: 200, kind: expDisconnect},
		{name: "mock-flaky retried", weight: 1, body: msg("mock-flaky", ""), header: map[string]string{"x-stainless-retry-count": "1"}, status: 200},
		{name: "mock-gateway fallback", weight: 1, body: msg("mock-gateway", ""), status: 200},
	}
	kinds := map[traffic.Answer]expectKind{traffic.AnswerJSON: expJSON, traffic.AnswerStreamError: expStreamError,
		traffic.AnswerStreamCut: expStreamCut, traffic.AnswerJSONCut: expJSONCut}
	messages := []map[string]any{{"role": "user", "content": "soak request {N} says hello to the world"}}
	for _, k := range traffic.Cases() {
		if k.SoakWeight == 0 {
			continue
		}
		r := k.Request("", messages)
		out = append(out, scenario{name: k.Name, weight: k.SoakWeight, method: r.Method, path: k.Path, body: string(r.Body),
			ctype: k.ContentType, header: k.Header, status: k.Status, code: k.Code, kind: kinds[k.Answer]})
	}
	return out
}
