package protocol

import (
	"iter"
	"slices"
	"strings"

	"mockgateway/internal/jsonscan"
)

// This file splits JSON already validated (jsonscan.Valid) into its parts without building maps
// or copying values: the splitters only find boundaries, with the service's one scanner
// (internal/jsonscan). Results match encoding/json's exactly —
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
// What it pays: TestDecodeAllocations (scan_test.go) holds a short chat to the copy of its body
// and the request, where byte-slice splitting with a copy per string cost one a string;
// BenchmarkDecodeChatRequest measures it (docs/performance.md).

// text is what the splitters read: the decoder's string copy of a body, or raw JSON bytes.
type text = jsonscan.Text

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
	i := jsonscan.SkipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	i = jsonscan.SkipSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return o, true
	}
	for i < len(v) && v[i] == '"' {
		end := jsonscan.SkipString(v, i)
		key, ok := jsonscan.Unquote(keys[i:end])
		if !ok {
			return nil, false
		}
		i = jsonscan.SkipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return nil, false
		}
		start := jsonscan.SkipSpace(v, i+1)
		end = jsonscan.SkipValue(v, start)
		if end <= start {
			return nil, false
		}
		o = append(o, member[T]{key: key, val: v[start:end]})
		i = jsonscan.SkipSpace(v, end)
		if i < len(v) && v[i] == '}' {
			return o.settle(), true
		}
		if i >= len(v) || v[i] != ',' {
			return nil, false
		}
		i = jsonscan.SkipSpace(v, i+1)
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
	i := jsonscan.SkipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, false
	}
	i = jsonscan.SkipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return a, true
	}
	for i < len(v) {
		end := jsonscan.SkipValue(v, i)
		if end <= i {
			return nil, false
		}
		a = append(a, v[i:end])
		i = jsonscan.SkipSpace(v, end)
		if i < len(v) && v[i] == ']' {
			return a, true
		}
		if i >= len(v) || v[i] != ',' {
			return nil, false
		}
		i = jsonscan.SkipSpace(v, i+1)
	}
	return nil, false
}

// stackElements is room for the elements of most arrays a request has (its messages, a
// message's parts, its tools), declared by a caller of appendElements on its own stack.
type stackElements [8]string
