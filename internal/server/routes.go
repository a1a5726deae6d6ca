package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"mockgateway/internal/apierr"
	"mockgateway/internal/console"
	"mockgateway/internal/dialect"
	"mockgateway/internal/dialect/anthropic"
	"mockgateway/internal/dialect/chat"
	"mockgateway/internal/dialect/google"
	"mockgateway/internal/dialect/responses"
	"mockgateway/internal/openapi"
	"mockgateway/internal/seal"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// dialects are the chat path's dialects (internal/dialect), built once. Each route of theirs
// names its own (addRoutes); on the routes they share — the model list, an unknown path, the
// mock's own — the marker header a request carries chooses, OpenAI's when it carries none
// (shared). Adding a dialect is a field here, its line in newDialects, and its routes
// (docs/dialects.md).
type dialects struct {
	chat      *chat.Dialect
	responses *responses.Dialect
	anthropic *anthropic.Dialect
	// google is Gemini's generateContent (and countTokens, the model list); googleStream its
	// streamGenerateContent, which answers without alt=sse with a JSON array.
	google       *google.Dialect
	googleStream *google.Dialect
	shared       *dialect.Set
}

func newDialects(sealer *seal.Sealer) *dialects {
	ds := &dialects{chat: chat.New(sealer), responses: responses.New(sealer), anthropic: anthropic.New(sealer),
		google: google.New(sealer, google.Generate), googleStream: google.New(sealer, google.Stream)}
	ds.shared = &dialect.Set{Default: ds.chat, Marked: []dialect.Dialect{ds.anthropic, ds.google}}
	return ds
}

// unsupportedSurfaces are parts of the OpenAI API that the mock intentionally does not offer:
// a client calling them gets a 404 that says so, rather than a bare not_found.
var unsupportedSurfaces = []string{
	"/v1/embeddings", "/v1/images", "/v1/audio", "/v1/completions",
	"/v1/files", "/v1/batches", "/v1/fine_tuning", "/v1/moderations", "/v1/assistants",
	"/v1/threads", "/v1/vector_stores", "/v1/uploads", "/v1/realtime", "/v1/evals",
	"/v1/containers", "/v1/conversations", "/v1/videos", "/v1/organization", "/v1/skills",
}

