package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// hostileCase is one request (or crowd of requests) a careless or hostile client sends. Each
// runs against a fresh server, so the process's peak RSS (VmHWM) is the case's own.
type hostileCase struct {
	name  string
	flags []string // extra server flags
	// run drives the server and returns what the client got, plus any figure of its own (an
	// RSS while streams are open, a release time).
	run func(ctx context.Context, s *server) (answer, extra string, err error)
	// targets, for the report: CPU seconds, peak RSS MiB, seconds to the answer.
	cpu, rssMiB, wall float64
}

// runHostile is `loadtest hostile`: the hostile cases of the "one bad request hurts no one
// else" issue against the built binary, with default flags unless a case says otherwise. It
// reports figures; it fails only when the server dies or a request gets no HTTP answer at all.
func runHostile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("hostile takes no flags (got %v)", args)
	}
	ws, err := newWorkspace(ctx, "", false, stderr)
	if err != nil {
		return err
	}
	defer ws.close()
	fmt.Fprintf(stdout, "## Hostile requests (`make hostile`)\n\n%d cores; each case on a fresh server; targets from the issue.\n\n", runtime.NumCPU())
	fmt.Fprintln(stdout, "| case | answer | server CPU s | peak RSS MiB | wall s | meets target | notes |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|")
	for i, c := range hostileCases() {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, err := measureCase(ctx, ws, "hostile-"+strconv.Itoa(i), c)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		fmt.Fprintln(stdout, row)
	}
	return nil
}

func measureCase(ctx context.Context, ws *workspace, name string, c hostileCase) (string, error) {
	s, err := ws.startMockgateway(ctx, name, c.flags...) // a log file of its own: its address
	if err != nil {
		return "", err
	}
	defer s.stop()
	cpu0, _ := cpuSeconds(s.pid())
	start := time.Now()
	answer, extra, err := c.run(ctx, s)
	wall := time.Since(start).Seconds()
	if err != nil {
		return "", err
	}
	cpu1, _ := cpuSeconds(s.pid())
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid()))
	if err != nil {
		return "", fmt.Errorf("the server is gone: %w", err)
	}
	hwm, _ := parseProcStatus(string(status), "VmHWM")
	cpu, mib := cpu1-cpu0, float64(hwm)/(1<<20)
	ok := cpu <= c.cpu && mib <= c.rssMiB && wall <= c.wall
	return fmt.Sprintf("| %s | %s | %.2f | %.0f | %.2f | %s (≤ %.1f s, ≤ %.0f MiB, ≤ %.1f s) | %s |",
		c.name, answer, cpu, mib, wall, yesNo(&ok), c.cpu, c.rssMiB, c.wall, extra), nil
}

// nested returns a JSON Schema of depth levels of objects with width properties, leaf at the
// bottom.
func nested(width, depth int, leaf string) string {
	s := leaf
	for range depth {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{`)
		for i := range width {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":%s`, i, s)
		}
		b.WriteString(`},"required":[`)
		for i := range width {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d"`, i)
		}
		b.WriteString(`]}`)
		s = b.String()
	}
	return s
}

func schemaBody(model, schema, extra string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}],` + extra +
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}}`
}

