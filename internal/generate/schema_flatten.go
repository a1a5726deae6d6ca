package generate

import (
	"net/url"
	"strconv"
	"strings"
)

// flattenOnce is flatten computed once per request for each schema node and $ref depth. It
// draws nothing at random and spends a budget of its own (maxFlattenWork), so its result
// depends on nothing else, and the node a $ref or an allOf resolves to is built once, not
// once per item of every choice; being one node, it also keeps its plan (planObject).
func (g *schemaGen) flattenOnce(s *jvalue, c genCtx) (*jvalue, genCtx, bool) {
	if !s.has("$ref") && !s.has("allOf") && !s.has("anyOf") && !s.has("oneOf") {
		return s, c, true
	}
	key := flatKey{s, c.refDepth}
	if r, ok := g.cache.flat[key]; ok {
		c.refDepth = r.refDepth
		return r.s, c, r.ok
	}
	g.flatWork = 0
	fs, fc, ok := g.flatten(s, c)
	g.work += g.flatWork // the choice that computes it pays for it
	if g.cache.flat == nil {
		g.cache.flat = make(map[flatKey]flatResult)
	}
	g.cache.flat[key] = flatResult{fs, fc.refDepth, ok}
	return fs, fc, ok
}

type flatKey struct {
	s        *jvalue
	refDepth int
}

type flatResult struct {
	s        *jvalue
	refDepth int
	ok       bool
}

// flatSpent reports whether the current flatten has spent its budget.
func (g *schemaGen) flatSpent() bool { return g.flatWork > maxFlattenWork }

// flatten rewrites s until it has no $ref, allOf, anyOf or oneOf: a $ref is replaced by its
// target merged with the sibling keywords, allOf by the merge of its branches, anyOf/oneOf by
// the merge of the chosen branch. ok is false when the schema is (or resolves to) false.
func (g *schemaGen) flatten(s *jvalue, c genCtx) (*jvalue, genCtx, bool) {
	for range maxFlattenSteps {
		g.flatWork++
		if ref := s.get("$ref"); ref != nil {
			g.flatWork += len(s.keys) // each rewrite copies the node's members once
			rest := s.with("$ref", nil)
			c.refDepth++
			var target *jvalue
			if ref.kind == jString && c.refDepth <= maxRefHops && !g.flatSpent() {
				target = g.resolve(ref.s)
			}
			switch {
			case target != nil && target.kind == jObject:
				s = g.merge(target, rest)
			case target != nil && target.kind == jBool && !target.b:
				return s, c, false
			default: // unresolved, true, or not a schema: only the siblings remain
				s = rest
			}
			continue
		}
		if all := s.get("allOf"); all != nil {
			g.flatWork += len(s.keys)
			merged := s.with("allOf", nil)
			if all.kind == jArray && !g.flatSpent() {
				depth := c.refDepth
				for _, branch := range all.arr {
					if g.flatSpent() {
						break // each merge copies what is merged so far: stop when the budget is spent
					}
					fb, bc, ok := g.flattenBranch(branch, c)
					if !ok {
						return s, c, false
					}
					depth = max(depth, bc.refDepth)
					merged = g.merge(merged, fb)
				}
				c.refDepth = depth
			}
			s = merged
			continue
		}
		key := "anyOf"
		alts := s.get(key)
		if alts == nil {
			key = "oneOf"
			alts = s.get(key)
		}
		if alts != nil {
			g.flatWork += len(s.keys)
			rest := s.with(key, nil)
			if fb, bc, ok := g.chooseBranch(alts, c); ok {
				s = g.merge(rest, fb)
				c.refDepth = bc.refDepth
			} else {
				s = rest
			}
			continue
		}
		return s, c, true
	}
	// A pathological chain of combinators: drop whatever is left of them.
	for _, k := range [...]string{"$ref", "allOf", "anyOf", "oneOf"} {
		s = s.with(k, nil)
	}
	return s, c, true
}

// merge is mergeSchemas with its cost counted as the flatten's work, so that self-referencing
// combinators cannot multiply it without bound: the members copied and the lists it unites.
func (g *schemaGen) merge(a, b *jvalue) *jvalue {
	g.flatWork += mergeCost(a) + mergeCost(b)
	return mergeSchemas(a, b)
}

