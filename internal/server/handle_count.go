package server

import (
	"net/http"

	"mockgateway/internal/apierr"
	"mockgateway/internal/dialect"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/observability"
)

// handleCountTokens counts a request's prompt, in a dialect that has a counting route
// (dialect.Counter), with the estimator that gives an answer's prompt tokens, so the two agree.
// The model must be one the mock executes, as for an answer.
func handleCountTokens(d Deps, dl dialect.Counter) http.Handler {
	limits := protocol.Limits{MaxChoices: d.Config.MaxChoices}
	return &takesBody{maxBody: d.Config.MaxBodyBytes, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dl.Headers(w.Header())
		buf := takeBody(r)
		aerr := dl.Admit(r)
		var req *protocol.Request
		if aerr == nil {
			req, aerr = dl.DecodeCount(r, buf.Bytes(), limits)
		}
		putBuffer(buf)
		if aerr != nil {
			writeError(w, r, aerr)
			return
		}
		rec := observability.RecordFrom(r.Context())
		if note, ok := rec.Note.(*callNote); ok {
			note.noteShape(req)
		}
		m, ok := d.Catalog.Lookup(req.Model)
		if !ok || !m.Executable() {
			writeError(w, r, apierr.New(apierr.ModelNotFound, "model", "The model does not exist in this mock's catalog or is metadata only; GET /v1/models lists the executable models."))
			return
		}
		rec.Model = m.ID
		buf = getBuffer()
		defer putBuffer(buf)
		writeJSONBytes(w, http.StatusOK, dl.AppendCount(buf.AvailableBuffer(), generate.PromptTokens(req)))
	})}
}
