package protocol

import "mockgateway/internal/apierr"

// checkFunctionType checks the "type" discriminator of a tool or a tool call: "function" is
// supported, "custom" is known but unsupported.
func checkFunctionType(path string, o members[string]) *apierr.Error {
	typ, p, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	switch typ {
	case "function":
		return nil
	case "custom":
		return errUnsupported(p, "custom tools are not supported by the mock")
	default:
		return errValue(p, "must be function")
	}
}

func readTool(t *Tool, path string, v string) *apierr.Error {
	return readFunctionTyped(&toolObject, t, path, v)
}

// readFunctionTyped decodes an object whose type must be function (a tool, a tool call) by spec.
func readFunctionTyped[S any](spec *objectSpec[S], dst S, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	if e := checkFunctionType(path, o); e != nil {
		return e
	}
	return spec.walk(dst, path, o)
}

func readFunctionDefinition(t *Tool, path string, v string) *apierr.Error {
	if e := functionDefinitionObject.decode(t, path, v); e != nil {
		return e
	}
	// OpenAI holds a strict schema to Structured Outputs' limits, and only a strict one.
	if t.Strict && t.Parameters != nil {
		return CheckSchemaLimits(joinPath(path, "parameters"), t.Parameters)
	}
	return nil
}

// readToolChoice decodes tool_choice, a mode string or an object naming a function, into tc.
func readToolChoice(tc *ToolChoice, path string, v string) *apierr.Error {
	switch jsonKind(v) {
	case '"':
		s, e := asString(path, v)
		if e != nil {
			return e
		}
		switch s {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			tc.Mode = s
			return nil
		}
		return errValue(path, "must be none, auto, required, or an object naming a function")
	case '{':
	default:
		return errType(path, "a string or an object")
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
	case "allowed_tools", "custom":
		return errUnsupported(typePath, "only none, auto, required and a named function are supported by the mock")
	default:
		return errValue(typePath, "must be function")
	}
	if e := toolChoiceObject.walk(tc, path, o); e != nil {
		return e
	}
	tc.Mode = ToolChoiceFunction
	return nil
}

// The response_format objects, by type.
var (
	plainFormatObject      = objectSpec[*ResponseFormat]{fields: decodeResponseFormat} // text, json_object
	jsonSchemaFormatObject = objectSpec[*ResponseFormat]{fields: decodeResponseFormat, required: []string{"json_schema"}}
)

func readResponseFormat(rf *ResponseFormat, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return e
	}
	spec := &plainFormatObject
	switch typ {
	case FormatText, FormatJSONObject:
	case FormatJSONSchema:
		spec = &jsonSchemaFormatObject
	default:
		return errValue(typePath, "must be one of text, json_object, json_schema")
	}
	rf.Type = typ // before the key pass: json_schema belongs to one type only
	return spec.walk(rf, path, o)
}

func readJSONSchema(rf *ResponseFormat, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	if e := jsonSchemaObject.walk(rf, path, o); e != nil {
		return e
	}
	// As with a tool's parameters, only a strict schema is held to Structured Outputs' limits.
	if rf.Schema != nil && isTrue(o, "strict") {
		return CheckSchemaLimits("response_format", rf.Schema)
	}
	return nil
}
