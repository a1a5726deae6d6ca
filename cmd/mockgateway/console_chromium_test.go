package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// pageWatch collects what a tab must not show (exceptions, console errors, CSP and other
// non-network log errors) and the responses it loaded.
type pageWatch struct {
	mu       sync.Mutex
	problems []string
	urls     map[network.RequestID]string
	finished []network.RequestID
}

func (w *pageWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		w.problems = append(w.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, msg))
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range e.Args {
				if a.Description != "" {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, string(a.Value))
				}
			}
			w.problems = append(w.problems, "console.error: "+strings.Join(parts, " "))
		}
	case *cdplog.EventEntryAdded:
		// Network errors (a 401 while the page has no key, a 400 for a half-typed scope) are
		// answers the page handles; anything else at error level (a CSP violation) is a problem.
		if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
			w.problems = append(w.problems, fmt.Sprintf("log %s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventResponseReceived:
		w.urls[e.RequestID] = e.Response.URL
	case *network.EventLoadingFinished:
		w.finished = append(w.finished, e.RequestID)
	}
}

func (w *pageWatch) Problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.problems)
}

// tab is one browser tab on the console.
type tab struct {
	t     *testing.T
	ctx   context.Context
	watch *pageWatch
}

type browser struct{ ctx context.Context }

func startBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: `make deps` installs Debian's chromium package, which the console's browser test drives")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(func() { bcancel(); acancel() })
	start, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	// The first Run starts the browser; it needs a context without a deadline, so the timeout
	// only guards the wait.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(bctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("starting chromium: %v", err)
		}
	case <-start.Done():
		t.Fatal("chromium did not start within 60s")
	}
	return &browser{ctx: bctx}
}

// newTab opens a tab with a 1280×900 viewport; the test fails if the page throws or logs an
// error while the tab is open.
func (b *browser) newTab(t *testing.T) *tab {
	t.Helper()
	w := &pageWatch{urls: map[network.RequestID]string{}}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithListener(w.listen))
	tb := &tab{t: t, ctx: ctx, watch: w}
	t.Cleanup(func() {
		cancel()
		for _, p := range w.Problems() {
			t.Errorf("page: %s", p)
		}
	})
	// The first Run opens the tab, which lives as long as that Run's context: no timeout here.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return tb
}

func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("browser: %v (page problems: %v)", err, tb.watch.Problems())
	}
}

// eval evaluates expr in the page and decodes its value.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is truthy.
func (tb *tab) waitFor(expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(25*time.Second))); err != nil {
		tb.t.Fatalf("waiting for %s: %v (page problems: %v)", expr, err, tb.watch.Problems())
	}
}

func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	if !slices.Contains(consoleScreenshots, name) {
		tb.t.Fatalf("screenshot %s is not in consoleScreenshots", name)
	}
	if len(png) < 1000 || string(png[1:4]) != "PNG" {
		tb.t.Fatalf("screenshot %s is not a PNG (%d bytes)", name, len(png))
	}
	// The committed images change only when asked, as the golden files do: every run would
	// otherwise rewrite them (times and ids differ).
	dir := tb.t.TempDir()
	if os.Getenv("MOCKGATEWAY_UPDATE_SCREENSHOTS") != "" {
		dir = screenshotDir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// responseBodies returns the bodies of the responses the tab has loaded from base, by URL.
func (tb *tab) responseBodies(base string) map[string][]string {
	tb.t.Helper()
	tb.watch.mu.Lock()
	ids := slices.Clone(tb.watch.finished)
	urls := make(map[network.RequestID]string, len(ids))
	for _, id := range ids {
		urls[id] = tb.watch.urls[id]
	}
	tb.watch.mu.Unlock()
	out := map[string][]string{}
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	for _, id := range ids {
		u := urls[id]
		if !strings.HasPrefix(u, base) {
			continue
		}
		res, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (network.GetResponseBodyResult, error) {
			return cdp.Call(ctx, t, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
		})
		if err != nil {
			continue // evicted from the browser's buffer
		}
		out[u] = append(out[u], string(res.Body))
	}
	return out
}
