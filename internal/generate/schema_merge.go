package generate

import (
	"maps"
	"slices"
)

// Every merge below is linear in the size of its inputs: lookups go through the objects' index
// or a set built once, never through a scan per member, because allOf of two schemas with
// thousands of properties or required names is a cheap request to send.

// mergeSchemas returns a schema that approximates "a and b both hold" for the keywords the
// generator reads: members of a come first (so a's property order leads), properties are united
// (a property in both becomes allOf of the two), required lists are united, types are
// intersected, numeric and length bounds take the tighter value, and for any other keyword a
// wins. Neither input is modified.
func mergeSchemas(a, b *jvalue) *jvalue {
	if b == nil || len(b.keys) == 0 {
		return a
	}
	if a == nil || len(a.keys) == 0 {
		return b
	}
	out := copyObject(a)
	for i, k := range b.keys {
		bv := b.vals[i]
		at := out.pos(k)
		if at < 0 {
			out.appendMember(k, bv)
			continue
		}
		av := out.vals[at]
		switch k {
		case "properties":
			out.vals[at] = mergeProperties(av, bv)
		case "required":
			out.vals[at] = unionStrings(av, bv)
		case "type":
			out.vals[at] = intersectTypes(av, bv)
		case "enum":
			out.vals[at] = intersectEnums(av, bv)
		case "minimum", "minLength", "minItems", "minProperties":
			out.vals[at] = tighter(av, bv, 1)
		case "maximum", "maxLength", "maxItems", "maxProperties":
			out.vals[at] = tighter(av, bv, -1)
		case "exclusiveMinimum":
			if av.kind == jNumber && bv.kind == jNumber {
				out.vals[at] = tighter(av, bv, 1)
			}
		case "exclusiveMaximum":
			if av.kind == jNumber && bv.kind == jNumber {
				out.vals[at] = tighter(av, bv, -1)
			}
		}
	}
	return out
}

func mergeProperties(a, b *jvalue) *jvalue {
	if a.kind != jObject {
		return b
	}
	if b.kind != jObject {
		return a
	}
	out := copyObject(a)
	for i, k := range b.keys {
		if j := out.pos(k); j >= 0 {
			out.vals[j] = &jvalue{kind: jObject, keys: []string{"allOf"},
				vals: []*jvalue{{kind: jArray, arr: []*jvalue{out.vals[j], b.vals[i]}}}}
			continue
		}
		out.appendMember(k, b.vals[i])
	}
	return out
}

func unionStrings(a, b *jvalue) *jvalue {
	if a.kind != jArray {
		return b
	}
	if b.kind != jArray {
		return a
	}
	out := &jvalue{kind: jArray, arr: append([]*jvalue(nil), a.arr...)}
	seen := make(map[string]struct{}, len(a.arr)+len(b.arr))
	for _, v := range a.arr {
		if v.kind == jString {
			seen[v.s] = struct{}{}
		}
	}
	for _, v := range b.arr {
		if _, dup := seen[v.s]; v.kind == jString && !dup {
			seen[v.s] = struct{}{}
			out.arr = append(out.arr, v)
		}
	}
	return out
}

// typeNames lists the type names of a type keyword.
func typeNames(t *jvalue) []string {
	switch t.kind {
	case jString:
		return []string{t.s}
	case jArray:
		names := make([]string, 0, len(t.arr))
		for _, v := range t.arr {
			if v.kind == jString {
				names = append(names, v.s)
			}
		}
		return names
	}
	return nil
}

// intersectTypes keeps a's types that b allows ("integer" is both an integer and a number); when
// nothing is left (an unsatisfiable schema) a's type stays.
func intersectTypes(a, b *jvalue) *jvalue {
	an, bn := typeNames(a), typeNames(b)
	if len(bn) == 0 {
		return a
	}
	if len(an) == 0 {
		return b
	}
	// Type names are a closed set of seven, but a hostile "type" array may repeat them
	// thousands of times: sets keep this linear.
	inB := make(map[string]bool, len(bn))
	for _, t := range bn {
		inB[t] = true
	}
	kept := make(map[string]bool, 7)
	out := &jvalue{kind: jArray}
	for _, t := range an {
		keep := ""
		switch {
		case inB[t]:
			keep = t
		case t == "number" && inB["integer"], t == "integer" && inB["number"]:
			keep = "integer"
		}
		if keep != "" && !kept[keep] {
			kept[keep] = true
			out.arr = append(out.arr, &jvalue{kind: jString, s: keep})
		}
	}
	if len(out.arr) == 0 {
		return a
	}
	return out
}

// intersectEnums keeps a's members that b also lists (compared by their compact JSON), or a when
// none are common.
func intersectEnums(a, b *jvalue) *jvalue {
	if a.kind != jArray || b.kind != jArray {
		return a
	}
	bt := make(map[string]struct{}, len(b.arr))
	for _, v := range b.arr {
		bt[compactText(v)] = struct{}{}
	}
	out := &jvalue{kind: jArray}
	for _, v := range a.arr {
		if _, ok := bt[compactText(v)]; ok {
			out.arr = append(out.arr, v)
		}
	}
	if len(out.arr) == 0 {
		return a
	}
	return out
}

func compactText(v *jvalue) string {
	var b pieceBuilder
	appendJSONValue(&b, v)
	return string(b.buf)
}

// tighter returns the larger (sign 1) or smaller (sign -1) of two numeric keyword values.
func tighter(a, b *jvalue, sign int) *jvalue {
	ar, aok := parseRatValue(a)
	br, bok := parseRatValue(b)
	switch {
	case !aok:
		return b
	case !bok:
		return a
	case ar.Cmp(br)*sign >= 0:
		return a
	default:
		return b
	}
}

// copyObject returns a copy of object v whose member lists can be changed freely.
func copyObject(v *jvalue) *jvalue {
	out := &jvalue{kind: jObject, keys: slices.Clone(v.keys), vals: slices.Clone(v.vals)}
	if v.index != nil {
		out.index = maps.Clone(v.index) // cheaper than hashing every name again
	} else {
		out.reindex()
	}
	return out
}
