package protocol

import "mockgateway/internal/apierr"

// fieldClass is what the mock does with a member of an object, as the object's table says.
type fieldClass uint8

const (
	// unknown is not in the protocol: unknown_parameter.
	unknown fieldClass = iota
	// supported is decoded, and kept or acted on.
	supported
	// noEffect is validated and dropped: a deterministic mock answers the same whatever its
	// value, but a client that sends a wrong one must hear it as it would from OpenAI.
	noEffect
	// ignored is accepted without a look: the SDKs' helpers leave such members in the messages
	// they send back, and a client cannot be told to remove what its library added.
	ignored
	// unsupported is part of the protocol but not offered by the mock: unsupported_parameter,
	// whatever the value.
	unsupported
	// discriminator (a role or a type) was read before the key pass: the other members cannot
	// be classified without it.
	discriminator
)

// objectSpec is one object of the protocol. fields is its table: it classifies the member k,
// whose path is path, and decodes its value v into dst. required are the members that must be
// present, in the order their absence is reported in.
type objectSpec[S any] struct {
	fields   func(dst S, k, path, v string) (fieldClass, *apierr.Error)
	required []string
}

// decode walks the object v at path, or answers that v is not one.
func (s *objectSpec[S]) decode(dst S, path string, v string) *apierr.Error {
	var room stackMembers
	o, e := asObject(room[:0], path, v)
	if e != nil {
		return e
	}
	return s.walk(dst, path, o)
}

// walk is the key pass over o, in o's (sorted) key order, then the required-member check. It is
// the only loop over an object's members: every object gets the same order, the same unknown
// answer and the same missing-member check.
func (s *objectSpec[S]) walk(dst S, path string, o members[string]) *apierr.Error {
	for k, raw := range o.all() {
		p := joinPath(path, k) // at the top level a protocol key is its own path: no copy
		class, e := s.fields(dst, k, p, raw)
		if class == unknown {
			return errUnknown(p)
		}
		if e != nil {
			return e
		}
	}
	for _, name := range s.required {
		if !hasMember(o, name) {
			return errMissing(joinPath(path, name))
		}
	}
	return nil
}

// into stores a decoded value in its field and passes the error on, so that a table row reads
// into(&t.Name)(asName(p, v)) rather than calling a setter written for one field.
func into[T any](dst *T) func(T, *apierr.Error) *apierr.Error {
	return func(v T, e *apierr.Error) *apierr.Error {
		*dst = v
		return e
	}
}

// valid drops the value of a check whose value the mock does not keep.
func valid[T any](_ T, e *apierr.Error) *apierr.Error { return e }

// none is the destination of an object whose members keep nothing.
type none struct{}

// readDiscriminator reads the required string member key of object o at path — a message's
// role, a part's, tool's or format's type — which the other members cannot be classified
// without. It returns the member's path too, for the errors about its value.
func readDiscriminator(path string, o members[string], key string) (string, string, *apierr.Error) {
	p := joinPath(path, key)
	raw, ok := o.get(key)
	if !ok {
		return "", p, errMissing(p)
	}
	v, e := asString(p, raw)
	return v, p, e
}

// decodeEach decodes every element of an array at path into its own slot, naming each path[i].
// The slots are the result's, so a decoder writes where the value stays. An empty array gives
// nil, the same as an absent field.
func decodeEach[T any](path, v string, decode func(*T, string, string) *apierr.Error) ([]T, *apierr.Error) {
	var room stackElements
	items, e := asArray(room[:0], path, v)
	if e != nil || len(items) == 0 {
		return nil, e
	}
	out := make([]T, len(items))
	for i, it := range items {
		if e := decode(&out[i], indexPath(path, i), it); e != nil {
			return nil, e
		}
	}
	return out, nil
}

// hasMember reports whether o has key (a null member counts as absent).
func hasMember[T text](o members[T], key string) bool {
	_, ok := o.get(key)
	return ok
}

// isTrue reports whether o's member key is true. It is for booleans the key pass has already
// checked, read again where the decision waits for the whole object.
func isTrue(o members[string], key string) bool {
	v, ok := o.get(key)
	return ok && trimJSONSpace(v) == "true"
}
