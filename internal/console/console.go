// Package console serves the mock's embedded web console (docs/console.md): one page at GET /
// and its assets at GET /console/<asset>, all embedded with go:embed, so the page works offline
// and needs no build step. The page reads only the content-free endpoints (/v1/models,
// /_mock/fixtures, /_mock/journal, /_mock/quotas, /debug/traces, /metrics, /health) and renders
// every value as text.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy is the page's policy: everything from the service itself, no inline
// script or style, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"

// Prefix is the path under which the assets are served.
const Prefix = "/console/"

// contentTypes maps the asset extensions to their types; an asset with another extension is not
// served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

type asset struct {
	body        []byte
	contentType string
}

// handler serves the page and its assets from memory: the files are read once, when the handler
// is made.
type handler struct {
	index  asset
	assets map[string]asset // by name below Prefix, e.g. "app.js"
}

// Handler returns the console: GET / is the page, GET /console/<asset> an asset; anything else
// under /console/ is 404. HEAD is answered as GET with no body.
func Handler() http.Handler {
	h := &handler{assets: map[string]asset{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "assets/")
		if name == "index.html" {
			h.index = asset{b, ct}
			return nil
		}
		h.assets[name] = asset{b, ct}
		return nil
	})
	if err != nil || h.index.body == nil {
		panic("console: embedded assets are incomplete") // a build problem, caught by the tests
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var a asset
	switch {
	case r.URL.Path == "/" || r.URL.Path == "/index.html":
		a = h.index
		w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
	case strings.HasPrefix(r.URL.Path, Prefix):
		var ok bool
		if a, ok = h.assets[strings.TrimPrefix(r.URL.Path, Prefix)]; !ok {
			http.NotFound(w, r)
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.contentType)
	hd.Set("Content-Length", strconv.Itoa(len(a.body)))
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}
