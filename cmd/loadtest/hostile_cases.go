package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// nested is a JSON Schema of depth levels of objects with width required properties each, leaf
// at the bottom.
func nested(width, depth int, leaf string) string {
	s := leaf
	for range depth {
		props := make([]string, width)
		names := make([]string, width)
		for i := range width {
			props[i] = fmt.Sprintf(`"p%d":%s`, i, s)
			names[i] = fmt.Sprintf(`"p%d"`, i)
		}
		s = `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(names, ",") + `]}`
	}
	return s
}

// schemaBody is a chat request for a response_format json_schema (not strict); extra is more
// top-level fields, each followed by a comma.
func schemaBody(model, schema, extra string) string {
	return `{"model":"` + model + `",` + extra + `"messages":[{"role":"user","content":"hi"}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}}`
}

// listOf joins n items made by f with commas.
func listOf(n int, f func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = f(i)
	}
	return strings.Join(items, ",")
}

const smallRequest = `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`

// maximalStream runs every one of its 128 choices to the 4096-piece budget (prose stops at the
// model's 32 tokens whatever max_tokens says): far more than any socket buffer holds.
var maximalStream = schemaBody("mock-chat", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"},"minItems":5000}},"required":["a"]}`,
	`"n":128,"max_tokens":4096,"stream":true,`)

func hostileCases() []hostileCase {
	pattern := `{"type":"string","pattern":"[a-z]{1000}"}`
	strings64 := nested(64, 2, `{"type":"string","minLength":4096}`)
	heavy := schemaBody("mock-chat", strings64, `"n":128,`)
	prose := `{"model":"mock-chat","n":128,"max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	return append([]hostileCase{
		{name: "16 strings of pattern [a-z]{1000}", limits: issueLimits, drive: one,
			body: schemaBody("mock-chat", `{"type":"object","properties":{`+listOf(16, func(i int) string { return fmt.Sprintf(`"a%d":%s`, i, pattern) })+`}}`, "")},
		{name: "array of 64 strings of pattern [a-z]{1000}", limits: issueLimits, drive: one,
			body: schemaBody("mock-chat", `{"type":"array","items":`+pattern+`,"minItems":64}`, "")},
		{name: "80,000 required names", limits: issueLimits, drive: one,
			body: schemaBody("mock-chat", `{"type":"object","properties":{},"required":[`+listOf(80000, func(i int) string { return fmt.Sprintf(`"r%d"`, i) })+`]}`, "")},
		{name: "60,000 string properties", flags: bigBodies, limits: issueLimits, drive: one,
			body: schemaBody("mock-chat", `{"type":"object","properties":{`+listOf(60000, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"string"}`, i) })+`}}`, "")},
		{name: "64×64 strings of minLength 4096, n=128", limits: issueLimits, drive: one, body: heavy},
		{name: "the same as mock-tools tool parameters, n=128", limits: issueLimits, drive: one,
			body: `{"model":"mock-tools","n":128,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + strings64 + `}}]}`},
		{name: "64×64×64 integers, n=128", flags: bigBodies, limits: issueLimits, drive: one,
			body: schemaBody("mock-chat", nested(64, 3, `{"type":"integer"}`), `"n":128,`)},
		{name: "mock-echo, 1 MB prompt, n=128", limits: issueLimits, drive: expect(400, "context_length_exceeded"),
			body: `{"model":"mock-echo","n":128,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 200000) + `"}]}`},
		// Eight of case 5 at once: 0.5 s of CPU each, and the issue's 300 MiB for the lot.
		{name: "8 clients at once with the 64×64 body", limits: limits{cpu: 4, rssMiB: 300, wall: 5}, drive: crowd(8), body: heavy},
		{name: "200 open streams, n=128, max_tokens 4096", drive: openStreams(200), body: prose},
		{name: "200 open streams, n=128, every choice to 4096 pieces (json_schema)", drive: openStreams(200), body: maximalStream},
		{name: "6 JSON + 2 stream clients that never read", flags: []string{"--write-timeout", "2s", "--max-concurrent", "8"}, drive: nonReaders},
		{name: "8 clients trickling a body, 1 B per 200 ms", flags: []string{"--max-concurrent", "4", "--read-header-timeout", "2s", "--read-timeout", "3s"}, drive: tricklers},
	}, append(regexCases(), nestingCases()...)...)
}

// chatAnswer sends one chat request and describes the answer: status and error code, or the
// first choice's finish_reason, with the body's size.
func chatAnswer(ctx context.Context, s *server, body string) (status int, desc string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	resp, b, err := post(ctx, client, s, body)
	if err != nil {
		return 0, "", err
	}
	return resp.StatusCode, describe(resp.StatusCode, b), nil
}