func hostileCases() []hostileCase {
	def := func(c hostileCase) hostileCase { c.cpu, c.rssMiB, c.wall = 0.5, 200, 5; return c }
	// Bodies over the default --max-body-bytes would only measure the 413: these cases raise it.
	bigBodies := []string{"--max-body-bytes", "16777216"}
	one := func(body string) func(context.Context, *server) (string, string, error) {
		return func(ctx context.Context, s *server) (string, string, error) { return hostilePost(ctx, s, body, nil) }
	}
	pattern16 := `{"type":"object","properties":{` + strings.TrimSuffix(strings.Repeat(`"a":{"type":"string","pattern":"[a-z]{1000}"},`, 1), ",")
	for i := 1; i < 16; i++ {
		pattern16 += `,"a` + strconv.Itoa(i) + `":{"type":"string","pattern":"[a-z]{1000}"}`
	}
	pattern16 += `}}`
	var required, props strings.Builder
	for i := range 80000 {
		if i > 0 {
			required.WriteByte(',')
		}
		fmt.Fprintf(&required, `"r%d"`, i)
	}
	for i := range 60000 {
		if i > 0 {
			props.WriteByte(',')
		}
		fmt.Fprintf(&props, `"p%d":{"type":"string"}`, i)
	}
	strings64 := nested(64, 2, `{"type":"string","minLength":4096}`)
	ints := nested(64, 3, `{"type":"integer"}`)
	echo := `{"model":"mock-echo","n":128,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 200000) + `"}]}`
	heavy := schemaBody("mock-chat", strings64, `"n":128,`)
	tool := `{"model":"mock-tools","n":128,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + strings64 + `}}]}`
	return []hostileCase{
		def(hostileCase{name: "16 strings, pattern [a-z]{1000}", run: one(schemaBody("mock-chat", pattern16, ""))}),
		def(hostileCase{name: "64 strings of pattern [a-z]{1000}", run: one(schemaBody("mock-chat", `{"type":"array","items":{"type":"string","pattern":"[a-z]{1000}"},"minItems":64}`, ""))}),
		def(hostileCase{name: "80,000 required names", run: one(schemaBody("mock-chat", `{"type":"object","properties":{},"required":[`+required.String()+`]}`, ""))}),
		def(hostileCase{name: "60,000 properties (--max-body-bytes 16 MiB)", flags: bigBodies, run: one(schemaBody("mock-chat", `{"type":"object","properties":{`+props.String()+`}}`, ""))}),
		def(hostileCase{name: "64×64 strings minLength 4096, n=128", run: one(heavy)}),
		def(hostileCase{name: "the same as tool parameters, n=128", run: one(tool)}),
		def(hostileCase{name: "64×64×64 integers, n=128 (--max-body-bytes 16 MiB)", flags: bigBodies, run: one(schemaBody("mock-chat", ints, `"n":128,`))}),
		def(hostileCase{name: "mock-echo, 1 MB prompt, n=128", run: one(echo)}),
		{name: "8 clients at once, 64×64×4 KiB, n=128", cpu: 4, rssMiB: 300, wall: 5, run: crowd(8, heavy)},
		{name: "200 open streams, n=128, max_tokens 4096", cpu: 10, rssMiB: 256, wall: 30, run: openStreams(200)},
		{name: "6 JSON + 2 stream clients that never read", flags: []string{"--write-timeout", "2s", "--max-concurrent", "8"}, cpu: 5, rssMiB: 300, wall: 10, run: nonReaders},
		{name: "8 trickling bodies, --max-concurrent 4", flags: []string{"--max-concurrent", "4", "--read-header-timeout", "2s", "--read-timeout", "3s"}, cpu: 1, rssMiB: 200, wall: 6, run: tricklers},
	}
}

// hostilePost sends one chat request and summarizes the answer: status and error code, or the finish
// reason of the first choice and the body's size.
func hostilePost(ctx context.Context, s *server, body string, header http.Header) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.url("/v1/chat/completions"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("no answer: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", "", fmt.Errorf("the answer broke off: %w", err)
	}
	var v struct {
		Error   *struct{ Code string } `json:"error"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	_ = json.Unmarshal(b, &v)
	switch {
	case v.Error != nil:
		return fmt.Sprintf("%d %s", resp.StatusCode, v.Error.Code), "", nil
	case len(v.Choices) > 0:
		return fmt.Sprintf("%d, %d choices, finish %s, %.1f MB", resp.StatusCode, len(v.Choices), v.Choices[0].FinishReason, float64(len(b))/1e6), "", nil
	}
	return fmt.Sprintf("%d, %d bytes", resp.StatusCode, len(b)), "", nil
}

func crowd(n int, body string) func(context.Context, *server) (string, string, error) {
	return func(ctx context.Context, s *server) (string, string, error) {
		answers := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { answers[i], _, errs[i] = hostilePost(ctx, s, body, nil) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return "", "", err
			}
		}
		return answers[0] + fmt.Sprintf(" (×%d)", n), "", nil
	}
}

