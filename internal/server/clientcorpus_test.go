package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpusEntry is one request body a real client library builds, recorded from the library's own
// source (testdata/clients/<client>/<case>.json). The file says where it came from, so that the
// entry can be checked again when the library moves on.
type corpusEntry struct {
	Client  string            `json:"client"`  // library name as its users know it
	Package string            `json:"package"` // package or module id
	Version string            `json:"version"` // the version whose source was read
	Source  string            `json:"source"`  // repository and file the body is built in
	Case    string            `json:"case"`    // chat, stream, tools, tool_round_trip, structured_output, …
	Notes   string            `json:"notes,omitempty"`
	Headers map[string]string `json:"headers,omitempty"` // headers the client sends (retry, timeout, SDK identity)
	Expect  *corpusExpect     `json:"expect,omitempty"`  // nil: accepted (200)
	// Calls, when given, are the tools mock-tools calls in answer to a JSON body, in order; an
	// empty list is a text answer. The body is a turn of an agent loop, which moves on, and
	// ends, only if the mock answers so (docs/protocol.md, mock-tools plays a whole agent).
	Calls *[]string       `json:"calls,omitempty"`
	Body  json.RawMessage `json:"body"`
}

// corpusExpect is the documented error for a body that the real API rejects too.
type corpusExpect struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Param  string `json:"param"`
	Why    string `json:"why"` // the real API's behaviour that justifies the error
}

func loadCorpus(t *testing.T) map[string]corpusEntry {
	t.Helper()
	return loadCorpusDir(t, "clients")
}

// loadCorpusDir loads testdata/<dir>/<client>/<case>.json: clients (Chat Completions) or
// responses-clients (the Responses API).
func loadCorpusDir(t *testing.T, dir string) map[string]corpusEntry {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	out := make(map[string]corpusEntry, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e corpusEntry
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if e.Client == "" || e.Package == "" || e.Version == "" || e.Source == "" || e.Case == "" || len(e.Body) == 0 {
			t.Fatalf("%s: client, package, version, source, case and body are required", f)
		}
		if e.Expect != nil && (e.Expect.Status == 0 || e.Expect.Code == "" || e.Expect.Why == "") {
			t.Fatalf("%s: expect needs status, code and why", f)
		}
		name, _ := filepath.Rel(filepath.Join("testdata", dir), f)
		out[filepath.ToSlash(name)] = e
	}
	return out
}

// TestClientCorpus sends every recorded client body, with the client's own headers, through the
// whole handler chain: each is answered 200 (a stream ends with [DONE]), or with the error the
// entry documents because the real API rejects the body too.
func TestClientCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	if len(corpus) == 0 {
		t.Fatal("no client corpus under testdata/clients")
	}
	h := newHarness(t)
	for name, e := range corpus {
		t.Run(name, func(t *testing.T) {
			var hdr []string
			for k, v := range e.Headers {
				hdr = append(hdr, k, v)
			}
			rr := h.do(http.MethodPost, chatPath, string(e.Body), hdr...)
			if e.Expect != nil {
				checkError(t, rr, e.Expect.Status, e.Expect.Code, e.Expect.Param)
				return
			}
			if rr.Code != http.StatusOK {
				t.Fatalf("%s %s (%s, %s): status %d: %s", e.Client, e.Version, e.Case, e.Source, rr.Code, rr.Body.String())
			}
			body := rr.Body.String()
			if strings.HasPrefix(rr.Header().Get("Content-Type"), "text/event-stream") {
				if !strings.HasSuffix(body, "data: [DONE]\n\n") || strings.Contains(body, `"error"`) {
					t.Fatalf("stream did not end cleanly:\n%s", body)
				}
				return
			}
			var c struct {
				Object  string `json:"object"`
				Choices []struct {
					Message struct {
						ToolCalls []struct {
							Function struct{ Name string } `json:"function"`
						} `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(rr.Body.Bytes(), &c); err != nil || c.Object != "chat.completion" || len(c.Choices) == 0 {
				t.Fatalf("not a chat completion: %s", body)
			}
			if e.Calls != nil {
				var called []string
				for _, tc := range c.Choices[0].Message.ToolCalls {
					called = append(called, tc.Function.Name)
				}
				checkCalls(t, *e.Calls, called)
			}
		})
	}
}

// TestResponsesClientCorpus does the same for the Responses API bodies the clients send
// (testdata/responses-clients): each is answered 200 — a response, or a stream that ends with
// response.completed or response.incomplete — or with the error its entry documents.
func TestResponsesClientCorpus(t *testing.T) {
	corpus := loadCorpusDir(t, "responses-clients")
	if len(corpus) < 40 {
		t.Fatalf("only %d entries under testdata/responses-clients", len(corpus))
	}
	h := newHarness(t)
	for name, e := range corpus {
		t.Run(name, func(t *testing.T) {
			var hdr []string
			for k, v := range e.Headers {
				hdr = append(hdr, k, v)
			}
			rr := h.do(http.MethodPost, "/v1/responses", string(e.Body), hdr...)
			if e.Expect != nil {
				checkError(t, rr, e.Expect.Status, e.Expect.Code, e.Expect.Param)
				return
			}
			if rr.Code != http.StatusOK {
				t.Fatalf("%s %s (%s, %s): status %d: %s", e.Client, e.Version, e.Case, e.Source, rr.Code, rr.Body.String())
			}
			if strings.HasPrefix(rr.Header().Get("Content-Type"), "text/event-stream") {
				if final, _, _ := checkEvents(t, name, readEvents(t, rr.Body.Bytes())); final == nil {
					t.Fatalf("stream did not end with the response:\n%s", rr.Body.String())
				}
				return
			}
			responseSchema, _ := officialSchemas(t)
			validateOfficial(t, name, responseSchema, rr.Body.Bytes())
			if e.Calls != nil {
				var r struct {
					Output []struct{ Type, Name string } `json:"output"`
				}
				if err := json.Unmarshal(rr.Body.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				var called []string
				for _, it := range r.Output {
					if it.Type == "function_call" {
						called = append(called, it.Name)
					}
				}
				checkCalls(t, *e.Calls, called)
			}
		})
	}
}

// checkCalls holds the tools an answer called to the ones its corpus entry expects.
func checkCalls(t *testing.T, want, called []string) {
	t.Helper()
	if strings.Join(called, ",") != strings.Join(want, ",") {
		t.Errorf("mock-tools called %q; the client's loop moves on only with %q", called, want)
	}
}
