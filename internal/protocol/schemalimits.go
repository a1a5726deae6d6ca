package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonscan"
)

// Structured Outputs' limits on a schema, as OpenAI's guide documents them ("Supported
// schemas"): nesting, object properties and enum values in total, and the characters of
// property names, definition names, enum values and const values in total, with a tighter
// budget for the string values of one large enum.
const (
	MaxSchemaNesting    = 10
	MaxSchemaProperties = 5000
	MaxSchemaEnumValues = 1000
	MaxSchemaChars      = 120000
	// An enum with more than LargeEnumValues values may have at most MaxLargeEnumChars
	// characters of string values.
	LargeEnumValues   = 250
	MaxLargeEnumChars = 15000
)

// CheckSchemaLimits reports a JSON Schema over Structured Outputs' limits as a 400
// invalid_value whose param is param (the schema's place in the request: "response_format" or
// "tools[i].function.parameters") and whose message is in OpenAI's words. The message names the
// schema by param, never by its name or any of its text, which are the client's.
//
// Nesting is counted as OpenAI's SDKs count it: the root is level 0 and every subschema
// (a property, items, an anyOf branch, a definition, …) one level below its parent. The check
// is one walk over the JSON text, linear in its length; it descends no deeper than the limit,
// so ten thousand levels cost no more than eleven. An invalid text is left to the decoder.
func CheckSchemaLimits(param string, schema json.RawMessage) *apierr.Error {
	var w limitWalk
	w.schema(schema, 0)
	var detail string
	switch {
	case w.tooDeep:
		detail = strconv.Itoa(MaxSchemaNesting+1) + " levels of nesting exceeds limit of " +
			strconv.Itoa(MaxSchemaNesting) + "."
	case w.properties > MaxSchemaProperties:
		detail = "Total number of object properties (" + strconv.Itoa(w.properties) +
			") exceeds limit of " + strconv.Itoa(MaxSchemaProperties) + "."
	case w.enumValues > MaxSchemaEnumValues:
		detail = "Total number of enum values (" + strconv.Itoa(w.enumValues) +
			") exceeds limit of " + strconv.Itoa(MaxSchemaEnumValues) + "."
	case w.largeEnumValues > 0:
		detail = "Total string length (" + strconv.Itoa(w.largeEnumChars) + ") of values of an enum with " +
			strconv.Itoa(w.largeEnumValues) + " values exceeds limit of " + strconv.Itoa(MaxLargeEnumChars) + "."
	case w.chars > MaxSchemaChars:
		detail = "Total string length of property names, definition names, enum values and const values (" +
			strconv.Itoa(w.chars) + ") exceeds limit of " + strconv.Itoa(MaxSchemaChars) + "."
	default:
		return nil
	}
	kind := "response_format"
	if strings.HasPrefix(param, "tools[") {
		kind = "function"
	}
	return apierr.New(apierr.InvalidValue, param, "Invalid schema for "+kind+" '"+param+"': "+detail)
}

// limitWalk accumulates the counts of one schema.
type limitWalk struct {
	tooDeep                         bool
	properties, enumValues, chars   int
	largeEnumValues, largeEnumChars int // the first enum over its own limit
}

// schema walks one (sub)schema at the given nesting level.
func (w *limitWalk) schema(v []byte, depth int) {
	if w.tooDeep {
		return
	}
	if depth > MaxSchemaNesting {
		w.tooDeep = true
		return
	}
	eachMember(v, func(key, val []byte) {
		switch string(keyword(key)) { // a conversion in a switch does not copy
		case "properties":
			eachMember(val, func(name, sub []byte) {
				w.properties++
				w.chars += stringChars(name)
				w.schema(sub, depth+1)
			})
		case "$defs", "definitions":
			eachMember(val, func(name, sub []byte) {
				w.chars += stringChars(name)
				w.schema(sub, depth+1)
			})
		case "patternProperties", "dependentSchemas":
			eachMember(val, func(_, sub []byte) { w.schema(sub, depth+1) })
		case "items", "additionalItems", "additionalProperties", "unevaluatedItems",
			"unevaluatedProperties", "contains", "propertyNames", "not", "if", "then", "else":
			if firstByte(val) == '[' { // draft 4–7 tuple items
				eachElement(val, func(sub []byte) { w.schema(sub, depth+1) })
			} else {
				w.schema(val, depth+1)
			}
		case "prefixItems", "anyOf", "allOf", "oneOf":
			eachElement(val, func(sub []byte) { w.schema(sub, depth+1) })
		case "enum":
			w.enum(val)
		case "const":
			w.chars += valueChars(val)
		}
	})
}

