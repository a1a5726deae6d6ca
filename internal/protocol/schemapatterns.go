package protocol

import (
	"encoding/json"
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
	w := patternWalk{max: maxProgram}
	w.value(schema, path)
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

type patternWalk struct {
	max int
	err *apierr.Error
}

// value walks a JSON value at path. Its depth is the text's, which the decoder's validation
// bounds.
func (w *patternWalk) value(v []byte, path string) {
	switch firstByte(v) {
	case '{':
		eachMember(v, func(name, val []byte) {
			if w.err != nil {
				return
			}
			key := keyword(name)
			p := path
			if path != unnamedRoot { // a path is named only to report a problem
				p = joinPath(path, string(key))
			}
			switch string(key) {
			case "pattern":
				if firstByte(val) == '"' {
					w.check(val, p)
					return
				}
			case "patternProperties":
				eachMember(val, func(re, sub []byte) {
					if w.err == nil {
						rp := p
						if p != unnamedRoot {
							s, _ := jsonscan.Unquote(re)
							rp = joinPath(p, s)
						}
						w.check(re, rp)
						w.value(sub, rp)
					}
				})
				return
			}
			w.value(val, p)
		})
	case '[':
		i := 0
		eachElement(v, func(e []byte) {
			if w.err == nil {
				w.value(e, indexPath(path, i))
			}
			i++
		})
	}
}

// check sizes the pattern whose JSON string literal is quoted.
func (w *patternWalk) check(quoted []byte, path string) {
	src, ok := jsonscan.Unquote(quoted)
	if !ok {
		return
	}
	cost, err := regexcost.Parse(src)
	if err != nil || cost.Size() <= w.max {
		return
	}
	w.err = apierr.New(apierr.InvalidValue, path, "Invalid schema: a pattern compiles to about "+strconv.Itoa(cost.Size())+
		" instructions, over the mock's bound of "+strconv.Itoa(w.max)+" (--max-regex-program); a repetition such as {1000} copies what it repeats.")
}

// text decodes the Responses API's text (the answer's format) and checks its schema's patterns.
func (c *responsesState) text(path, v string) *apierr.Error {
	if e := textObject.decode(&c.req.ResponseFormat, path, v); e != nil {
		return e
	}
	return CheckSchemaPatterns(joinPath(joinPath(path, "format"), "schema"), c.req.ResponseFormat.Schema, c.lim.MaxRegexProgram)
}
