package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// jnode is a JSON value that keeps object members in order and keeps duplicate keys: a leak in
// the first of two equal keys must not vanish the way it would in a map. It is built from
// encoding/json's tokens, not by hand: the audit reads what it searches once, so correctness is
// what counts here, not speed.
type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	str   string
	obj   []jmember
	items []*jnode
}

type jmember struct {
	key string
	val *jnode
}

// parseJSONValues reads one or more JSON values in a row (a streamed answer); more than one
// come back as an array.
func parseJSONValues(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var all []*jnode
	for {
		n, err := readNode(dec)
		if err == io.EOF && len(all) > 0 {
			break
		}
		if err != nil {
			return nil, err
		}
		all = append(all, n)
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return &jnode{kind: 'a', items: all}, nil
}

// parseJSON reads exactly one JSON value.
func parseJSON(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.obj = append(n.obj, jmember{k, v})
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &jnode{kind: 's', str: t}, nil
	case json.Number:
		return &jnode{kind: 'n', str: t.String()}, nil
	case bool:
		return &jnode{kind: 'b', str: fmt.Sprint(t)}, nil
	case nil:
		return &jnode{kind: 'z', str: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %T", tok)
}

// get returns the first member named key.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for _, m := range n.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

var arrayIndex = regexp.MustCompile(`\[\d+\]$`)

// flatten calls emit with one "path=value" part per scalar. Object keys are part of the path, so
// a canary used as a key is searched too. A {"key": K, "value": V} object (Jaeger tags, OTLP
// attributes) is shown as path[K], which is how a finding names the attribute.
func flatten(n *jnode, path string, emit func(where, text string)) {
	switch n.kind {
	case 'o':
		if k := n.get("key"); k != nil && k.kind == 's' && n.get("value") != nil {
			base := arrayIndex.ReplaceAllString(path, "") + "[" + k.str + "]"
			for _, m := range n.obj {
				if m.key == "key" {
					continue
				}
				p := base
				if m.key != "value" {
					p = base + "." + m.key
				}
				flatten(m.val, p, emit)
			}
			return
		}
		if len(n.obj) == 0 {
			emit(path, path+"={}")
		}
		for _, m := range n.obj {
			p := m.key
			if path != "" {
				p = path + "." + m.key
			}
			flatten(m.val, p, emit)
		}
	case 'a':
		if len(n.items) == 0 {
			emit(path, path+"=[]")
		}
		for i, it := range n.items {
			flatten(it, fmt.Sprintf("%s[%d]", path, i), emit)
		}
	default:
		emit(path, path+"="+n.str)
	}
}

// flattenParts returns the parts of a JSON value, each searched on its own.
func flattenParts(n *jnode, path string) []part {
	var parts []part
	flatten(n, path, func(where, text string) { parts = append(parts, part{where: where, text: text}) })
	return parts
}

// spanRecordsFromJSON splits a trace document into one record per span — every element of an
// array under a key named "spans" (the embedded /debug/traces, Jaeger's /api/traces, OTLP JSON
// and Jaeger's /api/v3) — and one record for everything else (resources, processes, scopes).
func spanRecordsFromJSON(doc *jnode, docLabel string) (spans []record, rest record) {
	rest = record{id: docLabel + " (outside spans)", key: docLabel + "|rest"}
	var walk func(n *jnode, path string)
	walk = func(n *jnode, path string) {
		switch n.kind {
		case 'o':
			for _, m := range n.obj {
				p := m.key
				if path != "" {
					p = path + "." + m.key
				}
				if m.key == "spans" && m.val.kind == 'a' {
					for i, s := range m.val.items {
						spans = append(spans, spanRecord(s, fmt.Sprintf("%s[%d]", p, i)))
					}
					continue
				}
				walk(m.val, p)
			}
		case 'a':
			for i, it := range n.items {
				walk(it, fmt.Sprintf("%s[%d]", path, i))
			}
		default:
			rest.parts = append(rest.parts, part{where: path, text: path + "=" + n.str})
		}
	}
	walk(doc, "")
	// Object keys outside spans are searched too.
	return spans, rest
}

func spanRecord(s *jnode, path string) record {
	traceID := normalizeID(firstText(s, "trace_id", "traceId", "traceID"), 16)
	spanID := normalizeID(firstText(s, "span_id", "spanId", "spanID"), 8)
	name := firstText(s, "name", "operationName")
	r := record{
		id:      fmt.Sprintf("span %q trace %s span %s", name, short(traceID), spanID),
		key:     traceID + "/" + spanID,
		traceID: traceID,
		name:    name,
	}
	if traceID == "" && spanID == "" {
		r.key = path
	}
	r.parts = flattenParts(s, "")
	return r
}

func firstText(n *jnode, keys ...string) string {
	for _, k := range keys {
		if v := n.get(k); v != nil && v.kind == 's' {
			return v.str
		}
	}
	return ""
}

// normalizeID returns an id as lowercase hex, whether it came as hex (OTLP JSON, Jaeger) or as
// base64 (protojson).
func normalizeID(s string, size int) string {
	if len(s) == 2*size && isHexString(strings.ToLower(s)) {
		return strings.ToLower(s)
	}
	if b, err := decodeBase64Any(s); err == nil && len(b) == size {
		return fmt.Sprintf("%x", b)
	}
	return strings.ToLower(s)
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexByte(s[i]) {
			return false
		}
	}
	return s != ""
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12] + "…"
	}
	return id
}
