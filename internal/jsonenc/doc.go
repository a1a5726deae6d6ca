// Package jsonenc owns the service's hand-written JSON appenders: the few values that hot paths
// write without encoding/json's reflection or slog's generic encoder. Each appender is held,
// byte for byte, to one reference encoder, which its name says:
//
//   - AppendString writes a string as encoding/json does with SetEscapeHTML(false): the response
//     bodies (internal/protocol) and the generated JSON content (internal/generate).
//   - AppendSlogString and AppendSlogFloat write a string and a float64 as log/slog's JSON
//     handler does: the access log line (observability), which must read as slog's own.
//
// The two string escapings differ only in \b and \f, which encoding/json writes short and slog
// as \u0008 and \u000c; both escape U+2028 and U+2029 and neither escapes <, > or &.
//
// Differential tests and fuzz targets beside each appender (FuzzAppendStringMatchesEncodingJSON,
// FuzzAppendSlogStringMatchesSlog, FuzzAppendSlogFloatMatchesSlog) hold it to its reference.
// BenchmarkAppendString and BenchmarkAppendSlog compare each with its reference on the values it
// is used for, to show the hand-written code pays; BenchmarkChatJSON and BenchmarkChatStream64
// (internal/server) show what that is worth per request.
package jsonenc
