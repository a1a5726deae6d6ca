package console

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestServes(t *testing.T) {
	h := Handler()
	for path, ct := range map[string]string{"/": "text/html", "/console/app.js": "text/javascript", "/console/style.css": "text/css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), ct) || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: %d %v", path, rec.Code, rec.Header())
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Header().Get("Content-Security-Policy") != ContentSecurityPolicy {
		t.Errorf("CSP %q", rec.Header().Get("Content-Security-Policy"))
	}
	for _, path := range []string{"/console/nope.js", "/console/", "/console/../go.mod"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
}

// TestAssetsRenderAsText: no inline script or style (the CSP forbids them), nothing from
// another origin, and no markup built from strings.
func TestAssetsRenderAsText(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|https?://[a-z]`)
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := assets.ReadFile(p)
		s := string(b)
		switch {
		case strings.HasSuffix(p, ".js"):
			if m := banned.FindString(s); m != "" {
				t.Errorf("%s uses %s", p, m)
			}
		case strings.HasSuffix(p, ".html"):
			if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|\sstyle=|<style|\son[a-z]+=|https?://`).MatchString(s) {
				t.Errorf("%s has an inline script or style, a handler attribute or an external URL", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoThrowingDecode: decodeURIComponent throws URIError on a malformed escape, and a link is
// whatever someone typed or cut; a throw in routing once left a blank page. Every decode of a
// URL part goes through app.js's decode, which catches it (the browser test opens
// #/calls/%E0%A4%A).
func TestNoThrowingDecode(t *testing.T) {
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, _ := assets.ReadFile(p)
		s := string(b)
		n := len(regexp.MustCompile(`decodeURI(?:Component)?\(`).FindAllString(s, -1))
		switch {
		case p == "assets/app.js" && (n != 1 || !regexp.MustCompile(`try \{\s*return decodeURIComponent\(s\);\s*\} catch`).MatchString(s)):
			t.Errorf("%s: decodeURI* outside decode's try (%d uses)", p, n)
		case p != "assets/app.js" && n > 0:
			t.Errorf("%s calls decodeURI*: use a decode that catches URIError", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
