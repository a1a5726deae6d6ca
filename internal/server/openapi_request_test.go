package server

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// corpusAgainstSchema holds a client corpus to a request schema of the document: a body the mock
// accepts validates, one the corpus expects a field's 400 for does not. It returns how many
// bodies it checked.
func corpusAgainstSchema(t *testing.T, d *apiDoc, request string, corpus map[string]corpusEntry) int {
	t.Helper()
	for name, e := range corpus {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(e.Body))
		if err != nil {
			t.Fatal(err)
		}
		verr := d.schema(request).Validate(v)
		switch {
		case e.Expect == nil && verr != nil:
			t.Errorf("%s: an accepted body does not validate: %v", name, verr)
		case e.Expect != nil && slices.Contains([]string{"unknown_parameter", "unsupported_parameter", "invalid_value", "missing_required_parameter"}, e.Expect.Code) && verr == nil:
			t.Errorf("%s: a body answered %s validates", name, e.Expect.Code)
		}
	}
	return len(corpus)
}

// TestOpenAPIRequestSchema: every client corpus body the mock accepts validates against the
// document's request schema; one the corpus expects a 400 for a field does not; and a body with
// an unknown field does not. (internal/openapi's tests compare the schema with the decoder
// itself, on these bodies and thousands of variants.)
func TestOpenAPIRequestSchema(t *testing.T) {
	d := loadAPIDoc(t)
	const request = "/components/schemas/ChatCompletionRequest"
	checked := corpusAgainstSchema(t, d, request, loadCorpus(t))
	if checked < 50 {
		t.Fatalf("only %d corpus bodies checked", checked)
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"model":"mock-chat","messages":[{"role":"user","content":"hi"}],"temprature":1}`))
	if d.schema(request).Validate(v) == nil {
		t.Error("a body with an unknown field validated")
	}
}
