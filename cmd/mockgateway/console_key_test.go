package main

import (
	"testing"

	"github.com/chromedp/chromedp"

	"mockgateway/internal/testutil"
)

// TestConsoleKey: with a local key the page asks for it once, keeps it in memory only and sends
// it on its fetches. An end-to-end test: it drives chromium (startBrowser).
func TestConsoleKey(t *testing.T) {
	testutil.EndToEnd(t)
	const key = "console-test-key-7f3a"
	in := startService(t, map[string]string{"MOCKGATEWAY_API_KEY": key})
	b := startBrowser(t)
	tb := b.newTab(t)
	tb.do(chromedp.Navigate(in.URL + "/"))
	tb.waitFor(`!document.getElementById('key-prompt').hidden`)
	tb.waitFor(`document.getElementById('key-status').textContent.startsWith('required')`)
	tb.do(chromedp.SendKeys(chromedp.ID("key-input"), "wrong"), chromedp.Click(chromedp.ID("key-submit")))
	tb.waitFor(`document.getElementById('key-error').textContent.includes('refused')`)
	eval[chromedp.Void](tb, `document.getElementById('key-input').value = ''`)
	tb.do(chromedp.SendKeys(chromedp.ID("key-input"), key), chromedp.Click(chromedp.ID("key-submit")))
	tb.waitFor(`document.getElementById('key-prompt').hidden && document.querySelectorAll('#models-table tbody tr').length >= 6`)
	tb.do(chromedp.Click(chromedp.ID("nav-calls")))
	tb.waitFor(rowsWhere(1, false, "true"))
	if leaked := eval[bool](tb, `localStorage.length > 0 || sessionStorage.length > 0 || document.cookie !== '' || location.href.includes(`+js(key)+`) || document.body.innerText.includes(`+js(key)+`)`); leaked {
		t.Error("the key left the page's memory")
	}
}