func (w *limitWalk) enum(v []byte) {
	values, stringChars := 0, 0
	eachElement(v, func(e []byte) {
		values++
		n := valueChars(e)
		w.chars += n
		if firstByte(e) == '"' {
			stringChars += n
		}
	})
	w.enumValues += values
	if values > LargeEnumValues && stringChars > MaxLargeEnumChars && w.largeEnumValues == 0 {
		w.largeEnumValues, w.largeEnumChars = values, stringChars
	}
}

// keyword returns the bytes of a member name for matching: in place when it has no escape (all
// keywords as clients send them), so that matching 60,000 property schemas allocates nothing.
func keyword(quoted []byte) []byte {
	if len(quoted) >= 2 && bytes.IndexByte(quoted, '\\') < 0 {
		return quoted[1 : len(quoted)-1]
	}
	s, _ := jsonscan.Unquote(quoted)
	return []byte(s)
}

// firstByte is the first byte of a value cut by jsonscan.SkipValue (which starts at no space):
// its kind.
func firstByte(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// stringChars counts the characters of a JSON string literal (quotes included in quoted): an
// escape is one character, as is each UTF-8 sequence.
func stringChars(quoted []byte) int {
	if len(quoted) < 2 {
		return 0
	}
	n := 0
	in := quoted[1 : len(quoted)-1]
	for i := 0; i < len(in); {
		switch {
		case in[i] == '\\' && i+1 < len(in) && in[i+1] == 'u':
			i += 6
		case in[i] == '\\':
			i += 2
		default:
			_, size := utf8.DecodeRune(in[i:])
			i += size
		}
		n++
	}
	return n
}

// valueChars is the length OpenAI's SDKs count for an enum or const value: a string's
// characters, a number's or literal's text, nothing for an array or object.
func valueChars(v []byte) int {
	switch firstByte(v) {
	case '"':
		return stringChars(v)
	case '[', '{':
		return 0
	}
	return len(v)
}

// eachMember calls f with the quoted name and the value of each member of a JSON object, in
// document order; anything but an object calls nothing. It loops rather than recursing, so a
// value nested ten thousand deep is skipped, not descended.
func eachMember(v []byte, f func(name, val []byte)) {
	i := jsonscan.SkipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return
	}
	for i = jsonscan.SkipSpace(v, i+1); i < len(v) && v[i] == '"'; {
		end := jsonscan.SkipString(v, i)
		name := v[i:end]
		i = jsonscan.SkipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return
		}
		start := jsonscan.SkipSpace(v, i+1)
		end = jsonscan.SkipValue(v, start)
		if end <= start {
			return
		}
		f(name, v[start:end])
		i = jsonscan.SkipSpace(v, end)
		if i >= len(v) || v[i] != ',' {
			return
		}
		i = jsonscan.SkipSpace(v, i+1)
	}
}

// eachElement calls f with each element of a JSON array; anything but an array calls nothing.
func eachElement(v []byte, f func(elem []byte)) {
	i := jsonscan.SkipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return
	}
	for i = jsonscan.SkipSpace(v, i+1); i < len(v) && v[i] != ']'; {
		end := jsonscan.SkipValue(v, i)
		if end <= i {
			return
		}
		f(v[i:end])
		i = jsonscan.SkipSpace(v, end)
		if i >= len(v) || v[i] != ',' {
			return
		}
		i = jsonscan.SkipSpace(v, i+1)
	}
}