// addRoutes is the one list of every endpoint.
func addRoutes(r *mux.Router, d Deps, ds *dialects, metricsOn bool) {
	handle := func(path string, h http.Handler) *mux.Route { return r.Handle(path, newRouted(path, ds.shared, h)) }
	// in: a route of one dialect's, which it answers in whatever the request carries.
	in := func(dl dialect.Dialect, path string, h http.Handler) *mux.Route {
		rt := newRouted(path, ds.shared, h)
		rt.dialect = dl
		return r.Handle(path, rt)
	}

	// /v1: the local key (401 before any other error), then the drain and concurrency guards.
	// The router tries routes in order, each with its own regexp, and no two paths overlap, so
	// the busiest route comes first.
	limit := newConcurrencyLimit(d.Config.MaxConcurrent) // one budget shared by every /v1 route
	var calls state.Store                                // nil: no journal
	if d.State.Journaling() {
		calls = d.State
	}
	v1 := func(h http.Handler) http.Handler {
		return &v1Guard{key: d.Config.APIKey, drain: d.Drain, limit: limit, journal: calls, next: h}
	}
	// Every GET route answers HEAD too, as net/http's own handlers do: the same status and
	// headers, no body (net/http drops what a handler writes to a HEAD request).
	get := []string{http.MethodGet, http.MethodHead}
	// The chat path, one route per dialect (internal/dialect).
	in(ds.chat, "/v1/chat/completions", v1(newChatHandler(d, ds.chat))).Methods(http.MethodPost)
	in(ds.responses, "/v1/responses", v1(newChatHandler(d, ds.responses))).Methods(http.MethodPost)
	in(ds.anthropic, "/v1/messages", v1(newChatHandler(d, ds.anthropic))).Methods(http.MethodPost)
	in(ds.anthropic, "/v1/messages/count_tokens", v1(handleCountTokens(d, ds.anthropic))).Methods(http.MethodPost)
	// Google's Gemini API, under /v1beta (Gemini CLI's SDK) and /v1 (the current SDKs'
	// default): a method is the model's path segment and :method. The model's pattern stops at
	// the colon (mux's default would take it), and the template names it plainly.
	gemini := func(dl dialect.Dialect, template string, h http.Handler) *mux.Route {
		rt := newRouted(template, ds.shared, h)
		rt.dialect = dl
		return r.Handle(strings.Replace(template, "{model}", "{model:[^/:]+}", 1), rt)
	}
	for _, v := range []string{"/v1beta", "/v1"} {
		gemini(ds.google, v+"/models/{model}:generateContent", v1(newChatHandler(d, ds.google))).Methods(http.MethodPost)
		gemini(ds.googleStream, v+"/models/{model}:streamGenerateContent", v1(newChatHandler(d, ds.googleStream))).Methods(http.MethodPost)
		gemini(ds.google, v+"/models/{model}:countTokens", v1(handleCountTokens(d, ds.google))).Methods(http.MethodPost)
		// Another method (embedContent, batchGenerateContent, …): 404 in Google's words, whatever
		// headers the request carries.
		gemini(ds.google, v+"/models/{model}:{method}", handleGeminiMethodNotFound()).Methods(http.MethodPost)
	}
	// Stored responses (retrieve, delete, cancel, input_items) and the token counting and
	// compaction endpoints: the mock keeps no responses, on purpose.
	r.PathPrefix("/v1/responses/").Handler(newRouted("/v1/responses/{rest}", ds.shared, v1(handleStoredResponses())))
	models := newModelLists(d.Catalog, ds.shared)
	handle("/v1/models", v1(handleListModels(models))).Methods(get...)
	// A model's id stops at a colon here too: GET on a Gemini method is its 405, not a model.
	r.Handle("/v1/models/{model:[^/:]+}", newRouted("/v1/models/{model}", ds.shared, v1(handleGetModel(models)))).Methods(get...)
	gemini(ds.google, "/v1beta/models", v1(handleListModels(models))).Methods(get...)
	gemini(ds.google, "/v1beta/models/{model}", v1(handleGetModel(models))).Methods(get...)

	// /_mock: the mock's own control surface (docs/fixtures.md), guarded by the local key.
	mock := func(h http.Handler) http.Handler { return &mockGuard{key: d.Config.APIKey, next: h} }
	handle("/_mock/fixtures", mock(handleAddFixtures(d.State, d.Config.MaxBodyBytes))).Methods(http.MethodPost)
	handle("/_mock/fixtures", mock(handleListFixtures(d.State))).Methods(get...)
	handle("/_mock/fixtures", mock(handleDeleteFixtures(d.State))).Methods(http.MethodDelete)
	handle("/_mock/scopes/{scope}", mock(handleDeleteScope(d.State))).Methods(http.MethodDelete)
	handle("/_mock/journal", mock(handleJournal(d.State, d.State.Journaling()))).Methods(get...)
	handle("/_mock/quotas", mock(handleQuotas(d.State))).Methods(get...)

	// The console (docs/console.md): a page and its assets, reading the endpoints below.
	handle("/", console.Handler()).Methods(get...)
	r.PathPrefix("/console/").Handler(newRouted("/console/", ds.shared, console.Handler())).Methods(get...)

	handle("/health", handleHealth(d)).Methods(get...)
	handle("/openapi.json", handleOpenAPI(openapi.Document())).Methods(get...)
	if metricsOn {
		handle("/metrics", d.Metrics.Handler()).Methods(get...)
	}
	if d.Spans != nil {
		// The trace inspector shows every call's telemetry: with a local key, it takes the key
		// as /v1 and /_mock do (/health and /metrics stay open for probes and scrapers).
		handle("/debug/traces", &keyGuard{key: d.Config.APIKey, next: handleDebugTraces(d.Spans)}).Methods(get...)
	}

	for _, s := range unsupportedSurfaces {
		unsupported(r, ds.shared, nil, s)
	}
	unsupported(r, ds.shared, ds.anthropic, "/v1/messages/batches") // in Anthropic's words

	r.NotFoundHandler = &routed{shared: ds.shared, next: handleNotFound()}
	r.MethodNotAllowedHandler = &routed{shared: ds.shared, next: handleMethodNotAllowed(r, d.Config.APIKey)}
}

