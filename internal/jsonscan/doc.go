// Package jsonscan owns the service's one way of reading JSON text by hand: the request
// decoder (internal/protocol) and the JSON Schema parser (internal/generate) both read with it,
// where encoding/json's reflection, maps or token API would cost an allocation per value on
// every request. It finds boundaries and never builds values: what a value becomes is its
// caller's business.
//
//   - Valid is encoding/json.Valid's verdict, nesting limit included.
//   - SkipSpace, SkipString and SkipValue find where whitespace, a string literal and a whole
//     value end in text already checked by Valid.
//   - Unquote is the string a literal stands for, as encoding/json unescapes it; a literal
//     without escapes is a substring of its text, not a copy.
//   - AppendCompact is what json.Compact makes of a valid value.
//
// Each is held to encoding/json by a differential test and a fuzz target beside it
// (FuzzValidMatchesEncodingJSON, FuzzUnquoteMatchesEncodingJSON,
// FuzzAppendCompactMatchesEncodingJSON); internal/protocol's FuzzSplitMatchesEncodingJSON and
// internal/generate's FuzzSchemaInstance hold the readers built on them. The functions are
// generic over Text, so that a caller reads its one string copy of a body and the tests read
// raw bytes with the same code. Tools outside the service may use encoding/json.
package jsonscan

// Text is what the scanner reads: a string copy of a body, or raw JSON bytes.
type Text interface{ ~string | ~[]byte }
