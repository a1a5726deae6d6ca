package server

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/dialect"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// chatHandler serves the chat path in one dialect (internal/dialect): POST /v1/chat/completions,
// POST /v1/responses, POST /v1/messages, Gemini's generateContent and streamGenerateContent. The dialect decodes the request into the one
// protocol.Request and writes the answer in its own shape; everything between is shared, and
// asks the dialect rather than which one it is. It holds exactly what the path needs, built once
// by newChatHandler; every call of it shares it (chatCall.h).
type chatHandler struct {
	dialect          dialect.Dialect
	catalog          *catalog.Catalog
	limits           protocol.Limits // what the decoder enforces
	tokenCeiling     int             // --max-tokens: every choice of every model stops there
	maxResponseBytes int
	sim              simulator
	fixtures         *fixtures.Store // the file fixtures, and Check's schema cache
	state            state.Store     // runtime fixtures and reply positions
	tracer           trace.Tracer
	metrics          *observability.Metrics
	drain            *Drain
	loads            map[string]*loadGate // the models with a capacity (shared by every dialect)
	streamTimeout    time.Duration
	writeTimeout     time.Duration

	// Telemetry made in advance rather than per request: each model's chat span name, and the
	// finish-reasons attribute of a one-choice answer, per reason.
	spanNames       map[string]string
	oneFinishReason map[string]attribute.KeyValue
}

func newChatHandler(d Deps, dl dialect.Dialect) http.Handler {
	h := &chatHandler{
		dialect:          dl,
		catalog:          d.Catalog,
		limits:           protocol.Limits{MaxChoices: d.Config.MaxChoices, MaxRegexProgram: d.Config.MaxRegexProgram},
		tokenCeiling:     d.Config.MaxTokens,
		maxResponseBytes: d.Config.MaxResponseBytes,
		sim:              simulator{headers: d.Config.AllowSimulationHeaders, catalog: d.Catalog, attempts: d.State, streamTimeout: d.Config.StreamTimeout},
		fixtures:         d.State.Files(),
		state:            d.State,
		tracer:           d.Tracer,
		metrics:          d.Metrics,
		drain:            d.Drain,
		loads:            d.loads,
		streamTimeout:    d.Config.StreamTimeout,
		writeTimeout:     d.Config.WriteTimeout,
	}
	h.spanNames = map[string]string{}
	for _, id := range d.Catalog.IDs() {
		h.spanNames[id] = "chat " + id
	}
	h.oneFinishReason = map[string]attribute.KeyValue{}
	for _, r := range []string{"stop", "length", "tool_calls", "content_filter"} {
		h.oneFinishReason[r] = attribute.StringSlice("gen_ai.response.finish_reasons", []string{r})
	}
	// takesBody: v1Guard reads the body before the request takes a concurrency slot.
	return &takesBody{maxBody: d.Config.MaxBodyBytes, next: h}
}

