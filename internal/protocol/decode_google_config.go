package protocol

import (
	"encoding/json"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonenc"
	"mockgateway/internal/jsonscan"
)

// A Gemini request's generationConfig and its thinkingConfig, and Google's OpenAPI schema
// subset (parameters, responseSchema) made JSON Schema.

var googleGenerationConfigObject = objectSpec[*googleState]{fields: decodeGoogleGenerationConfig}

// maxGoogleCandidates is candidateCount's bound in Google's API.
const maxGoogleCandidates = 8

// decodeGoogleGenerationConfig is GenerationConfig: what shapes the answer is kept; sampling
// is checked and, but for temperature (telemetry), dropped.
func decodeGoogleGenerationConfig(c *googleState, k, p, v string) (fieldClass, *apierr.Error) {
	r := c.req
	switch googleKey(k) {
	case "maxOutputTokens":
		c.note("max_tokens")
		// The model's output limit decides the budget (the dialect's Check); --max-tokens cuts
		// the answer, not the budget.
		n, e := asBoundedInt(p, v, 1, MaxBudget)
		r.MaxTokens, r.MaxTokensParam = int(n), "maxOutputTokens"
		return supported, e
	case "candidateCount":
		c.note("n")
		n, e := asBoundedInt(p, v, 1, int64(min(maxGoogleCandidates, c.lim.MaxChoices)))
		r.N = int(n)
		return supported, e
	case "stopSequences":
		c.note("stop")
		return supported, into(&r.Stop)(decodeStopSequences(p, v))
	case "temperature":
		c.note("temperature")
		f, e := asRangedNumber(p, v, 0, 2)
		if e == nil {
			r.Temperature = &f
		}
		return supported, e
	case "topP":
		c.note("top_p")
		return noEffect, valid(asRangedNumber(p, v, 0, 1))
	case "topK":
		return noEffect, valid(asBoundedInt(p, v, 1, 1<<31-1))
	case "seed":
		c.note("seed")
		n, e := asInt64(p, v)
		r.Seed = &n
		return supported, e
	case "presencePenalty", "frequencyPenalty":
		return noEffect, valid(asRangedNumber(p, v, -2, 2))
	case "responseLogprobs", "enableEnhancedCivicAnswers", "audioTimestamp":
		return noEffect, valid(asBool(p, v))
	case "logprobs":
		return noEffect, valid(asBoundedInt(p, v, 0, 20))
	case "mediaResolution":
		return noEffect, valid(asString(p, v))
	case "responseModalities":
		var room stackElements
		items, e := asArray(room[:0], p, v)
		for i := 0; e == nil && i < len(items); i++ {
			_, e = asEnum(indexPath(p, i), items[i], "TEXT", "MODALITY_UNSPECIFIED")
		}
		return supported, e
	case "responseMimeType":
		c.note("response_format")
		mime, e := asEnum(p, v, "text/plain", "application/json", "text/x.enum")
		c.mimeJSON = mime == "application/json"
		return supported, e
	case "responseJsonSchema", "responseSchema":
		c.note("response_format")
		s, e := asCompactObject(p, v)
		if e == nil {
			e = CheckSchemaLimits(p, s) // first: it bounds the rewrite's depth
		}
		if e == nil && googleKey(k) == "responseSchema" {
			s, e = openAPISchema(p, s)
		}
		r.ResponseFormat = ResponseFormat{Type: FormatJSONSchema, Name: "response", Schema: s}
		return supported, e
	case "thinkingConfig":
		return supported, googleThinkingObject.decode(r, p, v)
	case "speechConfig", "imageConfig":
		return unsupported, errUnsupported(p, "the mock answers in text only")
	}
	return unknown, nil
}

var googleThinkingObject = objectSpec[*Request]{fields: decodeGoogleThinking}

// decodeGoogleThinking is ThinkingConfig: includeThoughts (thought parts in the answer), a
// budget (0: no thinking, -1: the model decides) or a level. Only a thinking model reads it.
func decodeGoogleThinking(r *Request, k, p, v string) (fieldClass, *apierr.Error) {
	switch googleKey(k) {
	case "includeThoughts":
		b, e := asBool(p, v)
		if b {
			r.reasoning().Summary = "detailed"
		}
		return supported, e
	case "thinkingBudget":
		n, e := asBoundedInt(p, v, -1, 1<<31-1)
		switch {
		case n == 0:
			r.reasoning().Thinking = "disabled"
		case n > 0:
			r.reasoning().ThinkingBudget = int(n)
		}
		return supported, e
	case "thinkingLevel":
		level, e := asEnum(p, v, "THINKING_LEVEL_UNSPECIFIED", "MINIMAL", "LOW", "MEDIUM", "HIGH")
		if e == nil && level != "THINKING_LEVEL_UNSPECIFIED" {
			r.reasoning().Effort = strings.ToLower(level)
		}
		return supported, e
	}
	return unknown, nil
}

// openAPISchema is a schema in Google's OpenAPI subset (Schema: upper-case types, nullable,
// propertyOrdering, format, enum, …) as the JSON Schema the generator reads: types in lower
// case, nullable as a null type, the ordering dropped. The Go SDK sends this form. It is
// rewritten with the decoder's own splitters into slices on the heap, a small frame per level:
// encoding/json's reflection, and then buffers on the stack at each level, grew the stack a
// parked stream keeps (TestParkedStreamStack).
func openAPISchema(_ string, raw json.RawMessage) (json.RawMessage, *apierr.Error) {
	return appendOpenAPISchema(make([]byte, 0, len(raw)+16), string(raw)), nil
}

// appendOpenAPISchema appends the schema v (valid JSON) rewritten, and the schemas it holds.
func appendOpenAPISchema(buf []byte, v string) []byte {
	switch jsonKind(v) {
	case '[': // anyOf's list
		items, _ := appendElements(nil, trimJSONSpace(v))
		buf = append(buf, '[')
		for i, it := range items {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendOpenAPISchema(buf, it)
		}
		return append(buf, ']')
	case '{':
	default:
		return jsonscan.AppendCompact(buf, v)
	}
	o, _ := appendMembers(nil, v, v)
	nullable := isTrue(o, "nullable")
	buf = append(buf, '{')
	n := 0
	for _, f := range o {
		k, raw := f.key, f.val
		switch k {
		case "propertyOrdering", "nullable", "example", "title":
			continue
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = append(jsonenc.AppendString(buf, k), ':')
		switch k {
		case "type":
			t, _ := jsonscan.Unquote(trimJSONSpace(raw))
			if nullable {
				buf = append(buf, '[')
			}
			buf = jsonenc.AppendString(buf, strings.ToLower(t))
			if nullable {
				buf = append(buf, `,"null"]`...)
			}
		case "items", "anyOf":
			buf = appendOpenAPISchema(buf, raw)
		case "properties":
			buf = appendOpenAPIProperties(buf, raw)
		default:
			buf = jsonscan.AppendCompact(buf, raw)
		}
	}
	return append(buf, '}')
}

// appendOpenAPIProperties appends properties, each a schema rewritten.
func appendOpenAPIProperties(buf []byte, v string) []byte {
	if jsonKind(v) != '{' {
		return jsonscan.AppendCompact(buf, v)
	}
	o, _ := appendMembers(nil, v, v)
	buf = append(buf, '{')
	for i, f := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(jsonenc.AppendString(buf, f.key), ':')
		buf = appendOpenAPISchema(buf, f.val)
	}
	return append(buf, '}')
}
