package protocol

import (
	"bytes"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file splits JSON the decoder has already validated into its parts without building
// maps or copying raw values. DecodeChatRequest checks the whole body once with json.Valid;
// every value it hands down is a complete value cut from that body, so the splitters below only
// find boundaries. Unmarshalling each level into map[string]json.RawMessage, as the decoder once
// did, re-validated and copied every nested level and cost most of a request's decoding time.
// Results match encoding/json's exactly — duplicate keys resolve to the last, strings and keys
// are unescaped by encoding/json whenever they hold an escape or non-UTF-8 bytes — and
// FuzzSplitMatchesEncodingJSON holds them to it. What it pays: BenchmarkDecodeChatRequest, about
// 1.5 µs and 16 allocations for one message where the map decoding took 7.7 µs and 57.

// field is one member of a JSON object.
type field struct {
	key string
	val json.RawMessage // aliases the request body: never kept past decoding
}

// object is a JSON object's members sorted by key, each key once (the last occurrence wins, as
// with encoding/json), with null members dropped (a null means the key is absent).
type object []field

// all yields the members in key order, the order the decoder examines them in.
func (o object) all() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for _, f := range o {
			if !yield(f.key, f.val) {
				return
			}
		}
	}
}

// get returns the value of key. Objects here have a handful of members; a scan beats a search.
func (o object) get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// splitObject splits a valid JSON object into its members. ok is false when v is not an object.
func splitObject(v []byte) (_ object, ok bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return object{}, true
	}
	o := make(object, 0, 4) // room for most objects' members: one allocation, seldom a regrowth
	for i < len(v) && v[i] == '"' {
		end := skipString(v, i)
		key, ok := unquote(v[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return nil, false
		}
		start := skipSpace(v, i+1)
		end = skipValue(v, start)
		if end <= start {
			return nil, false
		}
		o = append(o, field{key: key, val: v[start:end]})
		i = skipSpace(v, end)
		if i < len(v) && v[i] == '}' {
			return o.settle(), true
		}
		if i >= len(v) || v[i] != ',' {
			return nil, false
		}
		i = skipSpace(v, i+1)
	}
	return nil, false
}

// settle sorts the members by key, keeps the last of each duplicated key and drops nulls.
func (o object) settle() object {
	if len(o) > 1 {
		// A stable sort keeps duplicates in document order, so the last of a run is the last sent.
		slices.SortStableFunc(o, func(a, b field) int { return strings.Compare(a.key, b.key) })
	}
	out := o[:0]
	for i, f := range o {
		if i+1 < len(o) && o[i+1].key == f.key {
			continue // a later duplicate wins
		}
		if isJSONNull(f.val) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// splitArray splits a valid JSON array into its elements. ok is false when v is not an array.
func splitArray(v []byte) (_ []json.RawMessage, ok bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return []json.RawMessage{}, true
	}
	a := make([]json.RawMessage, 0, 4)
	for i < len(v) {
		end := skipValue(v, i)
		if end <= i {
			return nil, false
		}
		a = append(a, v[i:end])
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ']' {
			return a, true
		}
		if i >= len(v) || v[i] != ',' {
			return nil, false
		}
		i = skipSpace(v, i+1)
	}
	return nil, false
}

// unquote returns the string a valid JSON string literal q (quotes included) stands for. A
// literal without escapes and of valid UTF-8 is its own bytes; anything else goes through
// encoding/json, which also replaces invalid UTF-8 the way the rest of Go's JSON does.
func unquote(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return "", false
	}
	return s, true
}

func skipSpace(v []byte, i int) int {
	for i < len(v) {
		switch v[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string literal starting at v[i] == '"'.
func skipString(v []byte, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// skipValue returns the index just past the value starting at v[i]; i itself when there is none.
func skipValue(v []byte, i int) int {
	if i >= len(v) {
		return i
	}
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				j = skipString(v, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(v)
	case ',', ':', '}', ']':
		return i
	}
	// A number or a literal runs to the next delimiter.
	j := i
	for j < len(v) {
		switch v[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}
