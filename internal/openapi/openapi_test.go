package openapi

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/apierr"
)

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDocumentIsOpenAPI31 validates the document against the OpenAPI 3.1 schema (vendored in
// testdata, see its README).
func TestDocumentIsOpenAPI31(t *testing.T) {
	meta, err := os.ReadFile("testdata/oas-3.1-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("oas.json", decode(t, meta)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("oas.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(decode(t, Document())); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
	// The schema does hold documents to it: a stray top-level key fails.
	bad := bytes.Replace(Document(), []byte(`"openapi": "3.1.0"`), []byte(`"openapi": "3.1.0", "x_typo": 1`), 1)
	if sch.Validate(decode(t, bad)) == nil {
		t.Error("a document with an unknown top-level key validated")
	}
	// Every $ref in the document resolves: compiling each component schema proves it.
	doc := jsonschema.NewCompiler()
	if err := doc.AddResource("openapi.json", decode(t, Document())); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &parsed); err != nil {
		t.Fatal(err)
	}
	for name := range parsed.Components.Schemas {
		if _, err := doc.Compile("openapi.json#/components/schemas/" + name); err != nil {
			t.Errorf("schema %s: %v", name, err)
		}
	}
}

// TestErrorCodesAreApierrs: the envelope's closed code list is exactly apierr's, so a code added
// there without the document fails here.
func TestErrorCodesAreApierrs(t *testing.T) {
	var parsed struct {
		Components struct {
			Schemas struct {
				ErrorEnvelope struct {
					Properties struct {
						Error struct {
							Properties struct {
								Code struct {
									Enum []string `json:"enum"`
								} `json:"code"`
							} `json:"properties"`
						} `json:"error"`
					} `json:"properties"`
				} `json:"ErrorEnvelope"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &parsed); err != nil {
		t.Fatal(err)
	}
	got := parsed.Components.Schemas.ErrorEnvelope.Properties.Error.Properties.Code.Enum
	var want []string
	for _, c := range apierr.Codes() {
		want = append(want, string(c))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the document's codes %v\nare not apierr's %v", got, want)
	}
}
