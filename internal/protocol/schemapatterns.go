package protocol

import (
	"encoding/json"
	"slices"
	"strconv"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonscan"
	"mockgateway/internal/regexcost"
)

// CheckSchemaPatterns reports a regular expression of a JSON Schema — a pattern keyword's value
// or a patternProperties name, at any depth — whose compiled program is over maxProgram
// instructions (regexcost.Cost.Size): 400 invalid_value whose param is the pattern's path below
// path, the schema's place in the request. The mock compiles a request's patterns to generate
// its answer and to check a fixture's reply against them, so every schema is held to it, strict
// or not (docs/configuration.md). A pattern Go cannot read is left alone: the generator ignores
// it, and the check says the schema does not compile.
//
// It walks the text once; parsing a pattern costs its length, not its program. With the
// decoder's unnamed root it builds no path, so a schema without a pattern over the bound costs
// no allocation for one.
func CheckSchemaPatterns(path string, schema json.RawMessage, maxProgram int) *apierr.Error {
	if len(schema) == 0 {
		return nil
	}
	w := patternWalk{max: maxProgram, root: path, schema: schema}
	w.walk(schema)
	return w.err
}

// checkToolPatterns checks the parameters of each tool, at path[i].fn.parameters (fn is
// "function" in chat, "" in the Responses API).
func checkToolPatterns(tools []Tool, path, fn string, maxProgram int) *apierr.Error {
	for i := range tools {
		if len(tools[i].Parameters) == 0 {
			continue
		}
		p := indexPath(path, i)
		if fn != "" {
			p = joinPath(p, fn)
		}
		if e := CheckSchemaPatterns(joinPath(p, "parameters"), tools[i].Parameters, maxProgram); e != nil {
			return e
		}
	}
	return nil
}

// patternWalk reads a schema's text once, front to back, whatever its depth: a walk that split
// each object before descending into its members read every byte once per level above it, and
// named each level's path on the way down, so a schema nested thousands deep cost the square of
// its depth (TestDecodeCostIsLinearInDepth). The containers it is inside are a stack of steps,
// and a path is made of them only for the problem it reports (path).
type patternWalk struct {
	max    int
	err    *apierr.Error
	root   string // the schema's place in the request
	schema []byte // its text, which the steps point into
}

// patternStep is one open container of the walk and where in it the walk is: at is the offset
// of the member's quoted name in an object, the element's index in an array. It is small, as a
// schema may open thousands.
type patternStep struct {
	at      int
	object  bool
	regexes bool // a patternProperties object, whose member names are regular expressions
}

// walk checks the patterns of the valid JSON value v: each pattern keyword's string value and
// each patternProperties member name, at any depth, in document order, stopping at the first
// over the bound.
func (w *patternWalk) walk(v []byte) {
	// The open containers, outermost first. A schema a client writes by hand fits the room on
	// this stack (it is passed down, never kept); deeper ones spill to the heap.
	var room [16]patternStep
	steps := room[:0]
	i := jsonscan.SkipSpace(v, 0)
	regexes := false // the value at i is a patternProperties object
	for w.err == nil {
		// A value starts at i.
		if i >= len(v) {
			return
		}
		if c := v[i]; c == '{' || c == '[' {
			if len(steps) == cap(steps) {
				steps = slices.Grow(steps, len(steps)) // doubled: append grows a long slice by a quarter
			}
			steps = append(steps, patternStep{object: c == '{', regexes: regexes})
			i = jsonscan.SkipSpace(v, i+1)
			if i < len(v) && (v[i] == '}' || v[i] == ']') {
				steps = steps[:len(steps)-1]
				i++
			} else {
				if c == '{' {
					i, regexes = w.member(steps, v, i)
				}
				continue
			}
		} else {
			i = jsonscan.SkipValue(v, i)
		}
		// After a value: close what it ends, up to the next member or element.
		for w.err == nil {
			i = jsonscan.SkipSpace(v, i)
			if len(steps) == 0 || i >= len(v) {
				return
			}
			top := &steps[len(steps)-1]
			if v[i] != ',' {
				steps = steps[:len(steps)-1] // v[i] closes it
				i++
				continue
			}
			i = jsonscan.SkipSpace(v, i+1)
			if top.object {
				i, regexes = w.member(steps, v, i)
			} else {
				top.at++
				regexes = false
			}
			break
		}
	}
}

// member reads the name of the member at i of the innermost (object) step, checks what is
// checked there, and returns where the walk goes on — the member's value, or past it when
// nothing in it is walked — and whether that value is a patternProperties object.
func (w *patternWalk) member(steps []patternStep, v []byte, i int) (int, bool) {
	top := &steps[len(steps)-1]
	end := jsonscan.SkipString(v, i)
	top.at = i
	name := v[i:end]
	i = jsonscan.SkipSpace(v, end)
	i = jsonscan.SkipSpace(v, i+1) // past the colon: the value
	if top.regexes {
		w.check(steps, name)
		return i, false
	}
	switch string(keyword(name)) { // a conversion in a switch does not copy
	case "pattern":
		if firstByte(v[i:]) == '"' {
			end := jsonscan.SkipString(v, i)
			w.check(steps, v[i:end])
			return end, false
		}
	case "patternProperties":
		if firstByte(v[i:]) == '{' {
			return i, true
		}
		return jsonscan.SkipValue(v, i), false // not a map of schemas: nothing in it is walked
	}
	return i, false
}

// path names the place the walk is at, below the schema's root. It is made only for an error;
// with the decoder's unnamed root it is not made at all.
func (w *patternWalk) path(steps []patternStep) string {
	if w.root == unnamedRoot {
		return w.root
	}
	p := []byte(w.root)
	for _, s := range steps {
		if s.object {
			name, _ := jsonscan.Unquote(w.schema[s.at:jsonscan.SkipString(w.schema, s.at)])
			p = appendKeyToPath(p, name)
		} else {
			p = appendIndexToPath(p, s.at)
		}
	}
	return string(p)
}

// check sizes the pattern whose JSON string literal is quoted, at the walk's place.
func (w *patternWalk) check(steps []patternStep, quoted []byte) {
	src, ok := jsonscan.Unquote(quoted)
	if !ok {
		return
	}
	cost, err := regexcost.Parse(src)
	if err != nil || cost.Size() <= w.max {
		return
	}
	w.err = apierr.New(apierr.InvalidValue, w.path(steps), "Invalid schema: a pattern compiles to about "+strconv.Itoa(cost.Size())+
		" instructions, over the mock's bound of "+strconv.Itoa(w.max)+" (--max-regex-program); a repetition such as {1000} copies what it repeats.")
}

// text decodes the Responses API's text (the answer's format) and checks its schema's patterns.
func (c *responsesState) text(path, v string) *apierr.Error {
	if e := textObject.decode(&c.req.ResponseFormat, path, v); e != nil {
		return e
	}
	return CheckSchemaPatterns(joinPath(joinPath(path, "format"), "schema"), c.req.ResponseFormat.Schema, c.lim.MaxRegexProgram)
}
