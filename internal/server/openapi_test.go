package server

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/openapi"
	"mockgateway/observability"
)

// apiDoc is the served OpenAPI document, with its schemas compiled on demand, and the tally of
// what has been held to it.
type apiDoc struct {
	t       *testing.T
	root    any
	c       *jsonschema.Compiler
	schemas map[string]*jsonschema.Schema

	documents, chunks, errors, events int
	codes                             map[string]bool
	responses                         map[string]bool // response objects (JSON pointers) exercised
}

func loadAPIDoc(t *testing.T) *apiDoc {
	t.Helper()
	root, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // date-time in /debug/traces
	if err := c.AddResource("openapi.json", root); err != nil {
		t.Fatal(err)
	}
	return &apiDoc{t: t, root: root, c: c, schemas: map[string]*jsonschema.Schema{}, codes: map[string]bool{}, responses: map[string]bool{}}
}

func pointerToken(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// at returns the value at a JSON pointer, or nil.
func (d *apiDoc) at(ptr string) any {
	v := d.root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]
	}
	return v
}

// deref follows an OpenAPI $ref (a local one: every $ref of the document is).
func (d *apiDoc) deref(ptr string) string {
	for {
		m, _ := d.at(ptr).(map[string]any)
		r, ok := m["$ref"].(string)
		if !ok {
			return ptr
		}
		ptr = strings.TrimPrefix(r, "#")
	}
}

func (d *apiDoc) schema(ptr string) *jsonschema.Schema {
	d.t.Helper()
	if s, ok := d.schemas[ptr]; ok {
		return s
	}
	s, err := d.c.Compile("openapi.json#" + ptr)
	if err != nil {
		d.t.Fatalf("%s: %v", ptr, err)
	}
	d.schemas[ptr] = s
	return s
}

func (d *apiDoc) validate(what, ptr string, b []byte) {
	d.t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		d.t.Errorf("%s: not JSON: %v: %q", what, err, b)
		return
	}
	if err := d.schema(ptr).Validate(v); err != nil {
		d.t.Errorf("%s does not match the OpenAPI document (%s): %v", what, ptr, err)
	}
	if obj, ok := v.(map[string]any); !ok {
	} else if e, ok := obj["error"].(map[string]any); ok {
		d.errors++
		if code, ok := e["code"].(string); ok { // Anthropic's envelope has none
			d.codes[code] = true
		}
	}
}

// matchTemplate reports whether path is an instance of the path template tpl.
func matchTemplate(tpl, path string) bool {
	ts, ps := strings.Split(tpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	// {rest}, last, is the rest of the path, however many segments (/v1/responses/{rest}).
	if n := len(ts); ts[n-1] == "{rest}" && len(ps) > n && strings.Join(ps[n-1:], "") != "" {
		ps = append(ps[:n-1], strings.Join(ps[n-1:], "/"))
	}
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if ts[i] != ps[i] && !matchSegment(ts[i], ps[i]) {
			return false
		}
	}
	return true
}

// matchSegment matches a variable segment: {x} any non-empty one, {x}:method (Gemini's) one
// that ends with :method and holds no other colon.
func matchSegment(tpl, seg string) bool {
	if !strings.HasPrefix(tpl, "{") || seg == "" {
		return false
	}
	_, suffix, _ := strings.Cut(tpl, "}")
	if suffix == "" {
		return true
	}
	head, ok := strings.CutSuffix(seg, suffix)
	return ok && head != "" && !strings.Contains(head, ":")
}

