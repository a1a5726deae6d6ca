package generate

// What the generator derives from a schema is computed once per request, not once per visit:
// the same node is visited for every item of an array, every $ref to it and every choice of n,
// and a node can be large (60,000 properties, 80,000 required names, 1,000 enum values), so
// deriving it per visit multiplied the schema's size by the answer's.

// requestCache is shared by every schema instance of one request (all choices, all tool calls).
type requestCache struct {
	patterns map[string]*pattern
	refs     map[refKey]*jvalue
	flat     map[flatKey]flatResult
	// compileInsts and matchSteps are what is left of the request's budgets for checking
	// pattern candidates with a compiled regexp (schema_pattern.go).
	compileInsts int
	matchSteps   int
}

type refKey struct {
	root *jvalue
	ref  string
}

func newRequestCache() *requestCache {
	c := freshCache()
	return &c
}

func freshCache() requestCache {
	return requestCache{compileInsts: maxCompileInsts, matchSteps: maxMatchSteps}
}

// schemaInfo is what the generator derived from one schema node; it hangs off the node.
type schemaInfo struct {
	typ      string
	typDone  bool
	enum     []*jvalue // enum members to pick from (see enumChoices)
	enumDone bool
	plans    [2]*objectPlan // by shallow (0: every member, 1: required members only)
}

func infoOf(s *jvalue) *schemaInfo {
	if s.info == nil {
		s.info = &schemaInfo{}
	}
	return s.info
}

// schemaType is the type the generator writes for a flattened schema: its type (the first one
// that is not "null" when it lists several), else the type its keywords imply, else "".
func schemaType(s *jvalue) string {
	in := infoOf(s)
	if !in.typDone {
		in.typ, in.typDone = deriveType(s), true
	}
	return in.typ
}

func deriveType(s *jvalue) string {
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

// Kinds a "type" keyword allows, as bits, so that checking an enum member is one test rather
// than a scan of the type list.
const (
	allowNull uint8 = 1 << iota
	allowBool
	allowString
	allowNumber
	allowInteger
	allowArray
	allowObject
	allowAll = 1<<7 - 1
)

func typeMask(s *jvalue) uint8 {
	t := s.get("type")
	var names []*jvalue
	switch {
	case t == nil:
		return allowAll
	case t.kind == jString:
		names = []*jvalue{t}
	case t.kind == jArray:
		names = t.arr
	default:
		return allowAll
	}
	var m uint8
	for _, v := range names {
		if v.kind != jString {
			continue
		}
		switch v.s {
		case "null":
			m |= allowNull
		case "boolean":
			m |= allowBool
		case "string":
			m |= allowString
		case "number":
			m |= allowNumber
		case "integer":
			m |= allowInteger
		case "array":
			m |= allowArray
		case "object":
			m |= allowObject
		}
	}
	return m
}

// allows reports whether value v has one of the kinds of mask m.
func allows(m uint8, v *jvalue) bool {
	switch v.kind {
	case jNull:
		return m&allowNull != 0
	case jBool:
		return m&allowBool != 0
	case jString:
		return m&allowString != 0
	case jArray:
		return m&allowArray != 0
	case jObject:
		return m&allowObject != 0
	case jNumber:
		if m&allowNumber != 0 {
			return true
		}
		if m&allowInteger == 0 {
			return false
		}
		r, ok := parseRat(v.s)
		return ok && r.IsInt()
	}
	return false
}

// enumChoices returns the members of enum e to pick from: those of the type s declares, or all
// of them when none is.
func enumChoices(s, e *jvalue) []*jvalue {
	in := infoOf(s)
	if in.enumDone {
		return in.enum
	}
	m := typeMask(s)
	var keep []*jvalue
	for _, v := range e.arr {
		if allows(m, v) {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		keep = e.arr
	}
	in.enum, in.enumDone = keep, true
	return keep
}

// objectPlan is which members an object schema's instance has, decided once per node.
type objectPlan struct {
	props *jvalue // properties, nil when absent or not an object
	// order lists the members of props that are written, so that writing an object costs what
	// it writes even when most members are left out (required only, past maxRefDepth).
	order []int
	extra []string // required names that props does not describe, each once, in order
	// required lists the required names; a set is built only when there are many.
	required    []*jvalue
	requiredSet map[string]struct{}
}

// setFrom is the list length from which a set replaces a scan.
const setFrom = 8

func (p *objectPlan) isRequired(name string) bool {
	if p.requiredSet != nil {
		_, ok := p.requiredSet[name]
		return ok
	}
	for _, v := range p.required {
		if v.kind == jString && v.s == name {
			return true
		}
	}
	return false
}

// planObject returns the plan of object schema s: every member of properties in order (only
// the required ones when shallow, so that recursive structures end), optional members dropped
// from the end for maxProperties, then the required names that properties does not describe,
// each once.
func planObject(s *jvalue, shallow bool) *objectPlan {
	in := infoOf(s)
	slot := 0
	if shallow {
		slot = 1
	}
	if p := in.plans[slot]; p != nil {
		return p
	}
	p := &objectPlan{props: s.get("properties")}
	if p.props != nil && p.props.kind != jObject {
		p.props = nil
	}
	if r := s.get("required"); r != nil && r.kind == jArray {
		p.required = r.arr
		if len(r.arr) >= setFrom {
			p.requiredSet = make(map[string]struct{}, len(r.arr))
			for _, v := range r.arr {
				if v.kind == jString {
					p.requiredSet[v.s] = struct{}{}
				}
			}
		}
	}
	if props := p.props; props != nil {
		include := make([]bool, len(props.keys))
		count := 0
		for i, k := range props.keys {
			// A member whose schema is false must be absent; leave it out unless required
			// (then no instance exists and null is written).
			if forbidden := props.vals[i].kind == jBool && !props.vals[i].b; forbidden && !p.isRequired(k) {
				continue
			}
			if !shallow || p.isRequired(k) {
				include[i] = true
				count++
			}
		}
		// maxProperties: drop optional members from the end.
		if maxP := intKeyword(s, "maxProperties", -1); maxP >= 0 {
			for i := len(props.keys) - 1; i >= 0 && count > maxP; i-- {
				if include[i] && !p.isRequired(props.keys[i]) {
					include[i] = false
					count--
				}
			}
		}
		for i, k := range props.keys {
			if include[i] && props.pos(k) == i { // a duplicated name: the first one counts
				p.order = append(p.order, i)
			}
		}
	}
	seen := make(map[string]struct{})
	for _, v := range p.required {
		if v.kind != jString || p.props.has(v.s) {
			continue
		}
		if _, dup := seen[v.s]; dup {
			continue
		}
		seen[v.s] = struct{}{}
		p.extra = append(p.extra, v.s)
	}
	in.plans[slot] = p
	return p
}
