package protocol

import (
	"iter"
	"slices"
	"strings"
)

// This file splits JSON already validated (validJSON) into its parts without building maps or
// copying values: the splitters only find boundaries. Results match encoding/json's exactly —
// duplicate keys resolve to the last, strings and keys are unescaped as encoding/json unescapes
// them — and FuzzSplitMatchesEncodingJSON holds them to it.
//
// The decoder reads one string copy of the body (DecodeChatRequest), so every key and value it
// cuts, and every string without escapes it keeps, is a substring of that copy: a request costs
// one copy of its body, not one allocation per string. The request's strings alias the copy,
// never the body buffer, which the server reuses. The splitters are generic over text, so that
// the tests, which split raw JSON bytes to compare with encoding/json
// (FuzzSplitMatchesEncodingJSON), split them with the same code.
//
// What it pays: BenchmarkDecodeChatRequest (scan_test.go) decodes a short chat in 3 allocations
// where byte-slice splitting with a copy per string took 16, and in 40% of the time.

// text is what the splitters read: the decoder's string copy of a body, or raw JSON bytes.
type text interface{ ~string | ~[]byte }

// member is one member of a JSON object: its unescaped key and its raw value, cut from the
// object's text.
type member[T text] struct {
	key string
	val T
}

// members is a JSON object's members sorted by key, each key once (the last occurrence wins, as
// with encoding/json), with null members dropped (a null means the key is absent).
type members[T text] []member[T]

// all yields the members in key order, the order the decoder examines them in.
func (o members[T]) all() iter.Seq2[string, T] {
	return func(yield func(string, T) bool) {
		for _, f := range o {
			if !yield(f.key, f.val) {
				return
			}
		}
	}
}

// get returns the value of key. Objects here have a handful of members; a scan beats a search.
func (o members[T]) get(key string) (T, bool) {
	for _, f := range o {
		if f.key == key {
			return f.val, true
		}
	}
	var zero T
	return zero, false
}

// appendMembers splits the valid JSON object v into its members, appended to o: a caller that
// passes a buffer on its stack (stackMembers) splits an object of a few members without an
// allocation. keys holds the same bytes as v, as a string (v itself when v is one): keys are cut
// from it, so that a key without escapes is a substring, not a copy. ok is false when v is not
// an object.
func appendMembers[T text](o members[T], v T, keys string) (_ members[T], ok bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return o, true
	}
	for i < len(v) && v[i] == '"' {
		end := skipString(v, i)
		key, ok := unquote(keys[i:end])
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
		o = append(o, member[T]{key: key, val: v[start:end]})
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

// stackMembers is room for the members of most of the protocol's objects (a message, a part, a
// tool, a tool call have two to five), declared by a caller of appendMembers on its own stack.
type stackMembers [8]member[string]

// stackRequestMembers is room for a request's top-level members (all but the most elaborate
// requests'), declared by the decoder's entry on its own stack.
type stackRequestMembers [topMembers]member[string]

const topMembers = 16

// settle sorts the members by key, keeps the last of each duplicated key and drops nulls.
func (o members[T]) settle() members[T] {
	if len(o) > 1 {
		// A stable sort keeps duplicates in document order, so the last of a run is the last sent.
		slices.SortStableFunc(o, func(a, b member[T]) int { return strings.Compare(a.key, b.key) })
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

// appendElements splits the valid JSON array v into its elements, appended to a (a buffer on the
// caller's stack: stackElements). ok is false when v is not an array.
func appendElements[T text](a []T, v T) (_ []T, ok bool) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return a, true
	}
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

// stackElements is room for the elements of most arrays a request has (its messages, a
// message's parts, its tools), declared by a caller of appendElements on its own stack.
type stackElements [8]string

func skipSpace[T text](v T, i int) int {
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
func skipString[T text](v T, i int) int {
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
func skipValue[T text](v T, i int) int {
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

// appendCompact appends the valid JSON value v without the whitespace between its tokens: what
// json.Compact makes of it (FuzzAppendCompactMatchesEncodingJSON), without copying v into the
// bytes json.Compact reads.
func appendCompact(buf []byte, v string) []byte {
	start := 0 // v[start:i] is yet to be appended
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			i = skipString(v, i) - 1
		case ' ', '\t', '\r', '\n':
			buf = append(buf, v[start:i]...)
			start = i + 1
		}
	}
	return append(buf, v[start:]...)
}
