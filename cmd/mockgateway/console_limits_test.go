package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// limitsCatalog has a model with a quota and one with a capacity of one and a queue of one.
const limitsCatalog = `models:
  - {id: mock-chat, kind: mock, behavior: chat, capabilities: {streaming: true}}
  - {id: mock-limited, kind: mock, behavior: chat, limits: {rpm: 2, tpm: 50000, rpd: 100}}
  - {id: mock-busy, kind: mock, behavior: chat, capacity: 1, queue: 1}
`

// modelGauge reads a per-model gauge from the service's /metrics.
func modelGauge(t *testing.T, base, name, model string) float64 {
	t.Helper()
	return metricSum(t, base, func(line string) bool {
		return strings.HasPrefix(line, name+"{") && strings.Contains(line, `model="`+model+`"`)
	})
}

// waitGauge polls a per-model gauge until it reads want.
func waitGauge(t *testing.T, base, name, model string, want float64) {
	t.Helper()
	for range 500 {
		if modelGauge(t, base, name, model) == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s{model=%q} never read %v", name, model, want)
}

// seedLimits makes, in scope, two calls mock-limited's quota admits and a third it refuses;
// then mock-busy's place held by a slow call, a second call waiting in its queue, and a third
// refused as overloaded. It returns the refused calls' request ids and the queued one's.
func seedLimits(t *testing.T, base, scope string) (refused, overloaded, queued string) {
	t.Helper()
	in := map[string]string{"x-mock-scope": scope, "Authorization": "Bearer sk-console-limits"}
	for i, want := range []int{200, 200, 429} {
		h := map[string]string{"x-request-id": fmt.Sprintf("console-limited-%d", i+1)}
		for k, v := range in {
			h[k] = v
		}
		if status, id, body := call(t, base, h, chatBody("mock-limited", "count me", false)); status != want {
			t.Fatalf("mock-limited call %d (%s): %d %s", i+1, id, status, body)
		}
	}
	// Async calls report their status on a channel; the test goroutine checks them.
	async := func(id string, extra ...string) chan int {
		done := make(chan int, 1)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(chatBody("mock-busy", "wait for me", false)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-mock-scope", scope)
		req.Header.Set("x-request-id", id)
		for i := 0; i+1 < len(extra); i += 2 {
			req.Header.Set(extra[i], extra[i+1])
		}
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		return done
	}
	holding := async("console-busy-1", "x-mock-latency", "ttfc=700ms;between=0ms")
	waitGauge(t, base, "mockgateway_model_running", "mock-busy", 1)
	waiting := async("console-busy-2")
	waitGauge(t, base, "mockgateway_model_queued", "mock-busy", 1)
	if status, id, body := call(t, base, map[string]string{"x-mock-scope": scope, "x-request-id": "console-busy-3"}, chatBody("mock-busy", "no room", false)); status != 503 {
		t.Fatalf("mock-busy, past the queue (%s): %d %s", id, status, body)
	}
	if h, w := <-holding, <-waiting; h != 200 || w != 200 {
		t.Fatalf("mock-busy: the holding call %d, the waiting one %d", h, w)
	}
	return "console-limited-3", "console-busy-3", "console-busy-2"
}

// consoleLimits: the calls view marks a call a simulated quota refused with the limit it hit,
// one refused as overloaded, and one that waited for its model's capacity with its wait; the
// limits filter keeps either kind; a call's page says which limit refused it or how long it
// waited.
func consoleLimits(t *testing.T, b *browser) {
	cat := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(cat, []byte(limitsCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	in := startService(t, nil, "--catalog", cat)
	const scope = "console-limits"
	refused, overloaded, queued := seedLimits(t, in.URL, scope)

	tb := b.newTab(t)
	tb.do(chromedp.Navigate(in.URL + "/#/calls"))
	tb.do(chromedp.SendKeys(chromedp.ID("f-scope"), scope))
	tb.waitFor(rowsWhere(6, true, `c[2] === `+js(scope)))
	cell := func(id string) string {
		return `document.querySelector('#calls-table tbody tr[data-request-id=` + js(id) + `] td:nth-child(14)')`
	}
	tb.waitFor(cell(refused) + `?.textContent === 'quota: requests' && ` + cell(refused) + `.dataset.limit === 'requests'`)
	tb.waitFor(cell(overloaded) + `?.textContent === 'overloaded'`)
	tb.waitFor(`/^queued [0-9.]+ (ms|s)$/.test(` + cell(queued) + `?.textContent ?? '')`)
	tb.waitFor(`document.querySelector('#calls-table tbody tr[data-request-id=` + js(refused) + `]').classList.contains('refused')`)

	pick := func(v string) {
		eval[chromedp.Void](tb, `(() => { const s = document.getElementById('f-limits'); s.value = `+js(v)+`; s.dispatchEvent(new Event('change')); })()`)
	}
	pick("refused")
	tb.waitFor(rowsWhere(2, true, `c[13] === 'quota: requests' || c[13] === 'overloaded'`))
	pick("queued")
	tb.waitFor(rowsWhere(1, true, `c[1] === `+js(queued)))
	pick("")
	tb.waitFor(rowsWhere(6, true, "true"))

	// The quota panel: mock-limited's buckets for the one organization that called it, its
	// requests spent, one day's requests less the two admitted; nothing for mock-busy, which has
	// no quota; nothing in another scope.
	quota := `document.querySelector('#quotas-table tbody tr[data-model="mock-limited"]')`
	tb.waitFor(`(() => { const r = ` + quota + `; if (!r || document.querySelectorAll('#quotas-table tbody tr').length !== 1) return false;
		const c = [...r.cells].map((x) => x.textContent);
		return /^org-[0-9a-f]+$/.test(c[1]) && c[2] === 'rpm 2, tpm 50000 per 1 min; rpd 100' && /^0 \/ 2 · full in [0-9.]+ s$/.test(c[3]) &&
			/^[0-9]+ \/ 50000 · full/.test(c[4]) && /^98 \/ 100 · full in [0-9]+ min( [0-9]+ s)?$/.test(c[5]) && c.length === 6 &&
			[...document.querySelectorAll('#quotas-table th')].map((h) => h.textContent).join('|') === "model|organization|limits|requests left|tokens left|today's requests left" && !document.getElementById('quotas-table').hidden; })()`)
	if org := eval[string](tb, quota+`.dataset.org`); org == "" || strings.Contains(org, "sk-") {
		t.Errorf("organization %q", org)
	}
	tb.screenshot("console-quotas.png")
	eval[chromedp.Void](tb, `(() => { const i = document.getElementById('f-scope'); i.value = 'console-limits-none'; i.dispatchEvent(new Event('input')); })()`)
	tb.waitFor(`document.getElementById('quotas-table').hidden && document.getElementById('quotas-note').textContent.startsWith('No quota buckets in scope console-limits-none')`)
	eval[chromedp.Void](tb, `(() => { const i = document.getElementById('f-scope'); i.value = `+js(scope)+`; i.dispatchEvent(new Event('input')); })()`)
	tb.waitFor(rowsWhere(6, true, `c[2] === `+js(scope)) + ` && ` + quota)

	tb.do(chromedp.Click(chromedp.CSS(`#calls-table tbody tr[data-request-id=` + js(refused) + `] a`)))
	tb.waitFor(`document.getElementById('call-limits').textContent.includes('refused byquota: requests')`)
	tb.waitFor(`document.getElementById('call-logline').textContent.includes('limit_hit=requests')`)
	eval[chromedp.Void](tb, `location.hash = '#/calls/`+queued+`?scope=`+scope+`'`)
	tb.waitFor(`/^queued[0-9.]+ (ms|s) waiting for a place/.test(document.getElementById('call-limits').textContent)`)
	tb.waitFor(`/queue_ms=[0-9.]+/.test(document.getElementById('call-logline').textContent)`)
	if text := eval[string](tb, `document.body.innerText`); strings.Contains(text, "sk-console-limits") {
		t.Error("the client key is on the page")
	}
	var quotas bool
	for u, bs := range tb.responseBodies(in.URL) {
		quotas = quotas || strings.Contains(u, "/_mock/quotas")
		for _, b := range bs {
			if strings.Contains(b, "sk-console-limits") {
				t.Errorf("the client key is in the answer to %s", u)
			}
		}
	}
	if !quotas {
		t.Error("the page read no quota buckets")
	}
}
