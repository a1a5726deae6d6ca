package generate

import (
	"encoding/json"
	"errors"
	"strings"
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
		v.reindex()
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
