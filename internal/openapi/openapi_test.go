package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/apierr"
	"mockgateway/internal/protocol"
)

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// docAt returns the value at a JSON pointer of the document.
func docAt(t *testing.T, ptr string) any {
	t.Helper()
	var v any = decode(t, Document())
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(x) {
				t.Fatalf("%s: no %s", ptr, tok)
			}
			v = x[i]
		default:
			t.Fatalf("%s: no %s", ptr, tok)
		}
	}
	if v == nil {
		t.Fatalf("%s: not in the document", ptr)
	}
	return v
}

// compileSchema compiles the document's schema at ptr (a JSON pointer).
func compileSchema(t *testing.T, ptr string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("openapi.json", decode(t, Document())); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("openapi.json#" + ptr)
	if err != nil {
		t.Fatalf("%s: %v", ptr, err)
	}
	return s
}

// TestOpenAPIDocumentIsOpenAPI31 validates the document against the official OpenAPI 3.1
// schemas (vendored in testdata, see its README): the structure, and with schema-base every
// Schema Object against the OAS dialect of JSON Schema 2020-12.
func TestOpenAPIDocumentIsOpenAPI31(t *testing.T) {
	c := jsonschema.NewCompiler()
	for file, id := range map[string]string{
		"oas-3.1-schema-2022-10-07.json":      "https://spec.openapis.org/oas/3.1/schema/2022-10-07",
		"oas-3.1-schema-base-2022-10-07.json": "https://spec.openapis.org/oas/3.1/schema-base/2022-10-07",
		"oas-3.1-dialect-base.json":           "https://spec.openapis.org/oas/3.1/dialect/base",
		"oas-3.1-meta-base.json":              "https://spec.openapis.org/oas/3.1/meta/base",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(id, decode(t, b)); err != nil {
			t.Fatal(err)
		}
	}
	structure, err := c.Compile("https://spec.openapis.org/oas/3.1/schema/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	withSchemas, err := c.Compile("https://spec.openapis.org/oas/3.1/schema-base/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*jsonschema.Schema{"schema": structure, "schema-base": withSchemas} {
		if err := s.Validate(decode(t, Document())); err != nil {
			t.Errorf("openapi.json is not a valid OpenAPI 3.1 document (%s): %v", name, err)
		}
	}
	// The schemas do hold the document to them: a stray top-level key fails the structure, and
	// a broken Schema Object fails schema-base.
	bad := bytes.Replace(Document(), []byte(`"openapi": "3.1.0",`), []byte(`"openapi": "3.1.0", "x_typo": 1,`), 1)
	if structure.Validate(decode(t, bad)) == nil {
		t.Error("a document with an unknown top-level key validated")
	}
	bad = bytes.Replace(Document(), []byte(`"type": "integer"`), []byte(`"type": "integr"`), 1)
	if bytes.Equal(bad, Document()) || withSchemas.Validate(decode(t, bad)) == nil {
		t.Error("a document with an invalid Schema Object validated against schema-base")
	}

	// Every component schema compiles (every $ref resolves) and is used.
	var parsed struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &parsed); err != nil {
		t.Fatal(err)
	}
	for name := range parsed.Components.Schemas {
		compileSchema(t, "/components/schemas/"+name)
		if !bytes.Contains(Document(), []byte(`"#/components/schemas/`+name+`"`)) {
			t.Errorf("components/schemas/%s is never referenced", name)
		}
	}
}

// errorResponseCodes reads the code enum and type const of each ErrorNNN response.
// dialectTypes are the error types OpenAI's dialect writes in place of apierr's, by status: a
// quota's refusal (rate_limit_exceeded) has the limit it hit, an overloaded model
// (server_is_overloaded) service_unavailable_error.
var dialectTypes = map[int][]string{429: {"requests", "tokens"}, 503: {"service_unavailable_error"}}

