package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/apierr"
	"mockgateway/internal/openapi"
)

// openAPISchemas compiles the document's component schemas for validating what the server
// writes.
func openAPISchemas(t *testing.T) func(name string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	return func(name string) *jsonschema.Schema {
		t.Helper()
		s, err := c.Compile("openapi.json#/components/schemas/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func validateJSON(t *testing.T, s *jsonschema.Schema, what string, b []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not JSON: %v", what, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match the OpenAPI document: %v", what, err)
	}
}

// TestOpenAPIDescribesWhatIsServed holds the document to the service: every golden answer, every
// chunk of every golden stream, every error code's envelope as the error writer writes it, and
// fresh answers of each model, JSON and streamed, validate against its schemas.
func TestOpenAPIDescribesWhatIsServed(t *testing.T) {
	schema := openAPISchemas(t)
	completion, chunk, envelope := schema("ChatCompletion"), schema("ChatCompletionChunk"), schema("ErrorEnvelope")

	goldens, _ := filepath.Glob("testdata/*.golden")
	var answers, chunks int
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case bytes.HasPrefix(b, []byte("data: ")):
			chunks += validateStream(t, chunk, envelope, g, b)
		case strings.HasPrefix(filepath.Base(g), "models"):
			validateJSON(t, schema("ModelList"), g, b)
		default:
			validateJSON(t, completion, g, b)
			answers++
		}
	}
	if answers < 2 || chunks < 10 {
		t.Fatalf("too few goldens checked: %d answers, %d chunks", answers, chunks)
	}

	h := newHarness(t)
	for _, body := range []string{
		chatBody("mock-echo", `"n":2`), chatBody("mock-chat", `"max_tokens":3`),
		chatBody("mock-chat", `"response_format":{"type":"json_object"}`),
		chatBody("mock-tools", `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}]`),
	} {
		rr := h.do("POST", chatPath, body)
		validateJSON(t, completion, body, rr.Body.Bytes())
		stream := h.do("POST", chatPath, strings.TrimSuffix(body, "}")+`,"stream":true,"stream_options":{"include_usage":true}}`)
		validateStream(t, chunk, envelope, body, stream.Body.Bytes())
	}
	validateStream(t, chunk, envelope, "stream_error", h.do("POST", chatPath, chatBody("mock-chat", `"stream":true`), "X-Mock-Fault", "stream_error;after=2").Body.Bytes())
	validateJSON(t, schema("Model"), "GET /v1/models/mock-echo", h.do("GET", "/v1/models/mock-echo", "").Body.Bytes())
	validateJSON(t, schema("Health"), "GET /health", h.do("GET", "/health", "").Body.Bytes())

	for _, code := range apierr.Codes() {
		rr := httptest.NewRecorder()
		writeError(rr, httptest.NewRequest("GET", "/", nil), apierr.New(code, "messages[0].content", "A message."))
		validateJSON(t, envelope, string(code), rr.Body.Bytes())
		rr = httptest.NewRecorder()
		writeError(rr, httptest.NewRequest("GET", "/", nil), apierr.New(code, "", "A message."))
		validateJSON(t, envelope, string(code)+" without param", rr.Body.Bytes())
	}
}

// validateStream checks every data frame of an SSE transcript against the chunk schema (or the
// error envelope, for an error frame) and that it ends with [DONE]; it returns the chunk count.
func validateStream(t *testing.T, chunk, envelope *jsonschema.Schema, what string, b []byte) int {
	t.Helper()
	n := 0
	done := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Errorf("%s: not a data line: %q", what, line)
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if strings.HasPrefix(data, `{"error"`) {
			validateJSON(t, envelope, what+" error frame", []byte(data))
			continue
		}
		validateJSON(t, chunk, what+" chunk", []byte(data))
		n++
	}
	if !done {
		t.Errorf("%s: no data: [DONE]", what)
	}
	return n
}

// TestOpenAPIRequestSchema: every client corpus body the mock accepts validates against the
// document's request schema, and the strictness matches: an unknown field does not.
func TestOpenAPIRequestSchema(t *testing.T) {
	request := openAPISchemas(t)("ChatCompletionRequest")
	files, _ := filepath.Glob("testdata/clients/*/*.json")
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Expect *struct{} `json:"expect"`
			Body   json.RawMessage
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		if c.Expect != nil {
			continue // a body the real API rejects too
		}
		validateJSON(t, request, f, c.Body)
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d corpus bodies checked", checked)
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"model":"mock-chat","messages":[{"role":"user","content":"hi"}],"temprature":1}`))
	if request.Validate(v) == nil {
		t.Error("a body with an unknown field validated")
	}
}

func TestOpenAPIServed(t *testing.T) {
	rr := newHarness(t).do("GET", "/openapi.json", "")
	if rr.Code != http.StatusOK || rr.Header().Get("Content-Type") != "application/json" || rr.Header().Get("X-Request-Id") == "" {
		t.Fatalf("status %d, headers %v", rr.Code, rr.Header())
	}
	if !bytes.Equal(rr.Body.Bytes(), openapi.Document()) {
		t.Error("the body is not the embedded document")
	}
}