// unsupported routes a surface and everything under it to its refusal, in dl (nil: the
// request's headers choose).
func unsupported(r *mux.Router, shared *dialect.Set, dl dialect.Dialect, surface string) {
	h := handleUnsupportedSurface(surface)
	exact := newRouted(surface, shared, h)
	exact.dialect = dl
	r.Handle(surface, exact)
	r.PathPrefix(surface + "/").Handler(&routed{dialect: dl, shared: shared, next: h}) // h names its route itself
}

// dispatch is how a request reaches the router: gorilla/mux is the one router — addRoutes adds
// every route to it, and its matching decides where every request goes — and dispatch is its
// ServeHTTP without the cost that method adds to every request. The router's ServeHTTP copies
// the request twice to put the matched route and its variables in the context; dispatch hands
// the variables only to a route that has some (mux.SetURLVars, read by mux.Vars), and nothing
// here asks for the current route (mux.CurrentRoute). Those copies and the router's walk through
// each route's regexp are a measurable part of a JSON chat request's cost (BenchmarkDispatch;
// the figures are in docs/performance.md).
//
// So a request for a route without variables (every busy one) is found by its path and method
// in exact, a table learned from the router itself (newDispatch); any other goes to the
// router's Match, as its ServeHTTP would. The router has a not-found and a method-not-allowed
// handler, so Match always names a handler, and it cleans no paths (SkipClean).
// TestDispatchServesAsTheRouter holds dispatch to the router's ServeHTTP, TestDispatchExact the
// table.
type dispatch struct {
	router *mux.Router
	shared *dialect.Set            // the dialects a request refused before any route can speak (claim)
	exact  map[string][]exactRoute // path → the methods the router answers there, and how
}

type exactRoute struct {
	method  string
	handler http.Handler
}

// newDispatch learns exact from the router's own answers: for each route whose path has no
// variables, a request with that path and each of its methods is matched by the router, and
// only where the router names that route is the pair kept. So a route that an earlier one
// shadows is not kept, and anything else — another method, a path with variables or under a
// prefix, no route at all — goes to the router. This holds because the routes match on method
// and path alone (addRoutes: no host, header or query matchers).
func newDispatch(router *mux.Router, shared *dialect.Set) *dispatch {
	d := &dispatch{router: router, shared: shared, exact: map[string][]exactRoute{}}
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil || strings.ContainsAny(path, "{}") {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil // no method matcher: left to the router
		}
		for _, m := range methods {
			probe := &http.Request{Method: m, URL: &url.URL{Path: path}, Header: http.Header{}}
			var match mux.RouteMatch
			if router.Match(probe, &match) && match.Route == route && match.MatchErr == nil && len(match.Vars) == 0 {
				d.exact[path] = append(d.exact[path], exactRoute{m, match.Handler})
			}
		}
		return nil
	})
	return d
}

func (d *dispatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, e := range d.exact[r.URL.Path] {
		if e.method == r.Method {
			e.handler.ServeHTTP(w, r)
			return
		}
	}
	var match mux.RouteMatch
	if !d.router.Match(r, &match) || match.Handler == nil {
		d.router.ServeHTTP(w, r) // no handler named: the router's own answer
		return
	}
	if len(match.Vars) > 0 {
		r = mux.SetURLVars(r, match.Vars)
	}
	match.Handler.ServeHTTP(w, r)
}

// claim gives r's Record what the route that would serve r with method gives it (its template
// and dialect), for a request refused before it gets there; a request no route would serve gets
// the dialect its headers choose. Only refusals and preflights ask, so the router's own
// matching is good enough.
func (d *dispatch) claim(r *http.Request, method string) {
	probe := &http.Request{Method: method, URL: r.URL, Host: r.Host, Header: http.Header{}}
	rec := observability.RecordFrom(r.Context())
	var match mux.RouteMatch
	if d.router.Match(probe, &match) {
		if rt, ok := match.Handler.(*routed); ok {
			rt.claim(rec, r)
			return
		}
	}
	rec.Dialect = d.shared.Choose(r.Header)
}

