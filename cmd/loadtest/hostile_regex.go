package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"mockgateway/internal/chatclient"
)

// regexCases are issue 30's regex attacks: a long repeated pattern in a schema and in runtime
// fixtures, and a short regex against a long message — what each once cost is in
// docs/configuration.md.
func regexCases() []hostileCase {
	big := strings.Repeat(`[^b]{1000}`, 3000)
	fixture := func(name, re string) string {
		return `{"fixtures":[{"name":"` + name + `","match":{"last_user":{"regex":"` + re + `"}},"reply":{"content":"x"}}]}`
	}
	long, _ := json.Marshal(strings.Repeat("a", 400<<10))
	return []hostileCase{
		{name: "schema pattern of 30 KB ([^b]{1000} ×3000)", limits: issueLimits, drive: expect(400, "invalid_value"),
			body: schemaBody("mock-chat", `{"type":"string","pattern":"`+big+`"}`, "")},
		{name: "4 runtime fixtures with a regex of 30 KB", limits: issueLimits, drive: addFixtures(4, 400, "invalid_value"),
			body: fixture("big", big)},
		{name: "fixture regex [^z]{0,999}y, then a 400 KB message", limits: issueLimits,
			drive: afterFixture(fixture("slow", `[^z]{0,999}y`), 400, "fixture_mismatch"),
			body:  `{"model":"mock-echo","messages":[{"role":"user","content":` + string(long) + `}]}`},
	}
}

// postFixtures posts a runtime fixtures body and returns the status and the error code, if any.
func postFixtures(ctx context.Context, s *server, body string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	resp, b, err := chatclient.Request{URL: s.url("/_mock/fixtures"), Body: []byte(body)}.Do(ctx, client, maxAnswer)
	if err != nil {
		return 0, "", err
	}
	var v struct{ Error *struct{ Code string } }
	_ = json.Unmarshal(b, &v)
	if v.Error != nil {
		return resp.StatusCode, v.Error.Code, nil
	}
	return resp.StatusCode, "", nil
}

// addFixtures posts the body as runtime fixtures n times, each answer to be status and code.
func addFixtures(n, status int, code string) func(context.Context, *server, string) (string, []check, error) {
	return func(ctx context.Context, s *server, body string) (string, []check, error) {
		ok := true
		var last string
		for range n {
			got, gotCode, err := postFixtures(ctx, s, body)
			if err != nil {
				return "", nil, err
			}
			last = fmt.Sprintf("%d %s", got, gotCode)
			ok = ok && got == status && gotCode == code
		}
		return fmt.Sprintf("%d× %s", n, last), []check{{fmt.Sprintf("%d %s each", status, code), ok}}, nil
	}
}

// afterFixture adds the runtime fixtures, then sends the chat body, whose answer is to be status
// and code.
func afterFixture(fixtures string, status int, code string) func(context.Context, *server, string) (string, []check, error) {
	return func(ctx context.Context, s *server, body string) (string, []check, error) {
		if got, gotCode, err := postFixtures(ctx, s, fixtures); err != nil || got != 200 {
			return "", nil, fmt.Errorf("adding the fixture: %d %s %v", got, gotCode, err)
		}
		return expect(status, code)(ctx, s, body)
	}
}
