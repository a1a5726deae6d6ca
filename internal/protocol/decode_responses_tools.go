package protocol

import "mockgateway/internal/apierr"

// The Responses API's tools, tool_choice and text format: the chat ones flattened (a tool's
// name is beside its type, not inside a function object).

var responsesToolObject = objectSpec[*Tool]{fields: decodeResponsesTool, required: []string{"name"}}

// hostedTools are the tool types OpenAI runs itself. The mock runs none: a request that offers
// one is refused naming the type (our string, from this list, never the client's).
var hostedTools = []string{
	"file_search", "computer", "computer_use_preview", "computer_use", "web_search", "web_search_preview",
	"web_search_2025_08_26", "web_search_preview_2025_03_11", "mcp", "code_interpreter", "image_generation",
	"local_shell", "shell", "custom", "namespace", "tool_search", "apply_patch", "programmatic_tool_calling",
}

func readResponsesTool(t *Tool, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	if typ != "function" {
		for _, h := range hostedTools {
			if typ == h {
				return errUnsupported(typePath, h+" tools are not supported by the mock: it offers function tools only")
			}
		}
		return errValue(typePath, "must be function")
	}
	if e := responsesToolObject.walk(t, path, o); e != nil {
		return e
	}
	// As in chat, only a schema the client marked strict is held to Structured Outputs' limits.
	if t.Strict && t.Parameters != nil {
		return CheckSchemaLimits(joinPath(path, "parameters"), t.Parameters)
	}
	return nil
}

func decodeResponsesTool(t *Tool, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "name":
		return supported, into(&t.Name)(asName(p, v))
	case "description":
		return supported, into(&t.Description)(asString(p, v))
	case "parameters":
		return supported, into(&t.Parameters)(asCompactObject(p, v))
	case "strict":
		return supported, into(&t.Strict)(asBool(p, v))
	case "defer_loading":
		return noEffect, valid(asBool(p, v))
	case "allowed_callers":
		return noEffect, isArray(p, v)
	case "output_schema":
		return noEffect, isObject(p, v)
	}
	return unknown, nil
}

var responsesToolChoiceObject = objectSpec[*ToolChoice]{fields: decodeResponsesToolChoice, required: []string{"name"}}

// readResponsesToolChoice is a mode string or {type: "function", name}.
func readResponsesToolChoice(tc *ToolChoice, path string, v string) *apierr.Error {
	if jsonKind(v) != '{' {
		return readToolChoice(tc, path, v) // the modes are chat's
	}
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	switch typ {
	case "function":
	case "allowed_tools", "custom", "mcp", "file_search", "web_search_preview", "computer", "computer_use_preview",
		"computer_use", "web_search_preview_2025_03_11", "image_generation", "code_interpreter", "apply_patch",
		"shell", "programmatic_tool_calling":
		return errUnsupported(typePath, "only none, auto, required and a named function are supported by the mock")
	default:
		return errValue(typePath, "must be function")
	}
	if e := responsesToolChoiceObject.walk(tc, path, o); e != nil {
		return e
	}
	tc.Mode = ToolChoiceFunction
	return nil
}

func decodeResponsesToolChoice(tc *ToolChoice, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "name":
		return supported, into(&tc.Function)(asString(p, v))
	}
	return unknown, nil
}

// textObject is text: the format of the answer, and its verbosity.
var textObject = objectSpec[*ResponseFormat]{fields: decodeText}

func decodeText(rf *ResponseFormat, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "format":
		return supported, readTextFormat(rf, p, v)
	case "verbosity":
		return noEffect, valid(asEnum(p, v, "low", "medium", "high"))
	}
	return unknown, nil
}

// The text.format objects, by type: json_schema's members are beside its type.
var (
	plainTextFormatObject = objectSpec[*ResponseFormat]{fields: decodeTextFormat}
	schemaTextFormat      = objectSpec[*ResponseFormat]{fields: decodeTextFormat, required: []string{"name", "schema"}}
)

func readTextFormat(rf *ResponseFormat, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	spec := &plainTextFormatObject
	switch typ {
	case FormatText, FormatJSONObject:
	case FormatJSONSchema:
		spec = &schemaTextFormat
	default:
		return errValue(typePath, "must be one of text, json_object, json_schema")
	}
	rf.Type = typ
	if e := spec.walk(rf, path, o); e != nil {
		return e
	}
	if rf.Schema != nil && isTrue(o, "strict") {
		return CheckSchemaLimits(path, rf.Schema)
	}
	return nil
}

func decodeTextFormat(rf *ResponseFormat, k, p, v string) (fieldClass, *apierr.Error) {
	schema := rf.Type == FormatJSONSchema
	switch {
	case k == "type":
		return discriminator, nil
	case schema && k == "name":
		return supported, into(&rf.Name)(asName(p, v))
	case schema && k == "schema":
		return supported, into(&rf.Schema)(asCompactObject(p, v))
	case schema && k == "strict":
		return supported, valid(asBool(p, v)) // read again by readTextFormat, once the schema is known
	case schema && k == "description":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}