// routed gives the Record the matched route's template, the only form of the path that reaches
// telemetry, the server span's name, and the request's dialect: the route's own, or on a route
// the dialects share, the one the request's headers choose. The names are made per route when
// the routes are added, rather than per request.
type routed struct {
	template string            // "" for the router's own answers (not found, 405), which name none
	names    map[string]string // method → "METHOD template", the server span's name
	dialect  dialect.Dialect   // the route's dialect; nil on a shared route
	shared   *dialect.Set
	next     http.Handler
}

func newRouted(template string, shared *dialect.Set, next http.Handler) *routed {
	h := &routed{template: template, names: map[string]string{}, shared: shared, next: next}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		h.names[m] = m + " " + template
	}
	return h
}

func (h *routed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := observability.RecordFrom(r.Context())
	h.claim(rec, r)
	rec.SpanName = h.names[rec.Method] // "" for another method: the chain makes it
	h.next.ServeHTTP(w, r)
}

// claim gives rec the route's template and r's dialect on this route.
func (h *routed) claim(rec *observability.Record, r *http.Request) {
	if h.template != "" {
		rec.SetRoute(h.template)
	}
	if h.dialect != nil {
		rec.Dialect = h.dialect
	} else {
		rec.Dialect = h.shared.Choose(r.Header)
	}
}

func handleNotFound() http.Handler {
	err := apierr.New(apierr.NotFound, "", "No such route. GET /openapi.json lists the routes the mock serves: OpenAI's, Anthropic's and Google's APIs, GET /health and the /_mock control API (docs/fixtures.md).")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, err)
	})
}

func handleGeminiMethodNotFound() http.Handler {
	err := apierr.New(apierr.NotFound, "", "The mock serves the Gemini methods generateContent, streamGenerateContent and countTokens, and GET /v1beta/models.")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, err)
	})
}

func handleStoredResponses() http.Handler {
	err := apierr.New(apierr.NotFound, "", "The mock keeps no responses: it is stateless so that every replica answers alike, and so "+
		"it cannot retrieve, delete, cancel, list the input of, count or compact one. Send the whole input to POST /v1/responses instead.")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, err)
	})
}

func handleUnsupportedSurface(surface string) http.Handler {
	err := apierr.New(apierr.UnsupportedSurface, "", surface+" is intentionally unsupported: this mock gateway offers the model lists, chat completions, the Responses API, Anthropic's Messages and Google's generateContent (GET /openapi.json lists them).")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		observability.RecordFrom(r.Context()).SetRoute(surface)
		writeError(w, r, err)
	})
}

// handleMethodNotAllowed answers 405 with the Allow header, found by asking the router which
// methods would have matched this path.
func handleMethodNotAllowed(router *mux.Router, apiKey string) http.Handler {
	candidates := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		rec := observability.RecordFrom(r.Context())
		for _, m := range candidates {
			probe := r.Clone(r.Context())
			probe.Method = m
			var match mux.RouteMatch
			if router.Match(probe, &match) && match.MatchErr == nil {
				allow = append(allow, m)
				if rt, ok := match.Handler.(*routed); ok {
					rt.claim(rec, r) // the route's name and dialect, as its own answers give them
				}
			}
		}
		if apiKey != "" && (strings.HasPrefix(rec.Route, "/v1/") || strings.HasPrefix(rec.Route, "/v1beta/")) {
			if err := checkKey(apiKey, r); err != nil {
				writeError(w, r, err)
				return
			}
		}
		allowed := ""
		for i, m := range allow {
			if i > 0 {
				allowed += ", "
			}
			allowed += m
		}
		w.Header().Set("Allow", allowed)
		writeError(w, r, apierr.New(apierr.MethodNotAllowed, "", "This route does not accept this method; the Allow header lists the ones it does."))
	})
}
