package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"mockgateway/internal/apierr"
	"mockgateway/internal/jsonscan"
)

// ---- JSON value helpers. Each returns an invalid_value error naming path on a wrong type. ----

// jsonKind is the first byte of a JSON value: '{', '[', '"', 't', 'f', 'n', or a number's first
// character.
func jsonKind[T text](v T) byte {
	if i := jsonscan.SkipSpace(v, 0); i < len(v) {
		return v[i]
	}
	return 0
}

func isNumberKind(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

func isJSONNull[T text](v T) bool { return string(trimJSONSpace(v)) == "null" }

// trimJSONSpace cuts JSON whitespace from both ends of v. The splitters cut values without it;
// a value a test hands in may have some.
func trimJSONSpace[T text](v T) T {
	i := jsonscan.SkipSpace(v, 0)
	j := len(v)
	for j > i {
		switch v[j-1] {
		case ' ', '\t', '\r', '\n':
			j--
			continue
		}
		break
	}
	return v[i:j]
}

// asObject splits the object v into its members, appended to buf: a caller passes stackMembers
// of its own, so that an object of a few members costs no allocation.
func asObject(buf members[string], path, v string) (members[string], *apierr.Error) {
	o, ok := appendMembers(buf, v, v)
	if !ok {
		return nil, errType(path, "an object")
	}
	return o, nil
}

// isObject is asObject for a value the mock only checks the type of.
func isObject(path, v string) *apierr.Error {
	if jsonKind(v) != '{' { // v is valid JSON: an object if it opens as one
		return errType(path, "an object")
	}
	return nil
}

// asArray splits the array v into its elements, appended to buf (a caller's stackElements).
func asArray(buf []string, path, v string) ([]string, *apierr.Error) {
	a, ok := appendElements(buf, v)
	if !ok {
		return nil, errType(path, "an array")
	}
	return a, nil
}

// isArray is asArray for a value the mock only checks the type of.
func isArray(path, v string) *apierr.Error {
	if jsonKind(v) != '[' { // v is valid JSON: an array if it opens as one
		return errType(path, "an array")
	}
	return nil
}

func asString(path, v string) (string, *apierr.Error) {
	s, ok := jsonscan.Unquote(trimJSONSpace(v))
	if !ok {
		return "", errType(path, "a string")
	}
	return s, nil
}

func asBool(path, v string) (bool, *apierr.Error) {
	switch trimJSONSpace(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errType(path, "a boolean")
}

func asEnum(path, v string, allowed ...string) (string, *apierr.Error) {
	// A literal without escapes is compared in place, and the allowed value returned.
	if q := trimJSONSpace(v); len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' {
		for _, a := range allowed {
			if q[1:len(q)-1] == a {
				return a, nil
			}
		}
	}
	s, e := asString(path, v)
	if e != nil {
		return "", e
	}
	if !slices.Contains(allowed, s) {
		return "", errValue(path, "must be one of "+strings.Join(allowed, ", "))
	}
	return s, nil
}

// asName is a string matching the protocol's name rule.
func asName(path, v string) (string, *apierr.Error) {
	s, e := asString(path, v)
	if e != nil {
		return "", e
	}
	if !validName(s) {
		return "", errValue(path, "must be 1 to 64 characters of a-z, A-Z, 0-9, underscores and dashes")
	}
	return s, nil
}

// validName is the protocol's rule for function and json_schema names: ^[a-zA-Z0-9_-]{1,64}$.
func validName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// asCompactObject is a JSON object, kept compacted.
func asCompactObject(path, v string) (json.RawMessage, *apierr.Error) {
	if jsonKind(v) != '{' {
		return nil, errType(path, "an object")
	}
	// v is valid JSON (the body was checked whole), so compacting cannot fail; a compact v costs
	// the copy it needs anyway and one scan.
	return json.RawMessage(jsonscan.AppendCompact(make([]byte, 0, len(v)), v)), nil
}

func asRangedNumber(path, v string, lo, hi float64) (float64, *apierr.Error) {
	raw := trimJSONSpace(v)
	if len(raw) == 0 || !isNumberKind(raw[0]) {
		return 0, errType(path, "a number")
	}
	// A value too large for a float64 parses as ±Inf (with ErrRange) and fails the range test.
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, errType(path, "a number")
	}
	if f < lo || f > hi {
		return 0, errValue(path, fmt.Sprintf("must be between %s and %s", fmtNum(lo), fmtNum(hi)))
	}
	return f, nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// asInt64 is an integral JSON number (2 and 2.0 and 2e0 alike) that fits in an int64.
func asInt64(path, v string) (int64, *apierr.Error) {
	raw := trimJSONSpace(v)
	if len(raw) == 0 || !isNumberKind(raw[0]) {
		return 0, errType(path, "an integer")
	}
	n, st := parseInteger(raw)
	switch st {
	case intOK:
		return n, nil
	case intTooLarge, intTooSmall:
		return 0, errValue(path, "must fit in a signed 64-bit integer")
	default:
		return 0, errValue(path, "must be an integer")
	}
}

// asBoundedInt is an integral JSON number in [lo, hi]; the message names the bound.
func asBoundedInt(path, v string, lo, hi int64) (int64, *apierr.Error) {
	raw := trimJSONSpace(v)
	if len(raw) == 0 || !isNumberKind(raw[0]) {
		return 0, errType(path, "an integer")
	}
	n, st := parseInteger(raw)
	switch {
	case st == intNotIntegral:
		return 0, errValue(path, "must be an integer")
	case st == intTooSmall || (st == intOK && n < lo):
		return 0, errValue(path, fmt.Sprintf("%s must be at least %d", path, lo))
	case st == intTooLarge || (st == intOK && n > hi):
		return 0, errValue(path, fmt.Sprintf("%s must be at most %d", path, hi))
	}
	return n, nil
}

type intStatus int

const (
	intOK intStatus = iota
	intNotIntegral
	intTooLarge
	intTooSmall
)

// parseInteger reads a syntactically valid JSON number exactly (no float rounding): it is an
// integer when its decimal value has no fractional part, whatever its notation.
func parseInteger(s string) (int64, intStatus) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, intOK
	}
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	tooBig := intTooLarge
	if neg {
		tooBig = intTooSmall
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	// value = digits × 10^shift
	const expClamp = 1 << 30
	shift := 0
	if exp != "" {
		e, err := strconv.Atoi(exp)
		switch {
		case err != nil && strings.HasPrefix(exp, "-"), e < -expClamp:
			shift = -expClamp
		case err != nil, e > expClamp:
			shift = expClamp
		default:
			shift = e
		}
	}
	digits := intPart + frac
	shift -= len(frac)
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		shift++
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, intOK
	}
	if shift < 0 {
		return 0, intNotIntegral
	}
	if len(digits)+shift > 19 {
		return 0, tooBig
	}
	lit := digits + strings.Repeat("0", shift)
	if neg {
		lit = "-" + lit
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return 0, tooBig
	}
	return n, intOK
}

// ---- errors ----

func errInvalidJSON() *apierr.Error {
	return apierr.New(apierr.InvalidJSON, "",
		"We could not parse the JSON body of your request. The body must be a single JSON object.")
}

func errUnknown(path string) *apierr.Error {
	return apierr.New(apierr.UnknownParameter, path, fmt.Sprintf("Unknown parameter: '%s'.", path))
}

func errUnsupported(path, why string) *apierr.Error {
	return apierr.New(apierr.UnsupportedParameter, path,
		fmt.Sprintf("Unsupported parameter: '%s' is part of the protocol but not supported by this mock gateway (%s).", path, why))
}

func errMissing(path string) *apierr.Error {
	return apierr.New(apierr.MissingRequiredParameter, path,
		fmt.Sprintf("Missing required parameter: '%s'.", path))
}

func errType(path, want string) *apierr.Error {
	return apierr.New(apierr.InvalidValue, path,
		fmt.Sprintf("Invalid type for '%s': expected %s.", path, want))
}

func errValue(path, rule string) *apierr.Error {
	return apierr.New(apierr.InvalidValue, path, fmt.Sprintf("Invalid value for '%s': %s.", path, rule))
}