func errorResponseCodes(t *testing.T) map[int]struct {
	Type  string
	Codes []string
} {
	t.Helper()
	var parsed struct {
		Components struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Properties struct {
							Error struct {
								Properties struct {
									Type struct {
										Const string   `json:"const"`
										Enum  []string `json:"enum"`
									} `json:"type"`
									Code struct {
										Enum []string `json:"enum"`
									} `json:"code"`
								} `json:"properties"`
							} `json:"error"`
						} `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &parsed); err != nil {
		t.Fatal(err)
	}
	out := map[int]struct {
		Type  string
		Codes []string
	}{}
	for name, r := range parsed.Components.Responses {
		if name == "AnthropicError" || name == "GeminiError" {
			continue // Anthropic's and Google's envelopes of the same codes (internal/server's TestMessagesErrors, TestGoogleErrors)
		}
		status, err := strconv.Atoi(strings.TrimPrefix(name, "Error"))
		if err != nil || !strings.HasPrefix(name, "Error") {
			t.Errorf("components/responses/%s: only ErrorNNN responses are expected", name)
			continue
		}
		p := r.Content["application/json"].Schema.Properties.Error.Properties
		codes := slices.Clone(p.Code.Enum)
		slices.Sort(codes)
		typ := p.Type.Const
		if typ == "" && len(p.Type.Enum) > 0 {
			// apierr's type first, then the types a dialect words the same status with
			// (OpenAI's quota refusal: quotaTypes).
			typ = p.Type.Enum[0]
			if !slices.Equal(p.Type.Enum[1:], dialectTypes[status]) {
				t.Errorf("components/responses/%s: types %v: only apierr's and OpenAI's own %v", name, p.Type.Enum, dialectTypes[status])
			}
		}
		out[status] = struct {
			Type  string
			Codes []string
		}{typ, codes}
	}
	return out
}

// TestOpenAPIErrorCodesAreApierrs: the envelope's closed code list is exactly apierr's, and each
// status's response lists exactly the codes apierr gives that status, with their type; so a
// code added there without the document fails here.
func TestOpenAPIErrorCodesAreApierrs(t *testing.T) {
	var got []string
	for _, c := range docAt(t, "/components/schemas/ErrorEnvelope/properties/error/properties/code/enum").([]any) {
		got = append(got, c.(string))
	}
	var want []string
	byStatus := map[int][]string{}
	typeOf := map[int]string{}
	types := map[string]bool{}
	for _, c := range apierr.Codes() {
		e := apierr.New(c, "", "")
		want = append(want, string(c))
		byStatus[e.Status] = append(byStatus[e.Status], string(c))
		if typeOf[e.Status] != "" && typeOf[e.Status] != e.Type {
			t.Fatalf("status %d has two error types in apierr: the document's per-status type cannot say so", e.Status)
		}
		typeOf[e.Status] = e.Type
		types[e.Type] = true
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the document's codes %v\nare not apierr's %v", got, want)
	}

	var gotTypes []string
	for _, ty := range docAt(t, "/components/schemas/ErrorEnvelope/properties/error/properties/type/enum").([]any) {
		gotTypes = append(gotTypes, ty.(string))
	}
	for _, tys := range dialectTypes {
		for _, ty := range tys {
			types[ty] = true
		}
	}
	wantTypes := slices.Sorted(func(yield func(string) bool) {
		for ty := range types {
			if !yield(ty) {
				return
			}
		}
	})
	slices.Sort(gotTypes)
	if !slices.Equal(gotTypes, wantTypes) {
		t.Errorf("the document's error types %v are not apierr's %v", gotTypes, wantTypes)
	}

	responses := errorResponseCodes(t)
	for status, codes := range byStatus {
		slices.Sort(codes)
		r, ok := responses[status]
		switch {
		case !ok:
			t.Errorf("apierr has status %d (%v) but the document has no Error%d response", status, codes, status)
		case !slices.Equal(r.Codes, codes) || r.Type != typeOf[status]:
			t.Errorf("Error%d lists %s %v; apierr gives that status %s %v", status, r.Type, r.Codes, typeOf[status], codes)
		}
		if ok && http.StatusText(status) == "" {
			t.Errorf("status %d is not an HTTP status", status)
		}
	}
	for status := range responses {
		if _, ok := byStatus[status]; !ok {
			t.Errorf("Error%d: apierr has no code with that status", status)
		}
	}
}

// TestOpenAPIConstantsAreTheServices: the answer's fixed fields, the choice limit and the
// document's version are the ones the code uses.
func TestOpenAPIConstantsAreTheServices(t *testing.T) {
	for _, c := range []struct {
		ptr  string
		want any
	}{
		{"/components/schemas/ChatCompletion/properties/system_fingerprint/const", protocol.SystemFingerprint},
		{"/components/schemas/ChatCompletion/properties/service_tier/const", protocol.ServiceTier},
		{"/components/schemas/ChatCompletionChunk/properties/system_fingerprint/const", protocol.SystemFingerprint},
		{"/components/schemas/ChatCompletionChunk/properties/service_tier/const", protocol.ServiceTier},
		{"/components/schemas/ChatCompletionRequest/properties/n/maximum", json.Number(strconv.Itoa(protocol.DefaultMaxChoices))},
		{"/components/schemas/ChatCompletionRequest/properties/stop/anyOf/1/maxItems", json.Number("4")},
		{"/components/schemas/ChatCompletionRequest/properties/max_tokens/maximum", json.Number(strconv.Itoa(protocol.MaxBudget))},
		{"/components/schemas/ChatCompletionRequest/properties/max_completion_tokens/maximum", json.Number(strconv.Itoa(protocol.MaxBudget))},
		{"/components/schemas/ResponsesRequest/properties/max_output_tokens/maximum", json.Number(strconv.Itoa(protocol.MaxBudget))},
		{"/components/schemas/Response/properties/service_tier/const", protocol.ServiceTier},
	} {
		if got := docAt(t, c.ptr); got != c.want {
			t.Errorf("%s = %v, want %v", c.ptr, got, c.want)
		}
	}
	// The binary's version, from cmd/mockgateway (a main package, so read, not imported).
	src, err := os.ReadFile("../../cmd/mockgateway/run.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^var version = "([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("cmd/mockgateway/run.go: no var version")
	}
	if got := docAt(t, "/info/version"); got != string(m[1]) {
		t.Errorf("info.version = %v, the binary is %s", got, m[1])
	}
}
