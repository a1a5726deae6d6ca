package protocol

import (
	"regexp"
	"slices"

	"mockgateway/internal/apierr"
)

// The tools of a Messages request: custom tools become the chat request's function tools;
// Anthropic's server tools (web search, code execution, bash, text editor, …, a type with a
// version date) are accepted and never called, and a tool_choice that requires one is refused.

// serverToolType is a versioned server tool's type: web_search_20250305, bash_20250124, ….
var serverToolType = regexp.MustCompile(`^[a-z][a-z0-9_]*_[0-9]{8}$`)

// tools decodes the tools offered: custom ones into the request, server ones by name only.
func (c *anthropicState) tools(path, v string) *apierr.Error {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil {
		return e
	}
	var tools []Tool
	for i, it := range items {
		p := indexPath(path, i)
		var o members[string]
		var oroom stackMembers
		if o, e = asObject(oroom[:0], p, it); e != nil {
			return e
		}
		if raw, ok := o.get("type"); ok {
			typ, e := asString(joinPath(p, "type"), raw)
			if e != nil {
				return e
			}
			if typ != "custom" {
				if !serverToolType.MatchString(typ) {
					return errValue(joinPath(p, "type"), "must be custom or a server tool's versioned type")
				}
				name, e := readServerToolName(p, o)
				if e != nil {
					return e
				}
				c.serverTools = append(c.serverTools, name)
				continue
			}
		}
		tools = append(tools, Tool{})
		if e := customToolObject.walk(&tools[len(tools)-1], p, o); e != nil {
			return e
		}
		// Checked here, at the index as sent: server tools are not kept, and would shift it.
		if e := CheckSchemaPatterns(joinPath(p, "input_schema"), tools[len(tools)-1].Parameters, c.lim.MaxRegexProgram); e != nil {
			return e
		}
	}
	c.req.Tools = tools
	return nil
}

// readServerToolName is a server tool's name, which is all the mock keeps of it: its other
// members are the tool's own configuration, which the mock has no use for.
func readServerToolName(path string, o members[string]) (string, *apierr.Error) {
	raw, ok := o.get("name")
	if !ok {
		return "", errMissing(joinPath(path, "name"))
	}
	return asString(joinPath(path, "name"), raw)
}

var customToolObject = objectSpec[*Tool]{fields: decodeCustomTool, required: []string{"input_schema", "name"}}

// decodeCustomTool is a client tool: name, description and input_schema, and the beta members
// Claude Code and the SDKs send (defer_loading, strict, input_examples, eager_input_streaming,
// allowed_callers), which change nothing the mock does.
func decodeCustomTool(t *Tool, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		return discriminator, nil
	case "name":
		return supported, into(&t.Name)(asName(p, v))
	case "description":
		return supported, into(&t.Description)(asString(p, v))
	case "input_schema":
		return supported, into(&t.Parameters)(asCompactObject(p, v))
	case "strict":
		return supported, into(&t.Strict)(asBool(p, v))
	case "cache_control":
		return noEffect, cacheControlObject.decode(none{}, p, v)
	case "defer_loading", "eager_input_streaming":
		return noEffect, valid(asBool(p, v))
	case "input_examples", "allowed_callers":
		return noEffect, isArray(p, v)
	}
	return unknown, nil
}

var anthropicToolChoiceObject = objectSpec[*Request]{fields: decodeAnthropicToolChoice, required: []string{"type"}}

// decodeAnthropicToolChoice: auto, any (a call is required), tool (this one), none; and
// disable_parallel_tool_use, Anthropic's parallel_tool_calls: false.
func decodeAnthropicToolChoice(r *Request, k, p, v string) (fieldClass, *apierr.Error) {
	switch k {
	case "type":
		typ, e := asEnum(p, v, "auto", "any", "tool", "none")
		switch typ {
		case "any":
			r.ToolChoice.Mode = ToolChoiceRequired
		case "tool":
			r.ToolChoice.Mode = ToolChoiceFunction
		default:
			r.ToolChoice.Mode = typ
		}
		return supported, e
	case "name":
		return supported, into(&r.ToolChoice.Function)(asString(p, v))
	case "disable_parallel_tool_use":
		b, e := asBool(p, v)
		r.ParallelToolCalls = !b
		return supported, e
	}
	return unknown, nil
}

// checkToolChoice holds tool_choice to the tools: a tool named by one of them, any with a tool
// to call, a name only with type tool, and no server tool required.
func (c *anthropicState) checkToolChoice() *apierr.Error {
	tc := c.req.ToolChoice
	switch {
	case tc.Mode == ToolChoiceFunction && tc.Function == "":
		return errMissing("tool_choice.name")
	case tc.Mode != ToolChoiceFunction && tc.Function != "":
		return errValue("tool_choice.name", "only allowed when type is tool")
	case tc.Mode == ToolChoiceFunction && slices.Contains(c.serverTools, tc.Function):
		return errUnsupported("tool_choice.name", noServerTools)
	case tc.Mode == ToolChoiceRequired && len(c.req.Tools) == 0 && len(c.serverTools) > 0:
		return errUnsupported("tool_choice.type", noServerTools)
	}
	return checkToolChoice(c.req, "tool_choice.name")
}
