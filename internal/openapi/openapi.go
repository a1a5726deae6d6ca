// Package openapi owns the OpenAPI 3.1 document of exactly what mockgateway serves: its paths,
// the chat request with the fields the decoder accepts, the JSON answer, the stream chunk, the
// error envelope with its closed code list, and the headers. The document is written by hand
// (openapi.json), embedded, and served at GET /openapi.json; the tests hold it to the OpenAPI
// 3.1 schema, to apierr's codes, and to every golden answer, stream chunk, error and client
// corpus body.
package openapi

import _ "embed"

//go:embed openapi.json
var document []byte

// Document returns the document's bytes; callers must not modify them.
func Document() []byte { return document }
