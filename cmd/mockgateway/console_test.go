package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mockgateway/internal/console"
)

// consoleScreenshots are the images TestConsoleBrowser takes — written to docs/screenshots with
// MOCKGATEWAY_UPDATE_SCREENSHOTS=1 — and the only ones README.md may show
// (TestReadmeScreenshotsExist).
var consoleScreenshots = []string{"console-setup.png", "console-calls.png", "console-call.png", "console-quotas.png"}

const screenshotDir = "../../docs/screenshots"

// TestReadmeScreenshotsExist fails when README.md shows a screenshot the browser test does not
// produce, so the README cannot point at a stale or missing image.
func TestReadmeScreenshotsExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`docs/screenshots/([A-Za-z0-9._-]+\.png)`).FindAllStringSubmatch(string(readme), -1) {
		if _, err := os.Stat(filepath.Join(screenshotDir, m[1])); err != nil {
			t.Errorf("README.md shows %s, which is not committed: %v", m[0], err)
		}
		if !slices.Contains(consoleScreenshots, m[1]) {
			t.Errorf("README.md shows %s, which TestConsoleBrowser does not produce (it produces %v)", m[0], consoleScreenshots)
		}
	}
}

// TestConsoleServes checks the page's headers without a browser: the CSP, the asset types, no
// caching surprises, and 404 for an unknown asset.
func TestConsoleServes(t *testing.T) {
	in := startService(t, nil)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(in.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "/console/app.js") {
		t.Fatalf("GET /: %d %v", resp.StatusCode, resp.Header)
	}
	for path, ct := range map[string]string{"/console/app.js": "text/javascript", "/console/style.css": "text/css", "/console/dom.js": "text/javascript"} {
		resp, _ := get(path)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	if resp, _ := get("/console/nope.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /console/nope.js: %d, want 404", resp.StatusCode)
	}
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// rowsWhere is a JavaScript predicate over the calls table's rows: at least n rows (exactly n
// when exact), each satisfying cond (an expression over the row's cells, "c").
func rowsWhere(n int, exact bool, cond string) string {
	cmp := ">="
	if exact {
		cmp = "==="
	}
	return fmt.Sprintf(`(() => { const rows = [...document.querySelectorAll('#calls-table tbody tr')];
		return rows.length %s %d && rows.every((r) => { const c = [...r.cells].map((x) => x.textContent); return %s; }); })()`, cmp, n, cond)
}
