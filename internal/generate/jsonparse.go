package generate

import (
	"errors"
	"strings"

	"mockgateway/internal/jsonscan"
)

var errInvalidJSON = errors.New("invalid JSON")

// parseJSON decodes one JSON value, keeping object member order and number literals, which
// encoding/json's map decoding loses. It reads with the service's one scanner (internal/jsonscan),
// as the request decoder does: the input is checked with jsonscan.Valid first (encoding/json's
// verdict, nesting limit included), so the descent below can assume well-formed input, and
// strings are unquoted as encoding/json unquotes them (jsonscan.Unquote). json.Decoder's token
// API would allocate several times per token, and this runs for every tool schema of every
// request. FuzzSchemaInstance holds the result to encoding/json's (checkParseRoundTrip).
//
// A schema of megabytes has hundreds of thousands of values, so the parser allocates in bulk
// (BenchmarkParseLargeSchema): the input is made a string once and every literal without
// escapes is a substring of it; values are carved from chunks; each object's members and each
// array's items are gathered on a stack and copied out once, exactly sized.
func parseJSON(data []byte) (*jvalue, error) {
	if !jsonscan.Valid(data) {
		return nil, errInvalidJSON
	}
	p := jsonParser{text: string(data)}
	p.sizeChunks()
	v := p.value()
	if p.err != nil {
		return nil, p.err
	}
	return v, nil
}

type jsonParser struct {
	text string // the input as one string, which literals are cut from
	pos  int
	err  error

	chunk    []jvalue  // where the next values are carved from
	keyChunk []string  // where the next objects' member names are carved from
	valChunk []*jvalue // where the next objects' values and arrays' items are carved from
	keys     []string  // the members of the objects being parsed, innermost last
	vals     []*jvalue // their values, and the items of the arrays being parsed
}

// valuesPerChunk is how many values, names or items one allocation holds.
const valuesPerChunk = 256

// smallJSON is the size up to which sizeChunks counts what the first chunks must hold.
const smallJSON = 4096

// sizeChunks sizes the first chunks and the stacks of small JSON (a tool's parameters, a
// response format) to what it can hold, by counting the bytes that may precede a value — ':',
// ',' and '[', inside strings too, so the count is an upper bound (TestSmallJSONBounds): full
// chunks for a schema of a dozen values were most of the memory of a tool call
// (BenchmarkGenerateToolCalls). Larger JSON gets full chunks as it is parsed.
func (p *jsonParser) sizeChunks() {
	if len(p.text) > smallJSON {
		return
	}
	members := strings.Count(p.text, ":")
	values := min(1+members+strings.Count(p.text, ",")+strings.Count(p.text, "["), valuesPerChunk)
	members = min(members, valuesPerChunk)
	p.chunk = make([]jvalue, values)
	// Each chunk shares one allocation with the stack it is carved from: the stack is capped at
	// its half, so that a push past it moves the stack rather than run into the chunk.
	names, items := make([]string, 2*members), make([]*jvalue, 2*values)
	p.keyChunk, p.keys = names[:members:members], names[members:members]
	p.valChunk, p.vals = items[:values:values], items[values:values]
}

// carve returns a copy of src cut from *chunk (capped, so that an append to it copies rather
// than run into its neighbour), starting a new chunk when this one is too short. A slice of more
// than a quarter chunk gets an allocation of its own.
func carve[T any](chunk *[]T, src []T) []T {
	n := len(src)
	if n > valuesPerChunk/4 {
		return append([]T(nil), src...)
	}
	if len(*chunk) < n {
		*chunk = make([]T, valuesPerChunk)
	}
	out := (*chunk)[:n:n]
	copy(out, src)
	*chunk = (*chunk)[n:]
	return out
}

// alloc returns a new value carved from the current chunk.
func (p *jsonParser) alloc(kind jkind) *jvalue {
	if len(p.chunk) == 0 {
		p.chunk = make([]jvalue, valuesPerChunk)
	}
	v := &p.chunk[0]
	p.chunk = p.chunk[1:]
	v.kind = kind
	return v
}

func (p *jsonParser) skipSpace() { p.pos = jsonscan.SkipSpace(p.text, p.pos) }

func (p *jsonParser) value() *jvalue {
	p.skipSpace()
	if p.pos >= len(p.text) || p.err != nil {
		p.err = errInvalidJSON
		return &jvalue{}
	}
	switch c := p.text[p.pos]; c {
	case '{':
		p.pos++
		v := p.alloc(jObject)
		p.skipSpace()
		if p.pos < len(p.text) && p.text[p.pos] == '}' {
			p.pos++
			return v
		}
		kbase, vbase := len(p.keys), len(p.vals) // arrays use vals alone: the two stacks differ
		for p.err == nil {
			p.skipSpace()
			p.keys = append(p.keys, p.string())
			p.skipSpace()
			p.pos++ // ':'
			val := p.value()
			p.vals = append(p.vals, val)
			p.skipSpace()
			if p.pos >= len(p.text) {
				p.err = errInvalidJSON
				break
			}
			p.pos++
			if p.text[p.pos-1] == '}' {
				break
			}
		}
		v.keys = carve(&p.keyChunk, p.keys[kbase:])
		v.vals = carve(&p.valChunk, p.vals[vbase:])
		p.keys, p.vals = p.keys[:kbase], p.vals[:vbase]
		v.reindex()
		return v
	case '[':
		p.pos++
		v := p.alloc(jArray)
		p.skipSpace()
		if p.pos < len(p.text) && p.text[p.pos] == ']' {
			p.pos++
			return v
		}
		base := len(p.vals)
		for p.err == nil {
			item := p.value()
			p.vals = append(p.vals, item)
			p.skipSpace()
			if p.pos >= len(p.text) {
				p.err = errInvalidJSON
				break
			}
			p.pos++
			if p.text[p.pos-1] == ']' {
				break
			}
		}
		v.arr = carve(&p.valChunk, p.vals[base:])
		p.vals = p.vals[:base]
		return v
	case '"':
		v := p.alloc(jString)
		v.s = p.string()
		return v
	case 't':
		p.pos += len("true")
		v := p.alloc(jBool)
		v.b = true
		return v
	case 'f':
		p.pos += len("false")
		return p.alloc(jBool)
	case 'n':
		p.pos += len("null")
		return p.alloc(jNull)
	default: // a number, whose literal text is kept
		start := p.pos
		p.pos = jsonscan.SkipValue(p.text, start)
		v := p.alloc(jNumber)
		v.s = p.text[start:p.pos]
		return v
	}
}

// string reads the string literal at p.pos. A literal without escapes (nearly every one in a
// schema) is cut from the text; others are unescaped into a string of their own.
func (p *jsonParser) string() string {
	end := jsonscan.SkipString(p.text, p.pos)
	s, ok := jsonscan.Unquote(p.text[p.pos:end])
	if !ok {
		p.err = errInvalidJSON
	}
	p.pos = end
	return s
}
