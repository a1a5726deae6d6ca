package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// officialDigest is the SHA-256 of OpenAI's openapi.json that testdata vendors (gzipped).
const officialDigest = "bbfd19abcde0e7412da99378deb2a959ccdd3a812f97c9e35901921e8e973f9a"

var official struct {
	once            sync.Once
	err             error
	response, event *jsonschema.Schema
}

// officialSchemas compiles Response and ResponseStreamEvent of OpenAI's own OpenAPI document
// (2.3.0, internal/openapi/testdata/README.md), once for the package's tests.
func officialSchemas(t *testing.T) (response, event *jsonschema.Schema) {
	t.Helper()
	official.once.Do(func() {
		f, err := os.Open("../openapi/testdata/openai-openapi-2.3.0.json.gz")
		if err != nil {
			official.err = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			official.err = err
			return
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			official.err = err
			return
		}
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != officialDigest {
			official.err = io.ErrUnexpectedEOF
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			official.err = err
			return
		}
		c := jsonschema.NewCompiler()
		// The document says OpenAPI 3.1 (JSON Schema 2020-12), but CompoundFilter uses 2019-09's
		// boolean $recursiveAnchor, which 2020-12's metaschema refuses; nothing else in it
		// differs between the two drafts' keywords it uses, so it is compiled as 2019-09.
		c.DefaultDraft(jsonschema.Draft2019)
		if official.err = c.AddResource("openai.json", doc); official.err != nil {
			return
		}
		if official.response, official.err = c.Compile("openai.json#/components/schemas/Response"); official.err != nil {
			return
		}
		official.event, official.err = c.Compile("openai.json#/components/schemas/ResponseStreamEvent")
	})
	if official.err != nil {
		t.Fatalf("OpenAI's OpenAPI document: %v", official.err)
	}
	return official.response, official.event
}

func validateOfficial(t *testing.T, what string, s *jsonschema.Schema, b []byte) map[string]any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: not JSON: %v: %q", what, err, b)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s is not valid against OpenAI's OpenAPI document: %v\n%s", what, err, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sseEvent is one event of a Responses stream.
type sseEvent struct {
	name string
	data map[string]any
	raw  []byte
}

// readEvents parses a Responses stream: every frame an `event:` line naming the data's type, a
// `data:` line, a blank line; no [DONE].
func readEvents(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 4<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "event: "):
			if name != "" {
				t.Fatalf("two event lines in a row: %q", line)
			}
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			if name == "" || string(data) == "[DONE]" {
				t.Fatalf("a data line without its event line, or [DONE]: %q", line)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if m["type"] != name {
				t.Errorf("event: %s carries type %v", name, m["type"])
			}
			out = append(out, sseEvent{name: name, data: m, raw: data})
			name = ""
		default:
			t.Fatalf("not an SSE line of a Responses stream: %q", line)
		}
	}
	return out
}

// checkEvents holds a stream to OpenAI's schemas and framing rules, and returns its last
// Response, the concatenated text deltas and the count of deltas.
func checkEvents(t *testing.T, what string, events []sseEvent) (final map[string]any, text string, deltas int) {
	t.Helper()
	_, eventSchema := officialSchemas(t)
	if len(events) < 3 || events[0].name != "response.created" || events[1].name != "response.in_progress" {
		t.Fatalf("%s: a stream opens with response.created and response.in_progress: %v", what, names(events))
	}
	var b strings.Builder
	for i, e := range events {
		validateOfficial(t, what+" "+e.name, eventSchema, e.raw)
		if seq, _ := e.data["sequence_number"].(float64); int(seq) != i {
			t.Errorf("%s: event %d (%s) has sequence_number %v", what, i, e.name, e.data["sequence_number"])
		}
		switch e.name {
		case "response.output_text.delta", "response.refusal.delta":
			b.WriteString(e.data["delta"].(string))
			deltas++
		case "response.function_call_arguments.delta":
			deltas++
		}
	}
	last := events[len(events)-1]
	switch last.name {
	case "response.completed", "response.incomplete":
		final = last.data["response"].(map[string]any)
	case "error":
	default:
		t.Errorf("%s: the stream ends with %s", what, last.name)
	}
	return final, b.String(), deltas
}

func names(events []sseEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.name)
	}
	return out
}

// outputText is the text of a Response's message items, as the SDKs' output_text helpers join it.
func outputText(resp map[string]any) string {
	var b strings.Builder
	for _, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		if item["type"] != "message" {
			continue
		}
		for _, p := range item["content"].([]any) {
			part := p.(map[string]any)
			if s, ok := part["text"].(string); ok {
				b.WriteString(s)
			}
			if s, ok := part["refusal"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// TestResponsesConformToOpenAI sends every case as a JSON call and as a stream: the answer and
// every event are valid against OpenAI's own OpenAPI document, the stream's deltas spell the JSON
// answer's text and number its output tokens, and the same request gets the same answer.
func TestResponsesConformToOpenAI(t *testing.T) {
	responseSchema, _ := officialSchemas(t)
	h := newHarness(t)
	for _, tc := range responsesCases {
		t.Run(tc.name, func(t *testing.T) {
			rr := h.do(http.MethodPost, "/v1/responses", tc.body)
			if rr.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rr.Code, rr.Body)
			}
			if rr.Header().Get("x-request-id") == "" {
				t.Error("no x-request-id")
			}
			resp := validateOfficial(t, "answer", responseSchema, rr.Body.Bytes())
			if resp["status"] != tc.status {
				t.Errorf("status %v, want %s", resp["status"], tc.status)
			}
			again := h.do(http.MethodPost, "/v1/responses", tc.body)
			var second map[string]any
			_ = json.Unmarshal(again.Body.Bytes(), &second)
			if second["id"] != resp["id"] || outputText(second) != outputText(resp) {
				t.Errorf("the same request got another answer: %v %v", resp["id"], second["id"])
			}
			output := resp["output"].([]any)
			isCall := output[0].(map[string]any)["type"] == "function_call"
			if isCall != tc.calls {
				t.Errorf("function calls %v, want %v: %s", isCall, tc.calls, rr.Body)
			}

			streamed := h.do(http.MethodPost, "/v1/responses", `{"stream":true,`+tc.body[1:])
			if ct := streamed.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("stream content type %q", ct)
			}
			final, text, deltas := checkEvents(t, "stream", readEvents(t, streamed.Body.Bytes()))
			if final == nil {
				t.Fatal("the stream did not complete")
			}
			if final["status"] != tc.status {
				t.Errorf("stream status %v, want %s", final["status"], tc.status)
			}
			if text != outputText(final) {
				t.Errorf("the deltas spell %q, the final response %q", text, outputText(final))
			}
			usage := final["usage"].(map[string]any)
			if int(usage["output_tokens"].(float64)) != deltas {
				t.Errorf("%d deltas, output_tokens %v", deltas, usage["output_tokens"])
			}
			if !tc.calls && text != outputText(resp) {
				t.Errorf("the stream spells %q, the JSON answer %q", text, outputText(resp))
			}
			if !tc.calls && usage["output_tokens"] != resp["usage"].(map[string]any)["output_tokens"] {
				t.Errorf("the stream counts %v output tokens, the JSON answer %v", usage["output_tokens"], resp["usage"])
			}
		})
	}
}
