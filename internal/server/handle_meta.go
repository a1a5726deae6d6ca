package server

import (
	"math"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

type healthBody struct {
	Status        string         `json:"status"`
	Service       string         `json:"service"`
	Version       string         `json:"version"`
	Release       string         `json:"release"`
	Mode          string         `json:"mode"`
	UptimeSeconds float64        `json:"uptime_seconds"`
	Models        healthModels   `json:"models"`
	Boundaries    healthBoundary `json:"boundaries"`
	// State is where the runtime state lives and whether it answers: an unavailable shared
	// store leaves /health at 200, so that replicas stay in the Service and keep serving
	// what needs no shared state.
	State state.Health `json:"state"`
}

type healthModels struct {
	Executable   int `json:"executable"`
	MetadataOnly int `json:"metadata_only"`
}

type healthBoundary struct {
	ProviderCredentialsLoaded bool   `json:"provider_credentials_loaded"`
	ExternalRequests          bool   `json:"external_requests"`
	RetryFallback             string `json:"retry_fallback"`
}

func handleHealth(d Deps) http.Handler {
	exec, meta := d.Catalog.Counts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := healthBody{
			Status: "ok", Service: "mockgateway", Version: d.Version, Release: d.Release, Mode: "mock",
			UptimeSeconds: math.Round(time.Since(d.Started).Seconds()*10) / 10,
			Models:        healthModels{Executable: exec, MetadataOnly: meta},
			Boundaries:    healthBoundary{RetryFallback: "simulated"},
			State:         d.State.Health(),
		}
		status := http.StatusOK
		if d.Drain.Draining() {
			b.Status, status = "draining", http.StatusServiceUnavailable
		}
		encodeJSON(w, status, b)
	})
}

// modelLists are each dialect's model list (dialect.Dialect's Models), made once: /v1/models and
// /v1/models/{model} answer in the shape of the request's dialect.
type modelLists struct {
	lists    map[dialect.Dialect]dialect.Models
	fallback dialect.Models // the default dialect's, for a request that met no route
}

func newModelLists(c *catalog.Catalog, dialects *dialect.Set) *modelLists {
	l := &modelLists{lists: map[dialect.Dialect]dialect.Models{}, fallback: dialects.Default.Models(c)}
	l.lists[dialects.Default] = l.fallback
	for _, d := range dialects.Marked {
		l.lists[d] = d.Models(c)
	}
	return l
}

// of is the list of the request's dialect: on the model routes, its marker's or OpenAI's.
func (l *modelLists) of(r *http.Request) (dialect.Dialect, dialect.Models) {
	d := dialectOf(observability.RecordFrom(r.Context()))
	if m, ok := l.lists[d]; ok {
		return d, m
	}
	return d, l.fallback
}

// handleListModels lists only executable mock models, in the request's dialect.
func handleListModels(lists *modelLists) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, models := lists.of(r)
		d.Headers(w.Header())
		writeJSONBytes(w, http.StatusOK, models.List(r))
	})
}

func handleGetModel(lists *modelLists) http.Handler {
	notFound := apierr.New(apierr.ModelNotFound, "model", "The model does not exist in this mock's catalog or is metadata only; GET /v1/models lists the executable models.")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, models := lists.of(r)
		d.Headers(w.Header())
		body, ok := models.Model(mux.Vars(r)["model"])
		if !ok {
			writeError(w, r, notFound)
			return
		}
		writeJSONBytes(w, http.StatusOK, body)
	})
}

var traceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// handleDebugTraces serves the embedded trace inspector: the most recent spans, or one trace by
// trace_id or by the request id of its server span.
func handleDebugTraces(b *observability.SpanBuffer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f := observability.SpanFilter{TraceID: q.Get("trace_id"), RequestID: q.Get("request_id"), Limit: 100}
		if f.TraceID != "" && !traceIDPattern.MatchString(f.TraceID) {
			writeError(w, r, apierr.New(apierr.InvalidValue, "trace_id", "trace_id must be 32 lowercase hex digits."))
			return
		}
		if f.RequestID != "" && !observability.ValidRequestID(f.RequestID) {
			writeError(w, r, apierr.New(apierr.InvalidValue, "request_id", "request_id must match ^[A-Za-z0-9._:-]{1,128}$."))
			return
		}
		limit, ok := limitParam(w, r, f.Limit, 0)
		if !ok {
			return
		}
		f.Limit = limit
		spans := b.Query(f)
		if spans == nil {
			spans = []observability.SpanRecord{}
		}
		encodeJSON(w, http.StatusOK, struct {
			Count int                        `json:"count"`
			Spans []observability.SpanRecord `json:"spans"`
		}{len(spans), spans})
	})
}

// handleOpenAPI serves the OpenAPI document of what the mock serves, for users to import into
// their HTTP tools.
func handleOpenAPI(doc []byte) http.Handler {
	length := strconv.Itoa(len(doc))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", length)
		_, _ = w.Write(doc)
	})
}
