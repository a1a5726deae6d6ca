// Package openapi owns the OpenAPI 3.1 document of exactly what mockgateway serves: its paths,
// the chat request with the fields the strict decoder accepts, the JSON answer, the stream
// chunk, the usage, the error envelope with its closed code list (and which codes each status
// carries), the headers, and the optional local key. The document is written by hand
// (openapi.json), embedded, and served at GET /openapi.json.
//
// The tests keep it honest: it validates against the official OpenAPI 3.1 schemas (vendored in
// testdata); its codes, statuses and types are apierr's; its request fields, enums and ranges
// are the ones internal/protocol's decoder switches on; and its request schema gives the
// decoder's verdict on the client corpus, the decoder's fuzz seeds and thousands of mutations of
// them. internal/server's tests hold every response the server writes to it.
package openapi

import _ "embed"

//go:embed openapi.json
var document []byte

// Document returns the document's bytes; callers must not modify them.
func Document() []byte { return document }
