package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// weatherFixtures is the two-turn agent loop of docs/fixtures.md: a tool call, then the answer
// once the tool's result comes back.
const weatherFixtures = `{"fixtures":[
 {"name":"weather-call","match":{"model":"mock-tools","last_user":{"contains":"weather"},"tools":["get_weather"]},
  "reply":{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris"}}]}},
 {"name":"weather-answer","priority":1,"match":{"tool_result":"get_weather"},"reply":{"content":"It is sunny in Paris."}}]}`

const weatherTool = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`

func journaled(d *Deps) { d.State = memoryState(d.Config, true) }

func addFixtures(t *testing.T, h *harness, scope, body string) {
	t.Helper()
	if rr := h.do("POST", "/_mock/fixtures", body, HeaderScope, scope); rr.Code != 200 {
		t.Fatalf("add fixtures: %d %s", rr.Code, rr.Body.String())
	}
}

type completion struct {
	Choices []struct {
		Message struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		}
		FinishReason string `json:"finish_reason"`
	}
}

func decodeCompletion(t *testing.T, body []byte) completion {
	t.Helper()
	var c completion
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 {
		t.Fatalf("not a completion: %s", body)
	}
	return c
}

// TestFixtureAgentLoop: the loop runs on fixtures, JSON and streamed, in its scope only.
func TestFixtureAgentLoop(t *testing.T) {
	h := newHarness(t, journaled)
	addFixtures(t, h, "loop", weatherFixtures)
	first := `{"model":"mock-tools","messages":[{"role":"user","content":"What's the weather in Paris?"}],` + weatherTool + `}`

	rr := h.do("POST", chatPath, first, HeaderScope, "loop", "X-Mock-Latency", "instant")
	c := decodeCompletion(t, rr.Body.Bytes())
	call := c.Choices[0].Message.ToolCalls
	if rr.Code != 200 || len(call) != 1 || call[0].Function.Name != "get_weather" || call[0].Function.Arguments != `{"city":"Paris"}` || c.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("turn 1: %d %s", rr.Code, rr.Body.String())
	}
	second := `{"model":"mock-tools","messages":[{"role":"user","content":"What's the weather in Paris?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"` + call[0].ID + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"` + call[0].ID + `","content":"21C and sunny"}],` + weatherTool + `}`
	rr = h.do("POST", chatPath, second, HeaderScope, "loop", "X-Mock-Latency", "instant")
	if c := decodeCompletion(t, rr.Body.Bytes()); c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != "It is sunny in Paris." {
		t.Fatalf("turn 2: %s", rr.Body.String())
	}

	// Streamed: the same answer, piece by piece.
	rr = h.do("POST", chatPath, strings.TrimSuffix(second, "}")+`,"stream":true}`, HeaderScope, "loop", "X-Mock-Latency", "instant")
	var text strings.Builder
	for _, line := range strings.Split(rr.Body.String(), "\n") {
		var chunk struct {
			Choices []struct{ Delta struct{ Content *string } }
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "[DONE]" {
			if err := json.Unmarshal([]byte(data), &chunk); err == nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != nil {
				text.WriteString(*chunk.Choices[0].Delta.Content)
			}
		}
	}
	if text.String() != "It is sunny in Paris." || !strings.HasSuffix(rr.Body.String(), "data: [DONE]\n\n") {
		t.Fatalf("streamed turn 2: %q\n%s", text.String(), rr.Body.String())
	}

	// Another scope, and no scope, see none of it: the model's own answer.
	for _, hdr := range [][]string{{HeaderScope, "other"}, nil} {
		rr = h.do("POST", chatPath, second, append(hdr, "X-Mock-Latency", "instant")...)
		if c := decodeCompletion(t, rr.Body.Bytes()); c.Choices[0].Message.Content != nil && *c.Choices[0].Message.Content == "It is sunny in Paris." {
			t.Errorf("scope %v saw the loop's fixture", hdr)
		}
	}

	// The journal of the scope: its calls only, with the fixture that answered.
	rr = h.do("GET", "/_mock/journal?scope=loop", "")
	var j struct {
		Data []struct {
			Scope, Fixture, Route string
			Status                int
			Shape                 struct {
				Tools    int
				Messages map[string]int
			}
		}
	}
	if err := json.Unmarshal(rr.Body.Bytes(), &j); err != nil || len(j.Data) != 3 {
		t.Fatalf("journal: %v %s", err, rr.Body.String())
	}
	if e := j.Data[2]; e.Fixture != "weather-call" || e.Scope != "loop" || e.Status != 200 || e.Shape.Tools != 1 || e.Shape.Messages["user"] != 1 {
		t.Errorf("oldest entry: %+v", e)
	}
	if j.Data[0].Fixture != "weather-answer" {
		t.Errorf("newest entry: %+v", j.Data[0])
	}
	if !strings.Contains(h.logs.String(), `"scope":"loop"`) || !strings.Contains(h.logs.String(), `"fixture":"weather-answer"`) {
		t.Error("the access log does not name the scope and the fixture")
	}
	if m := h.do("GET", "/metrics", "").Body.String(); !strings.Contains(m, `mockgateway_fixture_matches_total{fixture="runtime"} 3`) {
		t.Error("mockgateway_fixture_matches_total does not count the runtime fixtures")
	}

	// Dropping the scope drops its fixtures and journal.
	if rr := h.do("DELETE", "/_mock/scopes/loop", ""); rr.Code != 200 || !strings.Contains(rr.Body.String(), `"deleted":true`) {
		t.Fatalf("delete: %d %s", rr.Code, rr.Body.String())
	}
	rr = h.do("POST", chatPath, first, HeaderScope, "loop", "X-Mock-Latency", "instant")
	if len(decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message.ToolCalls) == 1 && strings.Contains(rr.Body.String(), `{\"city\":\"Paris\"}`) {
		t.Error("the dropped scope's fixture still answers")
	}
	if rr := h.do("GET", "/_mock/journal?scope=loop", ""); strings.Count(rr.Body.String(), `"request_id"`) != 1 {
		t.Errorf("the dropped scope's journal: %s", rr.Body.String())
	}
}

// TestFixtureRepliesScopesInParallel: each scope runs its own replies sequence, however many run
// at once.
func TestFixtureRepliesScopesInParallel(t *testing.T) {
	h := newHarness(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			scope := fmt.Sprintf("test-%d", i)
			if rr := h.do("POST", "/_mock/fixtures", `{"fixtures":[{"name":"seq","match":{},"replies":[{"content":"one"},{"content":"two `+scope+`"}]}]}`, HeaderScope, scope); rr.Code != 200 {
				t.Errorf("add: %d", rr.Code)
				return
			}
			for k, want := range []string{"one", "two " + scope, "two " + scope} {
				rr := h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, scope, "X-Mock-Latency", "instant")
				var c completion
				if err := json.Unmarshal(rr.Body.Bytes(), &c); err != nil || len(c.Choices) == 0 || c.Choices[0].Message.Content == nil || *c.Choices[0].Message.Content != want {
					t.Errorf("%s call %d: %s, want %q", scope, k, rr.Body.String(), want)
				}
			}
		})
	}
	wg.Wait()
}

