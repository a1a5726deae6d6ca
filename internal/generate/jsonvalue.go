package generate

import (
	"encoding/json"
	"errors"
	"strings"

	"mockgateway/internal/protocol"
)

// jvalue is a decoded JSON value that keeps the order of object members, which encoding/json's
// map decoding loses; the schema generator emits properties in the order the schema lists them.
type jvalue struct {
	kind jkind
	b    bool
	s    string // string value, or a number's literal text
	arr  []*jvalue
	keys []string // object member names, in document order
	vals []*jvalue
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

var errInvalidJSON = errors.New("invalid JSON")

// parseJSON decodes one JSON value, keeping object member order and number literals. The input
// is checked with json.Valid first (which also bounds the nesting depth), so the descent below
// can assume well-formed input; it is hand-written because json.Decoder's token API allocates
// several times per token, and this runs for every tool schema of every request.
func parseJSON(data []byte) (*jvalue, error) {
	if !json.Valid(data) {
		return nil, errInvalidJSON
	}
	p := jsonParser{data: data}
	v := p.value()
	if p.err != nil {
		return nil, p.err
	}
	return v, nil
}

type jsonParser struct {
	data []byte
	pos  int
	err  error
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() *jvalue {
	p.skipSpace()
	if p.pos >= len(p.data) || p.err != nil {
		p.err = errInvalidJSON
		return &jvalue{}
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		v := &jvalue{kind: jObject}
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return v
		}
		for p.err == nil {
			p.skipSpace()
			v.keys = append(v.keys, p.string())
			p.skipSpace()
			p.pos++ // ':'
			v.vals = append(v.vals, p.value())
			p.skipSpace()
			if p.pos >= len(p.data) {
				p.err = errInvalidJSON
				break
			}
			p.pos++
			if p.data[p.pos-1] == '}' {
				break
			}
		}
		return v
	case c == '[':
		p.pos++
		v := &jvalue{kind: jArray}
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return v
		}
		for p.err == nil {
			v.arr = append(v.arr, p.value())
			p.skipSpace()
			if p.pos >= len(p.data) {
				p.err = errInvalidJSON
				break
			}
			p.pos++
			if p.data[p.pos-1] == ']' {
				break
			}
		}
		return v
	case c == '"':
		return &jvalue{kind: jString, s: p.string()}
	case c == 't':
		p.pos += len("true")
		return &jvalue{kind: jBool, b: true}
	case c == 'f':
		p.pos += len("false")
		return &jvalue{kind: jBool}
	case c == 'n':
		p.pos += len("null")
		return &jvalue{kind: jNull}
	default:
		start := p.pos
		for p.pos < len(p.data) && strings.IndexByte("+-.0123456789eE", p.data[p.pos]) >= 0 {
			p.pos++
		}
		return &jvalue{kind: jNumber, s: string(p.data[start:p.pos])}
	}
}

// string reads a string literal at p.pos. Literals without escapes (nearly all of them in a
// schema) are copied directly; others are left to encoding/json.
func (p *jsonParser) string() string {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\\':
			escaped = true
			p.pos += 2
			continue
		case '"':
			p.pos++
			if !escaped {
				return string(p.data[start+1 : p.pos-1])
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				p.err = err
			}
			return s
		}
		p.pos++
	}
	p.err = errInvalidJSON
	return ""
}

// get returns the member key of an object (the first one, if duplicated), or nil.
func (v *jvalue) get(key string) *jvalue {
	if v == nil || v.kind != jObject {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// has reports whether an object has member key.
func (v *jvalue) has(key string) bool { return v.get(key) != nil }

// str returns the value of a string member, or "".
func (v *jvalue) str(key string) string {
	if m := v.get(key); m != nil && m.kind == jString {
		return m.s
	}
	return ""
}

// with returns a shallow copy of object v with member key set to val (appended when absent);
// a nil val removes the member. The original is never modified: schemas are shared.
func (v *jvalue) with(key string, val *jvalue) *jvalue {
	out := &jvalue{kind: jObject,
		keys: make([]string, 0, len(v.keys)+1), vals: make([]*jvalue, 0, len(v.keys)+1)}
	found := false
	for i, k := range v.keys {
		if k == key {
			if found || val == nil {
				continue
			}
			found = true
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, val)
			continue
		}
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, v.vals[i])
	}
	if !found && val != nil {
		out.keys = append(out.keys, key)
		out.vals = append(out.vals, val)
	}
	return out
}

// appendJSONValue appends v as compact JSON pieces (rule 7 of the package documentation).
func appendJSONValue(b *pieceBuilder, v *jvalue) {
	switch v.kind {
	case jNull:
		b.add("null")
	case jBool:
		if v.b {
			b.add("true")
		} else {
			b.add("false")
		}
	case jNumber:
		b.add(v.s)
	case jString:
		b.buf = protocol.AppendString(b.buf, v.s)
		b.cut()
	case jArray:
		b.add("[")
		for i, item := range v.arr {
			if i > 0 {
				b.add(",")
			}
			appendJSONValue(b, item)
		}
		b.add("]")
	case jObject:
		b.add("{")
		for i, k := range v.keys {
			if i > 0 {
				b.add(",")
			}
			b.buf = protocol.AppendString(b.buf, k)
			b.cut()
			b.add(":")
			appendJSONValue(b, v.vals[i])
		}
		b.add("}")
	}
}
