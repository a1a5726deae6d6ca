package generate

import (
	"bytes"
	"slices"
	"strconv"

	"mockgateway/internal/jsonenc"
)

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

// object writes the members its plan lists (planObject), then extra members up to
// minProperties. It stops at the choice's ceiling: the rest would not be seen.
func (g *schemaGen) object(s *jvalue, c genCtx) {
	plan := planObject(s, c.refDepth > maxRefDepth)
	extra := s.get("additionalProperties")
	if extra == nil {
		extra = s.get("unevaluatedProperties")
	}

	child := genCtx{refDepth: c.refDepth, nesting: c.nesting + 1}
	written := 0
	member := func(name string) {
		if written > 0 {
			g.b.add(",")
		}
		g.b.buf = jsonenc.AppendString(g.b.buf, g.b.clip(name))
		g.b.cut()
		g.b.add(":")
		written++
	}

	g.b.add("{")
	for _, i := range plan.order {
		if g.b.full() {
			return
		}
		member(plan.props.keys[i])
		g.value(plan.props.vals[i], child)
	}
	for _, name := range plan.extra {
		if g.b.full() {
			return
		}
		member(name)
		g.extraValue(extra, child)
	}
	if minP := min(intKeyword(s, "minProperties", 0), maxExtraMembers); written < minP &&
		!(extra != nil && extra.kind == jBool && !extra.b) {
		// Every member written so far is a key of properties or a required name, so only the
		// added names need remembering.
		var added []string
		for attempt := 0; written < minP && attempt < 4*maxExtraMembers && !g.b.full(); attempt++ {
			name := g.r.word()
			if attempt >= len(words) {
				name += strconv.Itoa(attempt)
			}
			if plan.props.has(name) || plan.isRequired(name) || slices.Contains(added, name) {
				continue
			}
			added = append(added, name)
			member(name)
			g.extraValue(extra, child)
		}
	}
	g.b.add("}")
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
		if g.b.full() {
			return // the rest of the array is past the choice's ceiling
		}
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
		if unique && !g.b.full() { // an item cut by the ceiling is kept as it is
			dup := g.duplicate(starts, at)
			for retry := 0; dup && retry < uniqueItemRetries && !g.exhausted(); retry++ {
				g.work += 1 + len(g.b.since(at))/retryBytesPerWork
				g.b.reset(at)
				g.value(item, child)
				dup = !g.b.full() && g.duplicate(starts, at)
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