// TestFixtureErrors: a strict miss, a mismatch, a fault scripted by a fixture, a refusal, and the
// control surface's own refusals.
func TestFixtureErrors(t *testing.T) {
	h := newHarness(t)
	addFixtures(t, h, "strict", `{"strict":true,"fixtures":[{"name":"only-weather","match":{"last_user":{"contains":"weather"}},"reply":{"content":"sunny"}}]}`)
	rr := h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, "strict")
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 400 || e.Code != "no_fixture_match" || !strings.Contains(e.Message, "only-weather") || strings.Contains(e.Message, "hello") {
		t.Errorf("strict miss: %d %+v", rr.Code, e)
	}

	addFixtures(t, h, "mismatch", `{"fixtures":[{"name":"wrong-tool","match":{},"reply":{"tool_calls":[{"name":"not_offered","arguments":{}}]}},`+
		`{"name":"bad-args","match":{"tools":["get_weather"]},"priority":1,"reply":{"tool_calls":[{"name":"get_weather","arguments":{"city":42}}]}}]}`)
	rr = h.do("POST", chatPath, chatBody("mock-tools", ""), HeaderScope, "mismatch")
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 400 || e.Code != "fixture_mismatch" || !strings.Contains(e.Message, "wrong-tool") {
		t.Errorf("tool not offered: %d %+v", rr.Code, e)
	}
	rr = h.do("POST", chatPath, `{"model":"mock-tools","messages":[{"role":"user","content":"hi"}],`+weatherTool+`}`, HeaderScope, "mismatch")
	if e := decodeError(t, rr.Body.Bytes()); rr.Code != 400 || e.Code != "fixture_mismatch" || !strings.Contains(e.Message, "bad-args") || strings.Contains(e.Message, "42") {
		t.Errorf("arguments outside the schema: %d %+v", rr.Code, e)
	}

	addFixtures(t, h, "faults", `{"fixtures":[{"name":"flaky","match":{},"reply":{"error":"rate_limit;attempts=1"}},`+
		`{"name":"refuse","priority":1,"match":{"last_user":{"equals":"refuse me"}},"reply":{"refusal":"I can't help with that."}}]}`)
	rr = h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, "faults", "X-Mock-Attempt", "1")
	if rr.Code != 429 || decodeError(t, rr.Body.Bytes()).Code != "simulated_rate_limit" || rr.Header().Get("Retry-After") == "" {
		t.Errorf("scripted fault, attempt 1: %d %s", rr.Code, rr.Body.String())
	}
	if rr = h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, "faults", "X-Mock-Attempt", "2", "X-Mock-Latency", "instant"); rr.Code != 200 {
		t.Errorf("scripted fault, attempt 2: %d %s", rr.Code, rr.Body.String())
	}
	rr = h.do("POST", chatPath, `{"model":"mock-chat","messages":[{"role":"user","content":"refuse me"}]}`, HeaderScope, "faults", "X-Mock-Latency", "instant")
	if c := decodeCompletion(t, rr.Body.Bytes()).Choices[0].Message; c.Refusal == nil || *c.Refusal != "I can't help with that." || c.Content != nil {
		t.Errorf("refusal: %s", rr.Body.String())
	}

	for _, tt := range []struct {
		method, path, body string
		header             []string
		status             int
		code               string
	}{
		{"POST", chatPath, chatBody("mock-chat", ""), []string{HeaderScope, "no spaces"}, 400, "invalid_simulation_header"},
		{"POST", "/_mock/fixtures", `{"fixtures":[{"name":"x","match":{"colour":"red"},"reply":{"content":"y"}}]}`, []string{HeaderScope, "s"}, 400, "invalid_value"},
		{"POST", "/_mock/fixtures", `not json`, []string{HeaderScope, "s"}, 400, "invalid_value"},
		{"GET", "/_mock/fixtures?scope=a%20b", "", nil, 400, "invalid_value"},
		{"GET", "/_mock/journal", "", nil, 404, "not_found"}, // this harness has no journal
		{"DELETE", "/_mock/scopes/a%20b", "", nil, 400, "invalid_value"},
	} {
		rr := h.do(tt.method, tt.path, tt.body, tt.header...)
		if e := decodeError(t, rr.Body.Bytes()); rr.Code != tt.status || e.Code != tt.code || strings.Contains(e.Message, "red") || strings.Contains(e.Message, "colour") {
			t.Errorf("%s %s %s: %d %+v", tt.method, tt.path, tt.body, rr.Code, e)
		}
	}
}

