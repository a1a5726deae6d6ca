package protocol

import (
	"encoding/json"
	"strings"

	"mockgateway/internal/apierr"
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
		n, e := asBoundedInt(p, v, 1, 1<<31-1)
		r.MaxTokens, r.MaxTokensParam = min(int(n), c.lim.MaxTokensCeiling), "maxOutputTokens"
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
		if e == nil && googleKey(k) == "responseSchema" {
			s, e = openAPISchema(p, s)
		}
		if e == nil {
			e = CheckSchemaLimits(p, s)
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
// case, nullable as a null type, the ordering dropped. The Go SDK sends this form.
func openAPISchema(path string, raw json.RawMessage) (json.RawMessage, *apierr.Error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, errInvalidJSON()
	}
	out, err := json.Marshal(lowerSchema(v))
	if err != nil {
		return nil, errValue(path, "must be a schema")
	}
	return out, nil
}

// lowerSchema rewrites one schema object and the schemas it holds.
func lowerSchema(v any) any {
	o, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(o))
	for k, x := range o {
		switch k {
		case "type":
			if s, ok := x.(string); ok {
				x = strings.ToLower(s)
			}
		case "propertyOrdering", "nullable", "example", "title":
			continue
		case "properties":
			if props, ok := x.(map[string]any); ok {
				m := make(map[string]any, len(props))
				for name, s := range props {
					m[name] = lowerSchema(s)
				}
				x = m
			}
		case "items":
			x = lowerSchema(x)
		case "anyOf":
			if list, ok := x.([]any); ok {
				l := make([]any, len(list))
				for i, s := range list {
					l[i] = lowerSchema(s)
				}
				x = l
			}
		}
		out[k] = x
	}
	if n, ok := o["nullable"].(bool); ok && n {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	return out
}
