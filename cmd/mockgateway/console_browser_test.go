package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"mockgateway/internal/testutil"
)

// call sends one chat request and returns its status and request id; the answer is read whole.
func call(t testing.TB, base string, headers map[string]string, body string) (int, string, []byte) {
	t.Helper()
	return callRoute(t, base, "/v1/chat/completions", headers, body)
}

// callRoute sends one request of the dialect of route, as call does.
func callRoute(t testing.TB, base, route string, headers map[string]string, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+route, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("x-request-id"), b
}

func chatBody(model, text string, stream bool) string {
	b, _ := json.Marshal(map[string]any{"model": model, "stream": stream, "max_tokens": 8,
		"messages": []map[string]string{{"role": "user", "content": text}}})
	return string(b)
}

// seedCalls gives the journal a realistic mix: SDK headers, a fixture hit, a stream, a simulated
// retry, gateway retries and fallback, a 404 and a 429; and scoped calls for the filter.
func seedCalls(t *testing.T, base string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/_mock/fixtures", strings.NewReader(
		`{"fixtures":[{"name":"greet","match":{"last_user":{"contains":"hello"}},"reply":{"content":"Hi! How can I help?"}}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("adding a fixture: %d", resp.StatusCode)
	}
	python := map[string]string{"User-Agent": "OpenAI/Python 1.99.0", "x-stainless-lang": "python",
		"x-stainless-package-version": "1.99.0", "x-stainless-os": "Linux", "x-stainless-runtime": "CPython",
		"x-stainless-runtime-version": "3.12.3", "x-stainless-retry-count": "0"}
	node := map[string]string{"User-Agent": "OpenAI/JS 5.20.0", "x-stainless-lang": "js",
		"x-stainless-package-version": "5.20.0", "x-stainless-runtime": "node", "x-stainless-runtime-version": "v22.12.0",
		"x-stainless-retry-count": "0"}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := maps.Clone(h)
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, c := range []struct {
		h    map[string]string
		body string
		want int
	}{
		{python, chatBody("mock-chat", "hello there", false), 200},
		{with(node, "x-request-id", "console-gw-1"), chatBody("mock-gateway", "Route me", true), 200},
		{with(python, "x-mock-scope", "", "x-request-id", "console-flaky-1"), chatBody("mock-flaky", "Try once", false), 503},
		{with(python, "x-stainless-retry-count", "1", "x-request-id", "console-flaky-2"), chatBody("mock-flaky", "Try again", false), 200},
		{node, `{"model":"mock-tools","messages":[{"role":"user","content":"Weather?"}],"stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`, 200},
		{nil, chatBody("no-such-model", "Anyone?", false), 404},
		{map[string]string{"x-mock-fault": "rate_limit"}, chatBody("mock-chat", "Busy?", false), 429},
		{map[string]string{"x-mock-scope": "console-a"}, chatBody("mock-chat", "a1", false), 200},
		{map[string]string{"x-mock-scope": "console-a"}, chatBody("mock-chat", "a2", true), 200},
		{map[string]string{"x-mock-scope": "console-a"}, chatBody("mock-echo", "a3", false), 200},
		{map[string]string{"x-mock-scope": "console-b"}, chatBody("mock-chat", "b1", false), 200},
		{map[string]string{"x-mock-scope": "console-b"}, chatBody("mock-chat", "b2", true), 200},
	} {
		h := map[string]string{}
		for k, v := range c.h {
			if v != "" {
				h[k] = v
			}
		}
		if status, id, _ := call(t, base, h, c.body); status != c.want {
			t.Fatalf("seeding %s (%s): status %d, want %d", c.body, id, status, c.want)
		}
	}
	// One call of each other dialect, for the dialect column and its filter.
	for _, c := range []struct {
		route, body string
		h           map[string]string
	}{
		{"/v1/responses", `{"model":"mock-chat","input":"Summarize the plan","stream":true}`, nil},
		{"/v1/messages", `{"model":"mock-chat","max_tokens":64,"messages":[{"role":"user","content":"Review this"}]}`,
			map[string]string{"anthropic-version": "2023-06-01"}},
		{"/v1beta/models/mock-echo:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, nil},
	} {
		if status, id, _ := callRoute(t, base, c.route, c.h, c.body); status != 200 {
			t.Fatalf("seeding %s %s (%s): status %d, want 200", c.route, c.body, id, status)
		}
	}
}

// healthShown holds once the health strip has two scrapes to compare.
const healthShown = `/^[0-9.]+$/.test(document.getElementById('h-rps').textContent)`

// TestConsoleBrowser drives the console in Debian's chromium against the real service. An
// end-to-end test: under the switch a missing chromium fails it (startBrowser).
func TestConsoleBrowser(t *testing.T) {
	testutil.EndToEnd(t)
	in := startService(t, nil)
	b := startBrowser(t)
	seedCalls(t, in.URL)

	canary := "CANARY-" + rand.Text()
	canaryScope := "console-canary"
	status, _, answer := call(t, in.URL, map[string]string{"x-mock-scope": canaryScope, "x-request-id": "console-canary-1"},
		`{"model":"mock-echo","messages":[{"role":"system","content":"system `+canary+`"},{"role":"user","content":"say `+canary+`"}]}`)
	if status != 200 || !strings.Contains(string(answer), canary) {
		t.Fatalf("the canary call: %d, answer holds the canary: %v", status, strings.Contains(string(answer), canary))
	}

	var testID string
	t.Run("setup", func(t *testing.T) {
		tb := b.newTab(t)
		tb.do(chromedp.Navigate(in.URL + "/"))
		tb.waitFor(`document.querySelectorAll('#models-table tbody tr').length >= 6`)
		tb.waitFor(`document.getElementById('key-status').textContent.startsWith('not required')`)
		tb.waitFor(`document.querySelector('#fixtures-table tbody tr td:nth-child(4)')?.textContent === '1'`)
		if got := eval[string](tb, `document.getElementById('base-url').textContent`); got != in.URL+"/v1" {
			t.Errorf("base URL %q, want %q", got, in.URL+"/v1")
		}
		for _, lang := range []string{"curl", "Python", "Node", "Go", "Vercel AI SDK", "LangChain"} {
			snippet := eval[string](tb, `(() => { [...document.querySelectorAll('#snippet-tabs .tab')].find((b) => b.textContent === `+js(lang)+`).click();
				return document.getElementById('snippet-code').textContent; })()`)
			if !strings.Contains(snippet, in.URL+"/v1") || !strings.Contains(snippet, "mock-chat") {
				t.Errorf("%s snippet does not use the base URL and mock-chat:\n%s", lang, snippet)
			}
			if lang == "Go" {
				runGoSnippet(t, snippet)
			}
		}
		eval[chromedp.Void](tb, `[...document.querySelectorAll('#snippet-tabs .tab')].find((b) => b.textContent === 'Python').click()`)
		tb.do(chromedp.Click(chromedp.CSS(`input[name="test-mode"][value="stream"]`)), chromedp.Click(chromedp.ID("send-test")))
		tb.waitFor(`/^200 · stream · \S+$/.test(document.getElementById('test-result').textContent)`)
		testID = eval[string](tb, `document.getElementById('test-result').textContent.split(' · ')[2]`)
		tb.waitFor(`document.querySelector('#setup-calls tbody tr[data-request-id=` + js(testID) + `]')`)
		tb.waitFor(healthShown)
		tb.screenshot("console-setup.png")

		t.Run("calls", func(t *testing.T) {
			tb.do(chromedp.Click(chromedp.ID("nav-calls")))
			tb.waitFor(`document.querySelector('#calls-table tbody tr[data-request-id=` + js(testID) + `]')`)
			tb.waitFor(rowsWhere(8, false, "true"))
			tb.waitFor(healthShown)
			tb.screenshot("console-calls.png")
		})

		t.Run("call", func(t *testing.T) {
			tb.do(chromedp.Click(chromedp.CSS(`#calls-table tbody tr[data-request-id=` + js(testID) + `] a`)))
			if h := eval[string](tb, `location.hash`); h != "#/calls/"+testID {
				t.Errorf("hash %q, want #/calls/%s", h, testID)
			}
			for _, ev := range []string{"stream.started", "stream.first_chunk", "stream.completed"} {
				tb.waitFor(`document.querySelector('#call-waterfall .wf-event[data-name="` + ev + `"]')`)
			}
			tb.waitFor(`document.querySelector('#call-waterfall .wf-row[data-kind="server"]') && document.querySelector('#call-waterfall .wf-row[data-kind="internal"]')`)
			tb.waitFor(`document.getElementById('call-logline').textContent.includes(` + js(testID) + `)`)
			if id := eval[string](tb, `document.getElementById('call-trace-id')?.textContent ?? ''`); !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
				t.Errorf("trace id %q", id)
			}
			if roles := eval[string](tb, `document.getElementById('call-roles')?.tBodies[0].textContent ?? ''`); !strings.Contains(roles, "user") {
				t.Errorf("messages per role: %q", roles)
			}
			if shape := eval[string](tb, `document.getElementById('call-shape').textContent`); !strings.Contains(shape, "stream_options") {
				t.Errorf("client setup does not list stream_options: %q", shape)
			}
		})
	})

	t.Run("deep link", func(t *testing.T) {
		tb := b.newTab(t)
		tb.do(chromedp.Navigate(in.URL + "/#/calls/console-gw-1"))
		for _, ev := range []string{"gateway.retry", "gateway.fallback", "stream.started", "stream.first_chunk", "stream.completed"} {
			tb.waitFor(`document.querySelector('#call-waterfall .wf-event[data-name="` + ev + `"]')`)
		}
		tb.waitFor(`document.getElementById('call-logline').textContent.includes('console-gw-1')`)
		if sdk := eval[string](tb, `document.getElementById('call-shape').textContent`); !strings.Contains(sdk, "OpenAI/JS 5.20.0") {
			t.Errorf("the SDK identity is missing: %q", sdk)
		}
		tb.waitFor(healthShown)
		tb.screenshot("console-call.png")
	})

	t.Run("filters", func(t *testing.T) {
		tb := b.newTab(t)
		tb.do(chromedp.Navigate(in.URL + "/#/calls"))
		tb.waitFor(rowsWhere(8, false, "true"))
		tb.do(chromedp.SendKeys(chromedp.ID("f-scope"), "console-a"))
		tb.waitFor(rowsWhere(3, true, `c[2] === 'console-a'`))
		eval[chromedp.Void](tb, `document.getElementById('f-scope').value = ''`)
		tb.do(chromedp.SendKeys(chromedp.ID("f-scope"), "console-b"))
		tb.waitFor(rowsWhere(2, true, `c[2] === 'console-b'`))
		eval[chromedp.Void](tb, `(() => { const i = document.getElementById('f-scope'); i.value = ''; i.dispatchEvent(new Event('input')); })()`)
		tb.waitFor(rowsWhere(8, false, `c[2] === ''`))
		eval[chromedp.Void](tb, `(() => { const s = document.getElementById('f-status'); s.value = '4'; s.dispatchEvent(new Event('change')); })()`)
		tb.waitFor(rowsWhere(2, false, `c[5].startsWith('4')`))
		eval[chromedp.Void](tb, `(() => { const s = document.getElementById('f-status'); s.value = ''; s.dispatchEvent(new Event('change'));
			const m = document.getElementById('f-model'); m.value = 'mock-flaky'; m.dispatchEvent(new Event('change')); })()`)
		tb.waitFor(rowsWhere(2, true, `c[4] === 'mock-flaky'`))
		eval[chromedp.Void](tb, `(() => { const m = document.getElementById('f-model'); m.value = ''; m.dispatchEvent(new Event('change'));
			const e = document.getElementById('f-error'); e.value = 'model_not_found'; e.dispatchEvent(new Event('change')); })()`)
		tb.waitFor(rowsWhere(1, true, `c[6] === 'model_not_found' && c[5] === '404'`))
		// The dialect column names each call's dialect, as the journal entry carries it, and its
		// filter, whose options are the names the entries carry, keeps one dialect's calls.
		pick := func(dialect string) {
			eval[chromedp.Void](tb, `(() => { const e = document.getElementById('f-error'); e.value = ''; e.dispatchEvent(new Event('change'));
				const d = document.getElementById('f-dialect'); d.value = `+js(dialect)+`; d.dispatchEvent(new Event('change')); })()`)
		}
		pick("Anthropic Messages")
		tb.waitFor(rowsWhere(1, true, `c[3] === 'Anthropic Messages' && c[4] === 'mock-chat'`))
		pick("OpenAI Responses")
		tb.waitFor(rowsWhere(1, true, `c[3] === 'OpenAI Responses' && c[4] === 'mock-chat' && c[7] === 'completed'`))
		pick("Google Gemini")
		tb.waitFor(rowsWhere(1, true, `c[3] === 'Google Gemini' && c[4] === 'mock-echo'`))
		pick("OpenAI Chat Completions")
		tb.waitFor(rowsWhere(8, false, `c[3] === 'OpenAI Chat Completions'`))
		if opts := eval[string](tb, `[...document.getElementById('f-dialect').options].map((o) => o.textContent).join('|')`); opts != "any|Anthropic Messages|Google Gemini|OpenAI Chat Completions|OpenAI Responses" {
			t.Errorf("dialect filter options %q", opts)
		}
	})

	t.Run("canary", func(t *testing.T) {
		tb := b.newTab(t)
		tb.do(chromedp.Navigate(in.URL + "/#/calls/console-canary-1?scope=" + canaryScope))
		tb.waitFor(`document.getElementById('call-logline').textContent.includes('console-canary-1')`)
		tb.waitFor(`document.querySelector('#call-waterfall .wf-row[data-kind="server"]')`)
		tb.do(chromedp.Click(chromedp.ID("call-back")))
		tb.do(chromedp.SendKeys(chromedp.ID("f-scope"), canaryScope))
		tb.waitFor(rowsWhere(1, true, `c[1] === 'console-canary-1'`))
		tb.do(chromedp.Click(chromedp.ID("nav-setup")))
		tb.waitFor(`document.querySelectorAll('#models-table tbody tr').length >= 6`)
		tb.do(chromedp.Sleep(1500 * time.Millisecond)) // a poll or two of every view's endpoints
		if text := eval[string](tb, `document.body.innerText`); strings.Contains(text, canary) {
			t.Error("the canary is on the page")
		}
		bodies := tb.responseBodies(in.URL)
		var journal, traces bool
		for u, bs := range bodies {
			journal = journal || strings.Contains(u, "/_mock/journal") && strings.Contains(u, canaryScope)
			traces = traces || strings.Contains(u, "/debug/traces?request_id=console-canary-1")
			for _, b := range bs {
				if strings.Contains(b, canary) {
					t.Errorf("the canary is in the answer to %s", u)
				}
			}
		}
		if !journal || !traces {
			t.Errorf("the canary call's journal (%v) and trace (%v) answers were not checked; fetched: %v", journal, traces, slices.Sorted(maps.Keys(bodies)))
		}
	})

	t.Run("malformed hash", func(t *testing.T) {
		// A cut or hand-typed link: decodeURIComponent throws URIError on it, which once left a
		// blank page. The call view opens with the id as typed, and the page keeps working.
		tb := b.newTab(t)
		tb.do(chromedp.Navigate(in.URL + "/#/calls/%E0%A4%A"))
		tb.waitFor(`!document.getElementById('view-call').hidden && document.getElementById('call-id').textContent === '%E0%A4%A'`)
		eval[chromedp.Void](tb, `location.hash = '#/calls/%E0%A4%A?scope=%ZZ'`)
		tb.waitFor(`document.getElementById('call-id').textContent === '%E0%A4%A'`)
		eval[chromedp.Void](tb, `location.hash = '#/setup'`)
		tb.waitFor(`document.querySelectorAll('#models-table tbody tr').length >= 6`)
	})

	t.Run("foreign page", func(t *testing.T) {
		// A page on another site the developer merely visits (localhost, while the mock is
		// 127.0.0.1) tries what a browser lets it do without a preflight — a no-cors POST of a
		// fixture (no Content-Type), a no-cors GET of the journal, which carries no Origin — and
		// what needs one: a DELETE of a scope, reading the models and the journal. Nothing is
		// added, deleted or read, and the no-cors GET is refused too (Sec-Fetch-Site:
		// cross-site). (Its own tab, unwatched: the blocked calls are errors in its console, as
		// they should be.)
		fixture := `{"fixtures":[{"name":"pwn","priority":9223372036854775807,"match":{},"reply":{"content":"pwned"}}]}`
		page := http.NewServeMux()
		page.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<!doctype html><title>attack</title><script src="/a.js"></script>`)
		})
		page.HandleFunc("/a.js", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = fmt.Fprintf(w, `const mock = %q, result = {};
				const settle = (name, p) => p.then((r) => r.text ? r.text().then((t) => { result[name] = 'read ' + r.status + ' ' + t; }) : (result[name] = 'sent'),
					(e) => { result[name] = 'blocked'; });
				Promise.all([
					settle('post', fetch(mock + '/_mock/fixtures', { method: 'POST', mode: 'no-cors', body: new Blob([%q]) }).then(() => ({}))),
					settle('delete', fetch(mock + '/_mock/scopes/console-a', { method: 'DELETE' })),
					settle('models', fetch(mock + '/v1/models')),
					settle('journal', fetch(mock + '/_mock/journal')),
					settle('nocors', fetch(mock + '/_mock/journal', { mode: 'no-cors' }).then(() => ({}))),
				]).then(() => { window.done = JSON.stringify(result); });`, in.URL, fixture)
		})
		foreign := httptest.NewServer(page)
		defer foreign.Close()
		ctx, cancel := chromedp.NewContext(b.ctx)
		defer cancel()
		if err := chromedp.Do(ctx); err != nil { // opens the tab, for as long as ctx lives
			t.Fatal(err)
		}
		tb := &tab{t: t, ctx: ctx, watch: &pageWatch{urls: map[network.RequestID]string{}}}
		refusedBefore := refusedJournalReads(t, in.URL)
		tb.do(chromedp.Navigate(strings.Replace(foreign.URL, "127.0.0.1", "localhost", 1) + "/"))
		tb.waitFor(`window.done`)
		var did map[string]string
		if err := json.Unmarshal([]byte(eval[string](tb, `window.done`)), &did); err != nil || !maps.Equal(did, map[string]string{"post": "sent", "delete": "blocked", "models": "blocked", "journal": "blocked", "nocors": "sent"}) {
			t.Errorf("what the page could do: %v %v", did, err)
		}
		// Both journal reads were refused: the CORS one for its Origin, the no-cors one, which
		// has none, for its Sec-Fetch-Site.
		if n := refusedJournalReads(t, in.URL) - refusedBefore; n != 2 {
			t.Errorf("%v journal reads of the page refused, want 2", n)
		}
		resp, err := http.Get(in.URL + "/_mock/fixtures")
		if err != nil {
			t.Fatal(err)
		}
		listed, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(listed), "pwn") {
			t.Errorf("the page added its fixture: %s", listed)
		}
		if status, _, answer := call(t, in.URL, nil, chatBody("mock-echo", "mine", false)); status != 200 || strings.Contains(string(answer), "pwned") {
			t.Errorf("the developer's call: %d %s", status, answer)
		}
		resp, err = http.Get(in.URL + "/_mock/journal?scope=console-a")
		if err != nil {
			t.Fatal(err)
		}
		var journal struct{ Data []any }
		_ = json.NewDecoder(resp.Body).Decode(&journal)
		resp.Body.Close()
		if len(journal.Data) < 3 {
			t.Errorf("the page deleted scope console-a: %d calls left in its journal", len(journal.Data))
		}
	})

	t.Run("limits", func(t *testing.T) { consoleLimits(t, b) })

	t.Run("1000 calls", func(t *testing.T) {
		const n, workers = 1000, 16
		jobs := make(chan int)
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for range workers {
			wg.Go(func() {
				for i := range jobs {
					status, _, _ := call(t, in.URL, map[string]string{"x-mock-scope": "console-load"}, chatBody("mock-chat", fmt.Sprint("load ", i), i%3 == 0))
					if status != 200 {
						errs <- fmt.Sprintf("call %d: %d", i, status)
					}
				}
			})
		}
		for i := range n {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		tb := b.newTab(t)
		tb.do(chromedp.Navigate(in.URL + "/#/calls"))
		tb.waitFor(rowsWhere(8, false, "true"))
		start := time.Now()
		tb.do(chromedp.SendKeys(chromedp.ID("f-scope"), "console-load"))
		tb.waitFor(`document.getElementById('calls-table').dataset.rows === '1000' && document.getElementById('calls-info').textContent.includes('console-load')`)
		wall := time.Since(start)
		first := eval[string](tb, `document.getElementById('calls-table').dataset.renderMs`)
		// A filter change re-renders from the rows already built.
		eval[chromedp.Void](tb, `(() => { const s = document.getElementById('f-status'); s.value = '2'; s.dispatchEvent(new Event('change')); })()`)
		again := eval[string](tb, `document.getElementById('calls-table').dataset.renderMs`)
		t.Logf("calls view, 1,000 journal entries: first render (building every row) %s ms; re-render from cached rows %s ms; typing the scope to 1,000 rows on screen (250 ms debounce, fetch, parse, render) %v",
			first, again, wall.Round(time.Millisecond))
		tb.waitFor(`/^[0-9.]+$/.test(document.getElementById('h-rps').textContent) && document.getElementById('h-streams').textContent === '0'`)
	})
}

// runGoSnippet builds and runs the page's Go snippet as a user would paste it, with this
// module's openai-go, against the service it names: it must compile and print an answer.
func runGoSnippet(t *testing.T, snippet string) {
	t.Helper()
	dir, err := os.MkdirTemp(".", "_snippet") // inside the module, for its requirements; _ keeps it out of ./...
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(snippet), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "run", "./"+filepath.Base(dir)).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		t.Errorf("the Go snippet does not run: %v\n%s\n%s", err, out, snippet)
	}
}

// refusedJournalReads is how many reads of /_mock/journal the service refused as a page's
// (403 origin_not_allowed), from its metrics.
func refusedJournalReads(t *testing.T, base string) float64 {
	t.Helper()
	return metricSum(t, base, func(line string) bool {
		return strings.HasPrefix(line, "mockgateway_http_requests_total{") && strings.Contains(line, `route="/_mock/journal"`) &&
			strings.Contains(line, `status_code="403"`) && strings.Contains(line, `error_code="origin_not_allowed"`)
	})
}

// metricSum is the sum of the samples of the service's /metrics whose lines keep holds.
func metricSum(t *testing.T, base string, keep func(line string) bool) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var n float64
	for _, line := range strings.Split(string(b), "\n") {
		if keep(line) {
			var v float64
			if _, err := fmt.Sscan(line[strings.LastIndexByte(line, '}')+1:], &v); err == nil {
				n += v
			}
		}
	}
	return n
}