// TestFixtureAttemptsPerScope: a fixture's "fail the first attempts" counts each scope's
// attempts on its own, for clients that retry without an attempt header.
func TestFixtureAttemptsPerScope(t *testing.T) {
	h := newHarness(t)
	for _, scope := range []string{"s5", "s6"} {
		addFixtures(t, h, scope, `{"fixtures":[{"name":"flaky","match":{},"reply":{"error":"rate_limit;attempts=2"}}]}`)
	}
	var got []string
	for range 3 {
		for _, scope := range []string{"s5", "s6"} {
			rr := h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, scope, "X-Mock-Latency", "instant")
			got = append(got, fmt.Sprintf("%s:%d", scope, rr.Code))
		}
	}
	if want := "s5:429 s6:429 s5:429 s6:429 s5:200 s6:200"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
}

// TestDeleteScopeForgetsAttempts: a test that gave up before its attempts got through, then
// dropped its scope, starts again at attempt 1 when it reruns in that scope; another scope's
// count goes on.
func TestDeleteScopeForgetsAttempts(t *testing.T) {
	h := newHarness(t)
	const fault = "rate_limit;attempts=2;retry_after=0s"
	try := func(scope string) int {
		return h.do("POST", chatPath, chatBody("mock-chat", ""), HeaderScope, scope, "X-Mock-Fault", fault, "X-Mock-Latency", "instant").Code
	}
	if a, b := try("rerun"), try("other"); a != 429 || b != 429 {
		t.Fatalf("first attempts: %d %d, want 429", a, b)
	}
	rr := h.do("DELETE", "/_mock/scopes/rerun", "")
	if rr.Code != 200 || !strings.Contains(rr.Body.String(), `"deleted":true`) {
		t.Fatalf("DELETE: %d %s, want deleted: the scope held an attempt count", rr.Code, rr.Body)
	}
	if got := []int{try("rerun"), try("rerun"), try("rerun")}; fmt.Sprint(got) != "[429 429 200]" {
		t.Errorf("rerun after the drop: %v, want [429 429 200] (attempts 1, 2, 3)", got)
	}
	if got := []int{try("other"), try("other")}; fmt.Sprint(got) != "[429 200]" {
		t.Errorf("the other scope's attempts 2 and 3: %v, want [429 200] (its count kept)", got)
	}
}