func mergeCost(s *jvalue) int {
	if s == nil {
		return 0
	}
	n := len(s.keys)
	if len(s.keys) > 0 {
		n += len(s.get("properties").members()) + len(s.get("required").members()) +
			len(s.get("enum").members())
	}
	return n
}

// flattenBranch flattens a subschema of a combinator; true and non-object branches are the empty
// schema.
func (g *schemaGen) flattenBranch(branch *jvalue, c genCtx) (*jvalue, genCtx, bool) {
	switch {
	case branch.kind == jBool && !branch.b:
		return nil, c, false
	case branch.kind != jObject:
		return &jvalue{kind: jObject}, c, true
	}
	return g.flatten(branch, c)
}

// chooseBranch picks the anyOf/oneOf branch to follow: the first one that is satisfiable and not
// just null. Past maxRefDepth it prefers a null branch, because that is what ends a recursive
// structure such as a linked list or a tree.
func (g *schemaGen) chooseBranch(alts *jvalue, c genCtx) (*jvalue, genCtx, bool) {
	if alts.kind != jArray {
		return nil, c, false
	}
	var nullBranch *jvalue
	var nullCtx genCtx
	var first *jvalue
	var firstCtx genCtx
	for _, branch := range alts.arr {
		if g.flatSpent() && (first != nil || nullBranch != nil) {
			break
		}
		fb, bc, ok := g.flattenBranch(branch, c)
		if !ok {
			continue
		}
		if isNullSchema(fb) {
			if nullBranch == nil {
				nullBranch, nullCtx = fb, bc
			}
			continue
		}
		if first == nil {
			first, firstCtx = fb, bc
			if c.refDepth <= maxRefDepth {
				break
			}
		}
	}
	if c.refDepth > maxRefDepth && nullBranch != nil {
		return nullBranch, nullCtx, true
	}
	if first != nil {
		return first, firstCtx, true
	}
	if nullBranch != nil {
		return nullBranch, nullCtx, true
	}
	return nil, c, false
}

// isNullSchema reports whether a flattened schema only admits null.
func isNullSchema(s *jvalue) bool {
	if cv := s.get("const"); cv != nil {
		return cv.kind == jNull
	}
	if e := s.get("enum"); e != nil && e.kind == jArray && len(e.arr) > 0 {
		for _, v := range e.arr {
			if v.kind != jNull {
				return false
			}
		}
		return true
	}
	t := s.get("type")
	switch {
	case t == nil:
		return false
	case t.kind == jString:
		return t.s == "null"
	case t.kind == jArray:
		for _, v := range t.arr {
			if v.kind != jString || v.s != "null" {
				return false
			}
		}
		return len(t.arr) > 0
	}
	return false
}

// resolve returns the target of a $ref, or nil. Local references are resolved against the root
// schema: "#", "#/$defs/X", "#/definitions/X" and any other JSON pointer. A reference with a
// base URI ("schema.json#/$defs/X") is read as its fragment, which is right for the common case
// of a root $id; remote documents and $anchor names are not resolved.
func (g *schemaGen) resolve(ref string) *jvalue {
	key := refKey{g.root, ref}
	if v, ok := g.cache.refs[key]; ok {
		return v
	}
	v := resolvePointer(g.root, ref)
	if g.cache.refs == nil {
		g.cache.refs = make(map[refKey]*jvalue)
	}
	g.cache.refs[key] = v
	return v
}

// resolvePointer resolves a $ref against root; see resolve.
func resolvePointer(root *jvalue, ref string) *jvalue {
	_, frag, found := strings.Cut(ref, "#")
	if !found {
		return nil
	}
	if strings.Contains(frag, "%") {
		if un, err := url.PathUnescape(frag); err == nil {
			frag = un
		}
	}
	if frag == "" {
		return root
	}
	if frag[0] != '/' {
		return nil
	}
	v := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v.kind {
		case jObject:
			v = v.get(tok)
		case jArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v.arr) {
				return nil
			}
			v = v.arr[i]
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}
