package protocol

import "mockgateway/internal/apierr"

// The Responses API's tools, tool_choice and text format: the chat ones flattened (a tool's
// name is beside its type, not inside a function object).

var responsesToolObject = objectSpec[*Tool]{fields: decodeResponsesTool, required: []string{"name"}}

// hostedTools are the tool types OpenAI runs itself that the mock refuses, naming the type (our
// string, from this list, never the client's). The ones a coding agent offers beside its function
// tools — web search, namespaces — are accepted and never called (readResponsesTools).
var hostedTools = []string{
	"file_search", "computer", "computer_use_preview", "computer_use", "mcp", "code_interpreter", "image_generation",
	"local_shell", "shell", "custom", "tool_search", "apply_patch", "programmatic_tool_calling",
}

// readTools decodes tools into the function tools the mock may call, with their schemas'
// patterns checked (schemapatterns.go), and counts the others.
func (c *responsesState) readTools(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil || len(items) == 0 {
		return e
	}
	tools := make([]Tool, 0, len(items))
	for i, it := range items {
		tools = tools[:len(tools)+1]
		function, e := readResponsesTool(&tools[len(tools)-1], indexPath(path, i), it)
		if e != nil {
			return e
		}
		if !function {
			tools = tools[:len(tools)-1]
			c.hostedTools++
			continue
		}
		if t := &tools[len(tools)-1]; len(t.Parameters) > 0 {
			if e := CheckSchemaPatterns(joinPath(indexPath(path, i), "parameters"), t.Parameters, c.lim.MaxRegexProgram); e != nil {
				return e
			}
		}
	}
	if len(tools) > 0 {
		c.req.Tools = tools
	}
	return nil
}

// readResponsesTool decodes the tool v: a function tool into t (function is true), or one of
// the other types a client offers beside them, which the mock accepts and never calls: web
// search (the Codex CLI offers it on every turn) and a namespace of function tools (Codex's
// sub-agent tools).
func readResponsesTool(t *Tool, path string, v string) (function bool, e *apierr.Error) {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return false, e
	}
	typ, typePath, e := readDiscriminator(path, o, "type")
	if e != nil {
		return false, e
	}
	switch typ {
	case "function":
	case "web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11":
		return false, webSearchToolObject.walk(typ, path, o)
	case "namespace":
		return false, namespaceToolObject.walk(none{}, path, o)
	default:
		for _, h := range hostedTools {
			if typ == h {
				return false, errUnsupported(typePath, h+" tools are not supported by the mock: it calls function tools only")
			}
		}
		return false, errValue(typePath, "must be one of function, web_search, namespace")
	}
	if e := responsesToolObject.walk(t, path, o); e != nil {
		return true, e
	}
	// As in chat, only a schema the client marked strict is held to Structured Outputs' limits.
	if t.Strict && t.Parameters != nil {
		return true, CheckSchemaLimits(joinPath(path, "parameters"), t.Parameters)
	}
	return true, nil
}

// The tools the mock accepts and never calls, and their parts.
var (
	webSearchToolObject       = objectSpec[string]{fields: decodeWebSearchTool}
	webSearchFiltersObject    = objectSpec[none]{fields: decodeWebSearchFilters}
	approximateLocationObject = objectSpec[none]{fields: decodeApproximateLocation}
	namespaceToolObject       = objectSpec[none]{fields: decodeNamespaceTool, required: []string{"name", "description", "tools"}}
)

// decodeWebSearchTool is a web_search tool (typ is its type): WebSearchTool, or, for the
// preview types, WebSearchPreviewTool.
func decodeWebSearchTool(typ string, k, p, v string) (fieldClass, *apierr.Error) {
	preview := typ == "web_search_preview" || typ == "web_search_preview_2025_03_11"
	switch {
	case k == "type":
		return discriminator, nil
	case k == "search_context_size":
		return noEffect, valid(asEnum(p, v, "low", "medium", "high"))
	case k == "user_location":
		return noEffect, approximateLocationObject.decode(none{}, p, v)
	case k == "external_web_access" && !preview:
		return noEffect, valid(asBool(p, v))
	case k == "filters" && !preview:
		return noEffect, webSearchFiltersObject.decode(none{}, p, v)
	case k == "search_content_types" && preview:
		return noEffect, checkSearchContentTypes(p, v)
	}
	return unknown, nil
}

func decodeWebSearchFilters(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "allowed_domains":
		return noEffect, checkStrings(p, v)
	}
	return unknown, nil
}

func decodeApproximateLocation(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return noEffect, valid(asEnum(p, v, "approximate"))
	case "country", "region", "city", "timezone":
		return noEffect, valid(asString(p, v))
	}
	return unknown, nil
}

// decodeNamespaceTool is a namespace: function tools grouped under a name, which the model calls
// with the namespace beside the function's name. The mock checks them as function tools, and
// calls none.
func decodeNamespaceTool(_ none, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "name":
		return noEffect, valid(asName(p, v))
	case "description":
		return noEffect, valid(asString(p, v))
	case "tools":
		return noEffect, checkNamespaceTools(p, v)
	}
	return unknown, nil
}

// checkNamespaceTools holds a namespace's tools, at least one, to be function tools.
func checkNamespaceTools(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	if len(items) == 0 {
		return errValue(path, "must contain at least one tool")
	}
	for i, it := range items {
		var t Tool
		var room stackMembers
		p := indexPath(path, i)
		o, e := asObject(room[:0], p, it)
		if e != nil {
			return e
		}
		typ, typePath, e := readDiscriminator(p, o, "type")
		if e != nil {
			return e
		}
		if typ != "function" {
			return errValue(typePath, "must be function")
		}
		if e := responsesToolObject.walk(&t, p, o); e != nil {
			return e
		}
	}
	return nil
}

// checkSearchContentTypes: a web_search_preview's content types.
func checkSearchContentTypes(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	for i := 0; e == nil && i < len(items); i++ {
		_, e = asEnum(indexPath(path, i), items[i], "text", "image")
	}
	return e
}

// checkStrings: an array of strings.
func checkStrings(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	for i := 0; e == nil && i < len(items); i++ {
		_, e = asString(indexPath(path, i), items[i])
	}
	return e
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