// openStreams opens n maximal streams that send a chunk a second, reads each one's first chunk,
// and reports the server's RSS while all are open. Maximal: every choice runs to the 4096-token
// budget, which prose never does (its default length is 32 whatever the budget), so the answer is
// a JSON array of 5,000 integers, cut at 4096 pieces.
func openStreams(n int) func(context.Context, *server) (string, string, error) {
	body := `{"model":"mock-chat","n":128,"max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"hi"}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"},"minItems":5000}},"required":["a"]}}}}`
	return func(ctx context.Context, s *server) (string, string, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // closes every stream
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
		var wg sync.WaitGroup
		var mu sync.Mutex
		opened, failed := 0, 0
		for range n {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, "POST", s.url("/v1/chat/completions"), strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Mock-Latency", "ttfc=0s;between=1s")
				resp, err := client.Do(req)
				ok := err == nil && resp.StatusCode == 200
				if ok {
					line, err := bufio.NewReader(resp.Body).ReadString('\n')
					ok = err == nil && strings.HasPrefix(line, "data: ")
					go func() { <-ctx.Done(); resp.Body.Close() }()
				}
				mu.Lock()
				if ok {
					opened++
				} else {
					failed++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		open, _ := rss(s.pid())
		return fmt.Sprintf("%d open, %d failed", opened, failed), fmt.Sprintf("RSS with all open: %.0f MiB (target < 256)", float64(open)/(1<<20)), nil
	}
}

// nonReaders sends 6 large JSON requests and 2 streams on raw connections and never reads; it
// reports how long until the server has let them all go (in-flight back to its own scrape),
// then that a fresh request is answered.
func nonReaders(ctx context.Context, s *server) (string, string, error) {
	// Answers far larger than the socket buffers (a few MB of JSON; a stream of half a million
	// chunks), so that the server's writes block on clients that do not read.
	jsonBody := schemaBody("mock-chat", nested(64, 2, `{"type":"string","minLength":4096}`), `"n":128,`)
	stream := schemaBody("mock-chat", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"},"minItems":5000}},"required":["a"]}`, `"n":128,"max_tokens":4096,"stream":true,`)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for i := range 8 {
		body := jsonBody
		if i >= 6 {
			body = stream
		}
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			return "", "", err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096) // a small window, so the server's writes block soon
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	released := -1.0
	for time.Since(start) < 8*time.Second {
		time.Sleep(100 * time.Millisecond)
		if v, err := scrape(ctx, http.DefaultClient, s.url("/metrics"), "mockgateway_http_requests_in_flight"); err == nil && v["mockgateway_http_requests_in_flight"] <= 1 {
			released = time.Since(start).Seconds()
			break
		}
	}
	answer, _, err := hostilePost(ctx, s, `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`, nil)
	if err != nil {
		return "", "", err
	}
	if released < 0 {
		return "fresh request: " + answer, "**not released within 8 s**", nil
	}
	return "fresh request: " + answer, fmt.Sprintf("all 8 released after %.1f s (target ≤ 4.5)", released), nil
}

// tricklers start 8 bodies that arrive a byte every 200 ms, then send a normal request; it
// reports the normal request's answer and latency and what the tricklers got.
func tricklers(ctx context.Context, s *server) (string, string, error) {
	type result struct{ status string }
	results := make(chan result, 8)
	for range 8 {
		go func() {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				results <- result{"dial: " + err.Error()}
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
			go func() {
				for range 1000 {
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
					time.Sleep(200 * time.Millisecond)
				}
			}()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				results <- result{"no answer"}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			var v struct{ Error struct{ Code string } }
			_ = json.Unmarshal(b, &v)
			results <- result{fmt.Sprintf("%d %s", resp.StatusCode, v.Error.Code)}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	answer, _, err := hostilePost(ctx, s, `{"model":"mock-chat","messages":[{"role":"user","content":"hi"}]}`, nil)
	if err != nil {
		return "", "", err
	}
	normal := time.Since(t0).Seconds()
	counts := map[string]int{}
	for range 8 {
		counts[(<-results).status]++
	}
	var got bytes.Buffer
	for k, n := range counts {
		fmt.Fprintf(&got, "%d× %s ", n, k)
	}
	return "normal request: " + answer + fmt.Sprintf(" in %.2f s", normal), "tricklers got: " + strings.TrimSpace(got.String()), nil
}
