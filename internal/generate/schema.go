package generate

// Limits that keep the instance generator finite and cheap on any schema, however odd or hostile.
// Schemas that need more (minItems: 1000, a required member that recurses forever) get an
// instance that stops at the limit: still valid JSON, possibly not valid against the schema.
// Above them all, the choice's ceiling (pieceBuilder.full) stops the instance where the answer
// is cut anyway, so no schema makes the generator write more than the answer shows.
const (
	maxRefDepth       = 4       // $ref hops after which objects keep only required members (rule 8)
	maxRefHops        = 24      // $ref hops after which a $ref is no longer followed at all
	maxNesting        = 48      // JSON nesting after which a minimal value is emitted
	maxFlattenSteps   = 64      // combinator rewrites per schema node
	maxArrayItems     = 64      // cap on emitted array items (minItems above it is not met)
	maxStringRunes    = 4096    // cap on minLength
	maxExtraMembers   = 64      // cap on members added for minProperties
	maxOutputPieces   = 1 << 15 // a backstop under any configured ceiling, and without one
	maxOutputBytes    = 1 << 20
	maxWork           = 1 << 16 // schema nodes visited, retries included
	maxFlattenWork    = 1 << 16 // members one flatten copies ($ref, allOf, anyOf, oneOf)
	uniqueItemRetries = 64
	// retryBytesPerWork charges a uniqueItems retry one unit of work per this many bytes it
	// rewrote, so that retrying large items cannot multiply the output without bound.
	retryBytesPerWork = 16
)

// schemaGen writes one instance of a JSON Schema as JSON pieces.
type schemaGen struct {
	root    *jvalue // $ref targets resolve against it
	r       *rng
	b       *pieceBuilder
	scratch []byte
	work    int // schema nodes visited and members copied; bounds retries and recursion
	// flatWork is what the flatten under way has spent (flattenOnce).
	flatWork int
	cache    *requestCache
	steps    int // steps of the current pattern walk
}

// genCtx is where the generator is in the instance.
type genCtx struct {
	refDepth int // $ref hops on the path from the root
	nesting  int // JSON nesting of the value being written
}

// appendSchemaInstance appends a JSON instance of schema (nil: no schema) to b as pieces. The
// instance is an object whenever the schema allows anything, because both tool arguments and
// structured outputs are expected to be objects. cache is shared by the request's instances
// (nil: a fresh one).
func appendSchemaInstance(b *pieceBuilder, r *rng, schema *jvalue, cache *requestCache) {
	if schema == nil {
		b.add("{")
		b.add("}")
		return
	}
	if cache == nil {
		cache = newRequestCache()
	}
	g := schemaGen{root: schema, r: r, b: b, cache: cache}
	g.value(schema, genCtx{})
}

func (g *schemaGen) exhausted() bool {
	return len(g.b.ends) > maxOutputPieces || len(g.b.buf) > maxOutputBytes || g.work > maxWork
}

// value writes an instance of schema s.
func (g *schemaGen) value(s *jvalue, c genCtx) {
	if g.b.full() {
		return // past the choice's ceiling: nothing written now would be seen
	}
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
	s, c, ok := g.flattenOnce(s, c)
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

// enum picks one member of e, preferring members that match the declared type.
func (g *schemaGen) enum(s, e *jvalue) {
	choices := enumChoices(s, e)
	appendJSONValue(g.b, choices[g.r.intn(len(choices))])
}