func describe(status int, body []byte) string {
	var v struct {
		Error   *struct{ Code string } `json:"error"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	_ = json.Unmarshal(body, &v)
	switch {
	case v.Error != nil:
		return fmt.Sprintf("%d %s, %s B", status, v.Error.Code, num(float64(len(body))))
	case len(v.Choices) > 0:
		return fmt.Sprintf("%d %s ×%d, %s B", status, v.Choices[0].FinishReason, len(v.Choices), num(float64(len(body))))
	}
	return fmt.Sprintf("%d, %s B", status, num(float64(len(body))))
}

func one(ctx context.Context, s *server, body string) (string, []check, error) {
	_, desc, err := chatAnswer(ctx, s, body)
	return desc, nil, err
}

// expect is one request whose answer must be an error of this status and code.
func expect(status int, code string) func(context.Context, *server, string) (string, []check, error) {
	return func(ctx context.Context, s *server, body string) (string, []check, error) {
		got, desc, err := chatAnswer(ctx, s, body)
		return desc, []check{{fmt.Sprintf("%d %s", status, code), got == status && strings.HasPrefix(desc, fmt.Sprintf("%d %s,", status, code))}}, err
	}
}

// tally counts equal answers: "8× 200 length ×128, …".
func tally(answers []string) string {
	counts := map[string]int{}
	for _, a := range answers {
		counts[a]++
	}
	var out []string
	for a, n := range counts {
		out = append(out, fmt.Sprintf("%d× %s", n, a))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// crowd sends the body from n clients at once.
func crowd(n int) func(context.Context, *server, string) (string, []check, error) {
	return func(ctx context.Context, s *server, body string) (string, []check, error) {
		answers, errs := make([]string, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, answers[i], errs[i] = chatAnswer(ctx, s, body) })
		}
		wg.Wait()
		return tally(answers), nil, errors.Join(errs...)
	}
}

// rawRequest is an HTTP/1.1 chat request to write on a bare connection.
func rawRequest(body string, header ...string) []byte {
	h := strings.Join(append(header, ""), "\r\n")
	return fmt.Appendf(nil, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", h, len(body), body)
}

// openStreams opens n streams that send a chunk a second, reads the first chunk of each, and
// takes the server's VmRSS while all are open; closing the connections ends them.
func openStreams(n int) func(context.Context, *server, string) (string, []check, error) {
	return func(ctx context.Context, s *server, body string) (string, []check, error) {
		req := rawRequest(body, "X-Mock-Latency: ttfc=0s;between=1s")
		conns := make([]net.Conn, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { conns[i], errs[i] = openStream(s.addr, req) })
		}
		wg.Wait()
		open, _ := rss(s.pid())
		opened := 0
		for _, c := range conns {
			if c != nil {
				opened++
				c.Close()
			}
		}
		mib := float64(open) / (1 << 20)
		return fmt.Sprintf("%d of %d open; VmRSS %.0f MiB with all open", opened, n, mib),
			[]check{{fmt.Sprintf("all %d open", n), opened == n}, {"VmRSS open < 256 MiB", mib < 256}}, errors.Join(errs...)
	}
}

// nonReaders writes 6 JSON requests with answers of about 4 MB and 2 maximal streams on bare
// connections with small receive windows, and never reads, so the server's writes block. It
// takes the time until the in-flight gauge is back to the scrape itself, then sends a fresh
// request.
func nonReaders(ctx context.Context, s *server, _ string) (string, []check, error) {
	heavy := schemaBody("mock-chat", nested(64, 2, `{"type":"string","minLength":4096}`), `"n":128,`)
	start := time.Now()
	for i := range 8 {
		body := heavy
		if i >= 6 {
			body = maximalStream
		}
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			return "", nil, err
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		if _, err := c.Write(rawRequest(body)); err != nil {
			return "", nil, err
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	const gauge = "mockgateway_http_requests_in_flight"
	released := -1.0
	for time.Since(start) < 10*time.Second && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		if v, err := scrape(ctx, client, s.url("/metrics"), gauge); err == nil && v[gauge] <= 0 {
			released = time.Since(start).Seconds()
			break
		}
	}
	status, desc, err := chatAnswer(ctx, s, smallRequest)
	rel := "not within 10 s"
	if released >= 0 {
		rel = fmt.Sprintf("%.2f s", released)
	}
	return fmt.Sprintf("all 8 released after %s; then a fresh request: %s", rel, desc),
		[]check{{"released ≤ 4.5 s", released >= 0 && released <= 4.5}, {"fresh request 200", status == 200}}, err
}

// tricklers starts 8 clients that send their headers, then a body byte every 200 ms; while they
// trickle, a normal request is sent and timed. Each trickler gets its own answer.
func tricklers(ctx context.Context, s *server, _ string) (string, []check, error) {
	const n = 8
	answers, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i], errs[i] = trickle(s.addr) })
	}
	time.Sleep(500 * time.Millisecond) // all eight are trickling
	t0 := time.Now()
	status, desc, err := chatAnswer(ctx, s, smallRequest)
	normal := time.Since(t0).Seconds()
	wg.Wait()
	all408 := true
	for _, a := range answers {
		all408 = all408 && strings.HasPrefix(a, "408 request_timeout,")
	}
	return fmt.Sprintf("normal request: %s in %.3f s; tricklers: %s", desc, normal, tally(answers)),
		[]check{{"normal 200 within 1 s", status == 200 && normal <= 1}, {"every trickler 408 request_timeout", all408}},
		errors.Join(append(errs, err)...)
}

// trickle is one client that announces a 1000-byte body and sends it a byte every 200 ms,
// until the server answers (or 10 s pass: no answer at all).
func trickle(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")); err != nil {
		return "", err
	}
	go func() { // ends when the connection is closed under it
		for range 1000 {
			time.Sleep(200 * time.Millisecond)
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", fmt.Errorf("trickler: %w", err)
	}
	b, _ := io.ReadAll(resp.Body)
	return describe(resp.StatusCode, b), nil
}