// responseFor finds the response object the document gives for method, path and status: the
// operation's, or for a path or method the document has no operation for, the ErrorNNN response
// that info.description sends such requests to.
func (d *apiDoc) responseFor(what, method, path string, status int) string {
	d.t.Helper()
	path, _, _ = strings.Cut(path, "?")
	// A template with a method after its variable (Gemini's {model}:generateContent) first: a
	// bare {model} would take its segment too.
	tpls := slices.SortedFunc(maps.Keys(d.at("/paths").(map[string]any)), func(a, b string) int {
		return cmp.Compare(strings.Count(b, "}:"), strings.Count(a, "}:"))
	})
	for _, tpl := range tpls {
		if !matchTemplate(tpl, path) {
			continue
		}
		op := "/paths/" + pointerToken(tpl) + "/" + strings.ToLower(method)
		if d.at(op) == nil {
			// A known path, another method: 405 (or 401 first on /v1), in the envelope of the
			// path's dialect when it names one (Gemini's methods).
			for m := range d.at("/paths/" + pointerToken(tpl)).(map[string]any) {
				r := "/paths/" + pointerToken(tpl) + "/" + m + "/responses/" + strconv.Itoa(status)
				if ref, ok := d.at(r + "/$ref").(string); ok && strings.HasSuffix(ref, "/GeminiError") {
					return d.deref(r)
				}
			}
			break
		}
		for _, key := range []string{strconv.Itoa(status), "default"} {
			if r := op + "/responses/" + key; d.at(r) != nil {
				return d.deref(r)
			}
		}
		d.t.Errorf("%s: %s %s answered %d, which the document does not list", what, method, path, status)
		return ""
	}
	r := "/components/responses/Error" + strconv.Itoa(status)
	if status < 400 || d.at(r) == nil {
		d.t.Errorf("%s: %s %s is not in the document, yet answered %d", what, method, path, status)
		return ""
	}
	return r
}

// notDescribed are headers an OpenAPI document does not list: Content-Type is the content's key,
// X-Content-Type-Options a browser's, on every answer (docs/console.md), the others are the
// transport's.
var notDescribed = map[string]bool{"content-type": true, "content-length": true, "connection": true, "date": true, "x-content-type-options": true}

// conform holds one response to the document: its status is listed, its headers are declared
// (and required ones present, each value valid), its media type is a content key, and its body
// (every frame of a stream) validates against the content's schema.
func (d *apiDoc) conform(what, method, path string, rr *httptest.ResponseRecorder) {
	d.t.Helper()
	if ptr := d.responseFor(what, method, path, rr.Code); ptr != "" {
		d.conformTo(what, ptr, rr)
	}
}

func (d *apiDoc) conformTo(what, ptr string, rr *httptest.ResponseRecorder) {
	d.t.Helper()
	d.responses[ptr] = true
	d.headers(what, ptr, rr.Header())
	d.body(what, ptr, rr.Header().Get("Content-Type"), rr.Body.Bytes())
}

// headers checks that every header is declared by the response object at ptr, with a valid
// value, and that every header it requires is there.
func (d *apiDoc) headers(what, ptr string, header http.Header) {
	d.t.Helper()
	resp := d.at(ptr).(map[string]any)
	declared, _ := resp["headers"].(map[string]any)
	for name, values := range header {
		name = strings.ToLower(name)
		if notDescribed[name] {
			continue
		}
		if _, ok := declared[name]; !ok {
			d.t.Errorf("%s: header %s is not declared by %s", what, name, ptr)
			continue
		}
		h := d.deref(ptr + "/headers/" + pointerToken(name))
		b, _ := json.Marshal(values[0])
		d.validate(what+": header "+name, h+"/schema", b)
	}
	for name := range declared {
		h := d.deref(ptr + "/headers/" + pointerToken(name))
		if req, _ := d.at(h + "/required").(bool); req && header.Get(name) == "" {
			d.t.Errorf("%s: required header %s is missing", what, name)
		}
	}
	if header.Get("X-Request-Id") == "" {
		d.t.Errorf("%s: no x-request-id", what)
	}
}

