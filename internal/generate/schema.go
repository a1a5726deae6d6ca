package generate

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"mockgateway/internal/protocol"
)

// Limits that keep the instance generator finite and cheap on any schema, however odd or hostile.
// Schemas that need more (minItems: 1000, a required member that recurses forever) get an
// instance that stops at the limit: still valid JSON, possibly not valid against the schema.
const (
	maxRefDepth       = 4    // $ref hops after which objects keep only required members (rule 8)
	maxRefHops        = 24   // $ref hops after which a $ref is no longer followed at all
	maxNesting        = 48   // JSON nesting after which a minimal value is emitted
	maxFlattenSteps   = 64   // combinator rewrites per schema node
	maxArrayItems     = 64   // cap on emitted array items (minItems above it is not met)
	maxStringRunes    = 4096 // cap on minLength
	maxExtraMembers   = 64   // cap on members added for minProperties
	maxOutputPieces   = 1 << 15
	maxOutputBytes    = 1 << 20
	maxWork           = 1 << 16 // schema nodes visited, retries included
	uniqueItemRetries = 64
)

// schemaGen writes one instance of a JSON Schema as JSON pieces.
type schemaGen struct {
	root    *jvalue // $ref targets resolve against it
	r       *rng
	b       *pieceBuilder
	scratch []byte
	work    int // schema nodes visited; bounds retries (which reset the buffer) and recursion
	// patterns caches compiled patterns: an array of 64 strings compiles its pattern once.
	patterns map[string]*compiledPattern
}

// genCtx is where the generator is in the instance.
type genCtx struct {
	refDepth int // $ref hops on the path from the root
	nesting  int // JSON nesting of the value being written
}

// appendSchemaInstance appends a JSON instance of schema (nil: no schema) to b as pieces. The
// instance is an object whenever the schema allows anything, because both tool arguments and
// structured outputs are expected to be objects.
func appendSchemaInstance(b *pieceBuilder, r *rng, schema *jvalue) {
	if schema == nil {
		b.add("{")
		b.add("}")
		return
	}
	g := schemaGen{root: schema, r: r, b: b}
	g.value(schema, genCtx{})
}

func (g *schemaGen) exhausted() bool {
	return len(g.b.ends) > maxOutputPieces || len(g.b.buf) > maxOutputBytes || g.work > maxWork
}

// value writes an instance of schema s.
func (g *schemaGen) value(s *jvalue, c genCtx) {
	g.work++
	if c.nesting > maxNesting || g.exhausted() {
		g.minimal(s, c)
		return
	}
	switch {
	case s == nil || s.kind == jBool && s.b:
		g.anything(c)
		return
	case s.kind == jBool: // false: no instance exists
		g.b.add("null")
		return
	case s.kind != jObject: // not a schema; read as the empty schema
		g.anything(c)
		return
	}
	s, c, ok := g.flatten(s, c)
	if !ok {
		g.b.add("null")
		return
	}
	if cv := s.get("const"); cv != nil {
		appendJSONValue(g.b, cv)
		return
	}
	if e := s.get("enum"); e != nil && e.kind == jArray && len(e.arr) > 0 {
		g.enum(s, e)
		return
	}
	switch schemaType(s) {
	case "object":
		g.object(s, c)
	case "array":
		g.array(s, c)
	case "string":
		g.stringValue(s)
	case "integer":
		g.number(s, true)
	case "number":
		g.number(s, false)
	case "boolean":
		if g.r.intn(2) == 0 {
			g.b.add("true")
		} else {
			g.b.add("false")
		}
	case "null":
		g.b.add("null")
	default:
		g.anything(c)
	}
}

// anything writes a value for a schema that accepts anything: an object at the root, a word
// elsewhere.
func (g *schemaGen) anything(c genCtx) {
	if c.nesting == 0 {
		g.b.add("{")
		g.b.add("}")
		return
	}
	g.plainString(0, -1)
}

// minimal writes the smallest plausible value once a limit is reached.
func (g *schemaGen) minimal(s *jvalue, c genCtx) {
	if s == nil || s.kind != jObject {
		if c.nesting == 0 {
			g.b.add("{")
			g.b.add("}")
		} else {
			g.b.add("null")
		}
		return
	}
	if cv := s.get("const"); cv != nil {
		appendJSONValue(g.b, cv)
		return
	}
	if e := s.get("enum"); e != nil && e.kind == jArray && len(e.arr) > 0 {
		appendJSONValue(g.b, e.arr[0])
		return
	}
	switch schemaType(s) {
	case "object":
		g.b.add("{")
		g.b.add("}")
	case "array":
		g.b.add("[")
		g.b.add("]")
	case "string":
		g.b.add(`""`)
	case "integer", "number":
		g.b.add("0")
	case "boolean":
		g.b.add("false")
	default:
		if c.nesting == 0 {
			g.b.add("{")
			g.b.add("}")
			return
		}
		g.b.add("null")
	}
}

