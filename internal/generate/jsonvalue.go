package generate

import "mockgateway/internal/jsonenc"

// jvalue is a decoded JSON value that keeps the order of object members, which encoding/json's
// map decoding loses; the schema generator emits properties in the order the schema lists them.
type jvalue struct {
	kind jkind
	b    bool
	s    string // string value, or a number's literal text
	arr  []*jvalue
	keys []string // object member names, in document order
	vals []*jvalue
	// index maps each name of a large object to its first position: a schema with 60,000
	// properties is looked up once per property, and a scan per lookup made that quadratic.
	index map[string]int
	// info caches what the generator derived from this value as a schema (schema_cache.go).
	// Values are parsed per request and generated from by one goroutine, so it needs no lock.
	info *schemaInfo
}

// indexFrom is the member count from which an object keeps an index; below it a scan is
// cheaper than hashing.
const indexFrom = 16

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

// get returns the member key of an object (the first one, if duplicated), or nil.
func (v *jvalue) get(key string) *jvalue {
	if v == nil || v.kind != jObject {
		return nil
	}
	if i := v.pos(key); i >= 0 {
		return v.vals[i]
	}
	return nil
}

// pos returns the position of the first member named key, or -1.
func (v *jvalue) pos(key string) int {
	if v.index != nil {
		if i, ok := v.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range v.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// reindex builds the index of a large object (and drops it from a small one). It is called
// whenever an object's members are set in bulk; appendMember keeps it current one by one.
func (v *jvalue) reindex() {
	v.index = nil
	if len(v.keys) < indexFrom {
		return
	}
	v.index = make(map[string]int, len(v.keys))
	for i, k := range v.keys {
		if _, dup := v.index[k]; !dup {
			v.index[k] = i
		}
	}
}

// appendMember adds a member at the end of an object the caller owns.
func (v *jvalue) appendMember(key string, val *jvalue) {
	v.keys = append(v.keys, key)
	v.vals = append(v.vals, val)
	switch {
	case v.index != nil:
		if _, dup := v.index[key]; !dup {
			v.index[key] = len(v.keys) - 1
		}
	case len(v.keys) >= indexFrom:
		v.reindex()
	}
}

// members returns the members of an array or the values of an object (nil for anything else).
func (v *jvalue) members() []*jvalue {
	if v == nil {
		return nil
	}
	if v.kind == jArray {
		return v.arr
	}
	return v.vals
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
	out.reindex()
	return out
}

// appendJSONValue appends v as compact JSON pieces (rule 7 of the package documentation). It
// stops at b's ceiling and writes no more of a literal than the ceiling can show: a const or
// enum value may be a megabyte of the request, written once per item and choice otherwise.
func appendJSONValue(b *pieceBuilder, v *jvalue) {
	if b.full() {
		return
	}
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
		b.add(b.clip(v.s))
	case jString:
		b.buf = jsonenc.AppendString(b.buf, b.clip(v.s))
		b.cut()
	case jArray:
		b.add("[")
		for i, item := range v.arr {
			if b.full() {
				return
			}
			if i > 0 {
				b.add(",")
			}
			appendJSONValue(b, item)
		}
		b.add("]")
	case jObject:
		b.add("{")
		for i, k := range v.keys {
			if b.full() {
				return
			}
			if i > 0 {
				b.add(",")
			}
			b.buf = jsonenc.AppendString(b.buf, b.clip(k))
			b.cut()
			b.add(":")
			appendJSONValue(b, v.vals[i])
		}
		b.add("}")
	}
}