// ServeHTTP takes a chat request through its steps: decode it, resolve its model, find the
// fixture that scripts it if any, simulate what was asked (a gateway policy, latency, a fault),
// draw from the model's quota if it has one (internal/quota), generate the answer (or take the fixture's), respond — JSON or a stream, in the dialect. A
// step that refuses the request returns an *apierr.Error for the one writeError, which writes
// it in the dialect too.
//
// A stream parks this goroutine for its whole length, with every frame below it on the stack;
// its stack must stay within 8 KB or each open stream holds 16 (TestParkedStreamStack,
// docs/performance.md). So the steps that go deep — decoding, generating — are calls of their
// own that have returned before the stream parks.
func (h *chatHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := observability.RecordFrom(r.Context())
	rec.Chat, rec.Model = true, observability.ModelOther
	h.dialect.Headers(w.Header())
	req, facts, err := h.decode(r, rec)
	if err != nil {
		writeError(w, r, err)
		return
	}
	model, err := h.resolve(req, facts, rec)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The quota comes before the fixtures: a refused call takes no scripted reply of a sequence.
	var taken *quotaTaken // nil: the model has no limits, and nothing is counted
	if h.limited(r, model) {
		if taken, err = h.takeQuota(w, r, model, req, facts.promptTokens); err != nil {
			if err != errClientLeft { // it left while the gateway policy waited
				writeError(w, r, err)
			}
			return
		}
		model = taken.model
	}
	hit, err := h.script(r, req, rec)
	if err != nil {
		h.settleQuota(r.Context(), taken.admission(), rec)
		if err != errClientLeft { // no one to answer
			writeError(w, r, err)
		}
		return
	}
	sim, err := h.sim.decide(r, model, facts.seed, hit, taken.retriesSpent())
	if err != nil {
		h.settleQuota(r.Context(), taken.admission(), rec)
		writeError(w, r, err)
		return
	}
	rec.Attempt = sim.attempt
	if taken != nil {
		taken.hold(sim)
	}

	ctx, span := h.tracer.Start(r.Context(), h.spanNames[model.ID])
	describeChatRequest(span, model, req, hit)
	defer span.End()             // also on a panic: the span still reaches the buffer
	if sim.served.Capacity > 0 { // a model without a capacity waits for nothing
		if ok, err := h.enterLoad(ctx, w, sim, span); !ok {
			if err != nil {
				writeError(w, r, err)
				setErrorType(span, rec)
			}
			h.finish(ctx, sim, rec)
			return
		}
	}
	h.dialect.AnswerHeaders(w.Header())
	reportPlan(ctx, w, span, h.metrics, model.ID, sim)
	if sim.plan.Sleep && !h.wait(ctx, sim.plan.Wait) {
		h.finish(ctx, sim, rec)
		return // the client left
	}
	if f := sim.plan.Fault; f != nil && f.BeforeOutput() {
		recordFault(ctx, span, h.metrics, model.ID, f.Kind)
		if f.Kind == simulation.Timeout && !h.wait(ctx, f.For) {
			h.finish(ctx, sim, rec)
			return // the client gave up first, as clients do
		}
		writeError(w, r, faultError(f))
		setErrorType(span, rec)
		h.finish(ctx, sim, rec)
		return
	}

	c := h.generate(req, sim, facts, span, rec, hit)
	if c.Stream {
		streamChat(ctx, w, c)
	} else {
		h.respond(ctx, w, r, c)
	}
	setChatResponseAttributes(span, c, rec)
	h.finish(ctx, sim, rec) // to what the answer used, once it is written
}

// chatCall is one executed chat call: what the dialect's answer is made of (dialect.Call), the
// answer itself (reply), and what the handler and the stream need beside it: the simulated
// timings and fault, and the span.
type chatCall struct {
	dialect.Call
	reply   dialect.Reply
	Timings *simulation.Timings
	Fault   *simulation.Fault // a mid-stream fault to strike, or nil
	Span    trace.Span
	h       *chatHandler // shared by every call; not copied into each
}

// requestFacts are what reading a request learns beside the request itself.
type requestFacts struct {
	seed         uint64 // the latency jitter's seed: the same request waits the same
	promptTokens int    // counted once, for the context window and the usage
}

// decode decodes the body that v1Guard read (its media type, size and arrival checked:
// readBody) strictly, in the dialect: what it requires beyond the body (Admit), then JSON, then
// fields.
//
//go:noinline
func (h *chatHandler) decode(r *http.Request, rec *observability.Record) (*protocol.Request, requestFacts, error) {
	buf := takeBody(r)
	defer putBuffer(buf)
	if aerr := h.dialect.Admit(r); aerr != nil {
		return nil, requestFacts{}, aerr
	}
	req, aerr := h.dialect.Decode(r, buf.Bytes(), h.limits)
	if aerr != nil {
		return nil, requestFacts{}, aerr
	}
	if note, ok := rec.Note.(*callNote); ok {
		note.noteShape(req)
	}
	return req, requestFacts{seed: fnv64a(buf.Bytes()), promptTokens: generate.PromptTokens(req)}, nil
}

