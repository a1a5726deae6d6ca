package openapi

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mockgateway/internal/journal"
	"mockgateway/internal/protocol"
	"mockgateway/internal/quota"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// jsonMembers reads a struct's JSON members from its tags: every name, and those always written
// (no omitempty or omitzero), which the schema must require.
func jsonMembers(t reflect.Type) (names, always []string) {
	for f := range t.Fields() {
		tag, ok := f.Tag.Lookup("json")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		names = append(names, name)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") && !slices.Contains(strings.Split(opts, ","), "omitzero") {
			always = append(always, name)
		}
	}
	slices.Sort(names)
	slices.Sort(always)
	return names, always
}

// docStrings reads a string array of the document at ptr, sorted.
func docStrings(t *testing.T, ptr string) []string {
	t.Helper()
	var out []string
	for _, v := range docAt(t, ptr).([]any) {
		out = append(out, v.(string))
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIJournalIsTheJournals holds the journal's schemas to internal/journal's types (every
// JSON member a property, the ones always written required, nothing else), and the closed sets
// the journal and the fixtures write to the code's: fault kinds, stream outcomes, the shape's
// field names (protocol.FieldSet), the finish reasons a fixture may set.
func TestOpenAPIJournalIsTheJournals(t *testing.T) {
	for schema, typ := range map[string]reflect.Type{
		"JournalEntry":      reflect.TypeFor[journal.Entry](),
		"JournalSDK":        reflect.TypeFor[journal.SDK](),
		"JournalShape":      reflect.TypeFor[journal.Shape](),
		"JournalRoleCounts": reflect.TypeFor[journal.RoleCounts](),
	} {
		ptr := "/components/schemas/" + schema
		names, always := jsonMembers(typ)
		var props []string
		for k := range docAt(t, ptr+"/properties").(map[string]any) {
			props = append(props, k)
		}
		slices.Sort(props)
		if !slices.Equal(props, names) {
			t.Errorf("%s has properties %v; %s has members %v", schema, props, typ, names)
		}
		var required []string
		if _, ok := docAt(t, ptr).(map[string]any)["required"]; ok {
			required = docStrings(t, ptr+"/required")
		}
		if !slices.Equal(required, always) {
			t.Errorf("%s requires %v; %s always writes %v", schema, required, typ, always)
		}
		if docAt(t, ptr+"/additionalProperties") != false {
			t.Errorf("%s: additionalProperties is not false", schema)
		}
	}

	// A fault is a simulated fault's kind or a simulated limit's refusal; limit_hit names the
	// limit as the refusals counter does.
	faults, limits := simulation.Kinds(), []string{}
	for _, k := range quota.Refusals() {
		faults, limits = append(faults, k.Fault()), append(limits, string(k))
	}
	if got, want := docStrings(t, "/components/schemas/JournalEntry/properties/fault/enum"), slices.Sorted(slices.Values(faults)); !slices.Equal(got, want) {
		t.Errorf("the journal's fault kinds %v are not simulation's and the quotas' %v", got, want)
	}
	if got, want := docStrings(t, "/components/schemas/JournalEntry/properties/limit_hit/enum"), slices.Sorted(slices.Values(limits)); !slices.Equal(got, want) {
		t.Errorf("the journal's limits %v are not the quotas' %v", got, want)
	}
	outcomes := []string{observability.OutcomeCompleted, observability.OutcomeClientDisconnected, observability.OutcomeAborted, observability.OutcomeTimedOut}
	if got, want := docStrings(t, "/components/schemas/JournalEntry/properties/stream_outcome/enum"), slices.Sorted(slices.Values(outcomes)); !slices.Equal(got, want) {
		t.Errorf("the journal's stream outcomes %v are not observability's %v", got, want)
	}

	// The shape's field names, per dialect, are exactly the request members a FieldSet can hold:
	// each of them reads into one, and every other property of the dialect's request schema does
	// not. (A FieldSet reads a list naming input as a Responses request's, and one naming a member
	// only Anthropic's request has, system among them, as a Messages request's.)
	for _, dl := range []struct{ fields, request, with string }{
		{"/components/schemas/JournalShape/properties/fields/anyOf/0/items/enum", "/components/schemas/ChatCompletionRequest", ""},
		{"/components/schemas/JournalShape/properties/fields/anyOf/1/items/enum", "/components/schemas/ResponsesRequest", `"input",`},
		{"/components/schemas/JournalShape/properties/fields/anyOf/2/items/enum", "/components/schemas/AnthropicMessagesRequest", `"system",`},
	} {
		fields := docStrings(t, dl.fields)
		for k := range docAt(t, dl.request+"/properties").(map[string]any) {
			var s protocol.FieldSet
			err := s.UnmarshalJSON([]byte(`[` + dl.with + `"` + k + `"]`))
			if (err == nil) != slices.Contains(fields, k) {
				t.Errorf("%s member %s: a FieldSet holds it: %v; the shape's fields list it: %v", dl.request, k, err == nil, slices.Contains(fields, k))
			}
		}
		var all protocol.FieldSet
		if err := all.UnmarshalJSON([]byte(`["` + strings.Join(fields, `","`) + `"]`)); err != nil || !slices.Equal(all.Names(), fields) {
			t.Errorf("the shape's fields %v do not read into a FieldSet (%v): %v", fields, err, all.Names())
		}
	}

	// A fixture may set content_filter; every finish_reason the document gives is the same set.
	want := docStrings(t, "/components/schemas/FixtureReply/properties/finish_reason/enum")
	for _, ptr := range []string{
		"/components/schemas/ChatCompletion/properties/choices/items/properties/finish_reason/enum",
		"/components/schemas/ChatCompletionChunk/properties/choices/items/properties/finish_reason/anyOf/0/enum",
		"/components/schemas/JournalEntry/properties/finish_reason/enum",
	} {
		if got := docStrings(t, ptr); !slices.Equal(got, want) {
			t.Errorf("%s is %v; a fixture's finish_reason is one of %v", ptr, got, want)
		}
	}
}

// TestOpenAPIScopeSyntax: the document's scope patterns accept exactly the scopes the server
// does (journal.ValidScope: "" or a request id), the header's and the path's without "".
func TestOpenAPIScopeSyntax(t *testing.T) {
	scope := compileSchema(t, "/components/schemas/Scope")
	header := compileSchema(t, "/components/parameters/x-mock-scope/schema")
	path := compileSchema(t, "/paths/~1_mock~1scopes~1{scope}/delete/parameters/0/schema")
	for _, s := range []string{"", "a", "test-1", "ci:run.42_a", strings.Repeat("s", 128), strings.Repeat("s", 129), "a b", "a/b", "../x", "é", "a\n", "a;b"} {
		valid := journal.ValidScope(s)
		if got := scope.Validate(s) == nil; got != valid {
			t.Errorf("Scope %q: the document says %v, the journal %v", s, got, valid)
		}
		for name, sch := range map[string]*jsonschema.Schema{"x-mock-scope": header, "the path's scope": path} {
			if got := sch.Validate(s) == nil; got != (valid && s != "") {
				t.Errorf("%s %q: the document says %v, the server %v", name, s, got, valid && s != "")
			}
		}
	}
}