// body checks that the media type is a content of the response object at ptr and that the body
// (every frame of a stream) validates against its schema.
func (d *apiDoc) body(what, ptr, contentType string, body []byte) {
	d.t.Helper()
	mt, _, err := mime.ParseMediaType(contentType)
	content := ptr + "/content/" + pointerToken(mt)
	if err != nil || d.at(content) == nil {
		d.t.Errorf("%s: content type %q is not a content of %s", what, contentType, ptr)
		return
	}
	switch mt {
	case "application/json":
		d.validate(what, content+"/schema", body)
		d.documents++
	case "text/event-stream":
		if seq, ok := d.at(content + "/x-sse-sequence-number").(bool); ok && !seq {
			d.anthropicEventStream(what, content+"/x-sse-data-schema", body) // POST /v1/messages
			break
		}
		if d.at(content+"/x-sse-event-name") != nil {
			d.eventStream(what, content+"/x-sse-data-schema", body) // named events (POST /v1/responses)
			break
		}
		done, marked := d.at(content + "/x-sse-done").(bool)
		d.stream(what, content+"/x-sse-data-schema", body, done || !marked)
	default:
		if len(body) == 0 {
			d.t.Errorf("%s: empty %s body", what, mt)
		}
	}
}

// stream checks an SSE transcript: only `data: …` frames, each followed by a blank line, every
// one before `data: [DONE]` valid against the frame schema, and [DONE] last.
func (d *apiDoc) stream(what, frameSchema string, b []byte, wantDone bool) {
	d.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	done, blank := false, true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			blank = true
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !blank || done {
			d.t.Errorf("%s: not an SSE data frame after a blank line, before [DONE]: %q", what, line)
			return
		}
		blank = false
		if data == "[DONE]" {
			done = true
			continue
		}
		d.validate(what+" frame", frameSchema, []byte(data))
		if !strings.HasPrefix(data, `{"error"`) {
			d.chunks++
		}
	}
	if done != wantDone || !blank {
		d.t.Errorf("%s: the stream does not end with data: [DONE] (%v) and a blank line", what, wantDone)
	}
}

// denormalize undoes the golden files' normalization of the completion id.
func denormalize(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`"chatcmpl-ID"`), []byte(`"chatcmpl-000000000000000000000000"`))
}

// TestOpenAPIGoldens: every golden answer and every frame of every golden stream validates
// against the response the document gives the request it answers.
func TestOpenAPIGoldens(t *testing.T) {
	d := loadAPIDoc(t)
	goldens, _ := filepath.Glob("testdata/*.golden")
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		// A golden file keeps the body only: its headers are held to the document when the
		// same requests are sent in TestOpenAPIResponsesConform.
		method, path, ct := http.MethodPost, chatPath, "application/json"
		if strings.HasPrefix(filepath.Base(g), "responses_") {
			path = "/v1/responses"
		}
		if strings.HasPrefix(filepath.Base(g), "messages_") {
			path = "/v1/messages"
		}
		switch {
		case bytes.HasPrefix(b, []byte("data: ")), bytes.HasPrefix(b, []byte("event: ")):
			ct = "text/event-stream; charset=utf-8"
		case strings.HasPrefix(filepath.Base(g), "models"), filepath.Base(g) == "messages_models.golden":
			method, path = http.MethodGet, "/v1/models"
		}
		if ptr := d.responseFor(g, method, path, http.StatusOK); ptr != "" {
			d.body(g, ptr, ct, denormalize(b))
		}
	}
	t.Logf("%d golden files: %d JSON documents, %d stream chunks", len(goldens), d.documents, d.chunks)
	if len(goldens) < 5 || d.chunks < 10 {
		t.Fatalf("too few goldens checked: %d files, %d chunks", len(goldens), d.chunks)
	}
}

func TestOpenAPIServed(t *testing.T) {
	rr := newHarness(t).do("GET", "/openapi.json", "")
	if rr.Code != http.StatusOK || rr.Header().Get("Content-Type") != "application/json" || !observability.ValidRequestID(rr.Header().Get("X-Request-Id")) {
		t.Fatalf("status %d, headers %v", rr.Code, rr.Header())
	}
	if !bytes.Equal(rr.Body.Bytes(), openapi.Document()) {
		t.Error("the body is not the embedded document")
	}
	if !json.Valid(rr.Body.Bytes()) {
		t.Error("the body is not JSON")
	}
}