// resolve finds the request's model and checks that it can serve it: executable, with the
// capabilities asked for, a budget within its output limit (in the dialect's words), and a
// context window that holds the prompt with its budget (refused
// as OpenAI refuses it; a fallback model's window cuts its answer in Generate). The record gets
// the model's id whenever it is in the catalog: a bounded label even when the request fails.
//
//go:noinline
func (h *chatHandler) resolve(req *protocol.Request, facts requestFacts, rec *observability.Record) (*catalog.Model, error) {
	model, ok := h.catalog.Lookup(req.Model)
	if !ok {
		// The id is not echoed: it is client text, and the catalog is one GET away.
		return nil, apierr.New(apierr.ModelNotFound, "model", "The model does not exist in this mock's catalog; GET /v1/models lists the executable models.")
	}
	rec.Model = model.ID
	switch {
	case !model.Executable():
		return nil, apierr.New(apierr.ModelNotExecutable, "model", "The model "+model.ID+" is external provider metadata and never executes here; use a mock model from GET /v1/models.")
	case len(req.Tools) > 0 && !model.Capabilities.Tools && !h.dialect.OffersToolsOnly(req):
		return nil, apierr.New(apierr.ToolsNotSupported, "tools", "The model "+model.ID+" does not support tools; mock-tools does.")
	case req.Stream && !model.Capabilities.Streaming:
		return nil, apierr.New(apierr.InvalidValue, "stream", "The model "+model.ID+" does not support streaming.")
	}
	if aerr := h.dialect.Check(model, req, facts.promptTokens, h.tokenCeiling); aerr != nil {
		return nil, aerr
	}
	return model, nil
}

// generate makes the answer of the model that serves the request. A stream's prose is made as it
// is sent (generate.Prepare): an open stream holds each choice's position, not its answer, and
// the first chunk does not wait for the whole answer to be made.
//
//go:noinline
func (h *chatHandler) generate(req *protocol.Request, sim *simulated, facts requestFacts, span trace.Span, rec *observability.Record, hit *fixtures.Hit) *chatCall {
	served := sim.served
	in := generate.Input{
		Model: served.ID, Behavior: served.Behavior, DefaultTokens: served.DefaultTokens, Request: req,
		TokenCeiling: h.tokenCeiling, MaxResponseBytes: h.maxResponseBytes,
		ContextWindow: served.ContextWindow, PromptTokens: facts.promptTokens,
	}
	reasoning := 0 // what a reasoning model spends reasoning per choice; other models none
	if served.Capabilities.Reasoning {
		reasoning = h.dialect.ReasoningTokens(req, hit)
	}
	var res generate.Result
	if req.Stream && deepAnswer(req, hit) {
		// Only here does the closure exist: built unconditionally it, and res, escaped to the heap
		// on every request.
		var deep generate.Result
		onOwnStack(func() { deep = answer(in, hit, reasoning) })
		res = deep
	} else {
		res = answer(in, hit, reasoning)
	}
	rec.Stream = req.Stream
	rec.PromptTokens = res.PromptTokens
	rec.CompletionTokens = res.CompletionTokens // a stream counts what it sent (streamChat)
	rec.ReasoningTokens = res.ReasoningTokens
	rec.FinishReason = res.Choices[0].FinishReason // "" for a lazy choice until streamChat settles it
	c := &chatCall{
		Call: dialect.Call{
			Created: time.Now().Unix(),
			Model:   served,
			// Not the request: a parked stream would keep the whole prompt alive with it.
			Stream:       req.Stream,
			IncludeUsage: req.IncludeUsage,
			Result:       res,
		},
		Timings: simulation.NewTimings(sim.latency, facts.seed),
		Fault:   sim.plan.Fault, // nil, or a fault that strikes mid-stream
		Span:    span,
		h:       h,
	}
	c.reply = h.dialect.Reply(&c.Call, req, hit, facts.seed)
	return c
}

// answer makes the call's answer: a fixture's scripted reply, a stream's lazily made one, or the
// whole answer; a reasoning model's after the reasoning tokens it spends per choice
// (generate.Reason).
func answer(in generate.Input, hit *fixtures.Hit, reasoning int) generate.Result {
	if reasoning > 0 {
		return generate.Reason(in, reasoning, func(in generate.Input) generate.Result { return answer(in, hit, 0) })
	}
	switch {
	case hit != nil && hit.Reply.Error == nil:
		return generate.Script(in, scripted(hit.Reply))
	case in.Request.Stream:
		return generate.Prepare(in)
	default:
		return generate.Generate(in)
	}
}

// fnv64a is FNV-1a, 64 bits (hash/fnv's New64a, without an allocation per request).
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// wait waits d unless the client leaves (false: nothing more can be written) or shutdown ends
// the wait early (true: answer now rather than hold the drain). No wait is longer than a
// stream may last.
func (h *chatHandler) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(min(d, h.streamTimeout))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-h.drain.Aborted():
		return true
	case <-ctx.Done():
		observability.RecordFrom(ctx).Status = 499 // client closed the request
		return false
	}
}