// flatten rewrites s until it has no $ref, allOf, anyOf or oneOf: a $ref is replaced by its
// target merged with the sibling keywords, allOf by the merge of its branches, anyOf/oneOf by
// the merge of the chosen branch. ok is false when the schema is (or resolves to) false.
func (g *schemaGen) flatten(s *jvalue, c genCtx) (*jvalue, genCtx, bool) {
	for range maxFlattenSteps {
		g.work++
		if ref := s.get("$ref"); ref != nil {
			rest := s.with("$ref", nil)
			c.refDepth++
			var target *jvalue
			if ref.kind == jString && c.refDepth <= maxRefHops && !g.exhausted() {
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
			merged := s.with("allOf", nil)
			if all.kind == jArray && !g.exhausted() {
				depth := c.refDepth
				for _, branch := range all.arr {
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

// merge is mergeSchemas with its cost counted as work, so that self-referencing combinators
// cannot multiply it without bound.
func (g *schemaGen) merge(a, b *jvalue) *jvalue {
	g.work += len(a.keys) + len(b.keys)
	return mergeSchemas(a, b)
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
		if g.exhausted() && (first != nil || nullBranch != nil) {
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
		return g.root
	}
	if frag[0] != '/' {
		return nil
	}
	v := g.root
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

// schemaType is the type the generator writes for a flattened schema: its type (the first one
// that is not "null" when it lists several), else the type its keywords imply, else "".
func schemaType(s *jvalue) string {
	if t := s.get("type"); t != nil {
		switch t.kind {
		case jString:
			return t.s
		case jArray:
			onlyNull := false
			for _, v := range t.arr {
				if v.kind != jString {
					continue
				}
				if v.s != "null" {
					return v.s
				}
				onlyNull = true
			}
			if onlyNull {
				return "null"
			}
		}
	}
	for _, k := range s.keys {
		switch k {
		case "properties", "required", "additionalProperties", "patternProperties",
			"minProperties", "maxProperties", "propertyNames", "dependentRequired":
			return "object"
		case "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains":
			return "array"
		case "minLength", "maxLength", "pattern", "format":
			return "string"
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			return "number"
		}
	}
	return ""
}

// typeAllows reports whether value v has one of the types schema s declares (true when s
// declares none), so that an enum member of the wrong type is not picked.
func typeAllows(s *jvalue, v *jvalue) bool {
	t := s.get("type")
	if t == nil {
		return true
	}
	if t.kind == jString {
		return kindIs(v, t.s)
	}
	if t.kind == jArray {
		for _, name := range t.arr {
			if name.kind == jString && kindIs(v, name.s) {
				return true
			}
		}
		return false
	}
	return true
}

func kindIs(v *jvalue, typ string) bool {
	switch typ {
	case "null":
		return v.kind == jNull
	case "boolean":
		return v.kind == jBool
	case "string":
		return v.kind == jString
	case "number":
		return v.kind == jNumber
	case "integer":
		if v.kind != jNumber {
			return false
		}
		r, ok := parseRat(v.s)
		return ok && r.IsInt()
	case "array":
		return v.kind == jArray
	case "object":
		return v.kind == jObject
	}
	return false
}

// enum picks one member of e, preferring members that match the declared type.
func (g *schemaGen) enum(s, e *jvalue) {
	n := 0
	for _, v := range e.arr {
		if typeAllows(s, v) {
			n++
		}
	}
	if n == 0 {
		appendJSONValue(g.b, e.arr[g.r.intn(len(e.arr))])
		return
	}
	pick := g.r.intn(n)
	for _, v := range e.arr {
		if !typeAllows(s, v) {
			continue
		}
		if pick == 0 {
			appendJSONValue(g.b, v)
			return
		}
		pick--
	}
}

// intKeyword returns a non-negative integer keyword, or def when absent or malformed.
func intKeyword(s *jvalue, key string, def int) int {
	v := s.get(key)
	if v == nil || v.kind != jNumber {
		return def
	}
	f, err := strconv.ParseFloat(v.s, 64)
	if err != nil || f < 0 {
		return def
	}
	if f > 1<<30 {
		return 1 << 30
	}
	return int(f)
}

// object writes every member listed in properties, in schema order (only the required ones past
// maxRefDepth, so recursive structures end), then required members that properties does not
// describe, then extra members up to minProperties.
func (g *schemaGen) object(s *jvalue, c genCtx) {
	props := s.get("properties")
	if props != nil && props.kind != jObject {
		props = nil
	}
	required := s.get("required")
	if required != nil && required.kind != jArray {
		required = nil
	}
	isRequired := func(name string) bool {
		if required == nil {
			return false
		}
		for _, v := range required.arr {
			if v.kind == jString && v.s == name {
				return true
			}
		}
		return false
	}
	extra := s.get("additionalProperties")
	if extra == nil {
		extra = s.get("unevaluatedProperties")
	}
	shallow := c.refDepth > maxRefDepth

	var include []bool
	count := 0
	if props != nil {
		include = make([]bool, len(props.keys))
		for i, k := range props.keys {
			// A member whose schema is false must be absent; leave it out unless required
			// (then no instance exists and null is written).
			if forbidden := props.vals[i].kind == jBool && !props.vals[i].b; forbidden && !isRequired(k) {
				continue
			}
			if !shallow || isRequired(k) {
				include[i] = true
				count++
			}
		}
		// maxProperties: drop optional members from the end.
		if maxP := intKeyword(s, "maxProperties", -1); maxP >= 0 {
			for i := len(props.keys) - 1; i >= 0 && count > maxP; i-- {
				if include[i] && !isRequired(props.keys[i]) {
					include[i] = false
					count--
				}
			}
		}
	}

	child := genCtx{refDepth: c.refDepth, nesting: c.nesting + 1}
	written := 0
	member := func(name string) {
		if written > 0 {
			g.b.add(",")
		}
		g.b.buf = protocol.AppendString(g.b.buf, name)
		g.b.cut()
		g.b.add(":")
		written++
	}

	g.b.add("{")
	if props != nil {
		for i, k := range props.keys {
			if include[i] && props.get(k) == props.vals[i] { // skip duplicated names
				member(k)
				g.value(props.vals[i], child)
			}
		}
	}
	if required != nil {
		for i, v := range required.arr {
			if v.kind != jString || props.has(v.s) || listedBefore(required.arr[:i], v.s) {
				continue
			}
			member(v.s)
			g.extraValue(extra, child)
		}
	}
	if minP := min(intKeyword(s, "minProperties", 0), maxExtraMembers); written < minP &&
		!(extra != nil && extra.kind == jBool && !extra.b) {
		// Every member written so far is a key of properties or a required name, so only the
		// added names need remembering.
		var added []string
		for attempt := 0; written < minP && attempt < 4*maxExtraMembers; attempt++ {
			name := g.r.word()
			if attempt >= len(words) {
				name += strconv.Itoa(attempt)
			}
			if props.has(name) || isRequired(name) || slices.Contains(added, name) {
				continue
			}
			added = append(added, name)
			member(name)
			g.extraValue(extra, child)
		}
	}
	g.b.add("}")
}

func listedBefore(vs []*jvalue, name string) bool {
	for _, v := range vs {
		if v.kind == jString && v.s == name {
			return true
		}
	}
	return false
}

// extraValue writes the value of a member that properties does not describe.
func (g *schemaGen) extraValue(extra *jvalue, c genCtx) {
	if extra != nil && extra.kind == jObject {
		g.value(extra, c)
		return
	}
	g.plainString(0, -1)
}

// array writes max(minItems, 1) items (prefixItems first), never more than maxItems; past
// maxRefDepth only minItems. With uniqueItems, an item equal to an earlier one is generated
// again (a few times) and finally dropped when minItems allows.
func (g *schemaGen) array(s *jvalue, c genCtx) {
	var prefix []*jvalue
	items := s.get("items")
	if p := s.get("prefixItems"); p != nil && p.kind == jArray {
		prefix = p.arr
	} else if items != nil && items.kind == jArray { // draft 4–7 tuple form
		prefix = items.arr
		items = s.get("additionalItems")
	}
	minI := min(intKeyword(s, "minItems", 0), maxArrayItems)
	maxI := intKeyword(s, "maxItems", -1)
	n := max(minI, 1)
	if c.refDepth > maxRefDepth || g.exhausted() {
		n = minI
	} else {
		n = max(n, len(prefix))
	}
	if items != nil && items.kind == jBool && !items.b {
		n = min(n, len(prefix))
	}
	if maxI >= 0 {
		n = min(n, maxI)
	}
	n = min(n, maxArrayItems)
	unique := false
	if u := s.get("uniqueItems"); u != nil && u.kind == jBool && u.b {
		unique = true
	}

	child := genCtx{refDepth: c.refDepth, nesting: c.nesting + 1}
	g.b.add("[")
	var starts []builderMark // where each written item starts, for the uniqueness check
	written := 0
	for i := range n {
		item := items
		if i < len(prefix) {
			item = prefix[i]
		}
		before := g.b.mark()
		if written > 0 {
			g.b.add(",")
		}
		at := g.b.mark()
		g.value(item, child)
		if unique {
			dup := g.duplicate(starts, at)
			for retry := 0; dup && retry < uniqueItemRetries; retry++ {
				g.b.reset(at)
				g.value(item, child)
				dup = g.duplicate(starts, at)
			}
			if dup && written >= minI {
				g.b.reset(before)
				continue
			}
			starts = append(starts, at)
		}
		written++
	}
	g.b.add("]")
}

// duplicate reports whether the item written since at equals an item that starts at one of
// starts. Items are compared as generated text, which is canonical for this generator.
func (g *schemaGen) duplicate(starts []builderMark, at builderMark) bool {
	item := g.b.since(at)
	for k, st := range starts {
		end := at.buf
		if k+1 < len(starts) {
			end = starts[k+1].buf
		}
		// Between an item's start and the next one's there is the item and one "," separator.
		prev := bytes.TrimSuffix(g.b.buf[st.buf:end], []byte{','})
		if bytes.Equal(prev, item) {
			return true
		}
	}
	return false
}
