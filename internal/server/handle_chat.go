package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"mime"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/seal"
	"mockgateway/internal/simulation"
	"mockgateway/internal/state"
	"mockgateway/observability"
)

// chatHandler serves POST /v1/chat/completions, and POST /v1/responses: the Responses API is a
// second dialect of the same path (docs/protocol.md), whose request decodes into a chat request
// and whose answer is written in its own shape; everything between is shared. It holds exactly
// what the path needs, built once by newChatHandler; every call of it shares it (chatCall.h).
type chatHandler struct {
	dialect          dialect
	catalog          *catalog.Catalog
	limits           protocol.Limits // what the decoder enforces
	maxBody          int64
	tokenCeiling     int // --max-tokens: every choice of every model stops there
	maxResponseBytes int
	sim              simulator
	fixtures         *fixtures.Store // the file fixtures, and Check's schema cache
	state            state.Store     // runtime fixtures and reply positions
	sealer           *seal.Sealer    // reasoning items' encrypted content (reasoning.go)
	tracer           trace.Tracer
	metrics          *observability.Metrics
	drain            *Drain
	streamTimeout    time.Duration
	writeTimeout     time.Duration

	// Telemetry made in advance rather than per request: each model's chat span name, and the
	// finish-reasons attribute of a one-choice answer, per reason.
	spanNames       map[string]string
	oneFinishReason map[string]attribute.KeyValue
}

// dialect is the protocol a chat handler speaks.
type dialect uint8

const (
	chatCompletions   dialect = iota // POST /v1/chat/completions
	responsesAPI                     // POST /v1/responses
	anthropicMessages                // POST /v1/messages (messages.go)
)

func newChatHandler(d Deps, dl dialect) http.Handler {
	h := &chatHandler{
		dialect:          dl,
		catalog:          d.Catalog,
		limits:           protocol.Limits{MaxChoices: d.Config.MaxChoices, MaxRegexProgram: d.Config.MaxRegexProgram},
		maxBody:          d.Config.MaxBodyBytes,
		tokenCeiling:     d.Config.MaxTokens,
		maxResponseBytes: d.Config.MaxResponseBytes,
		sim:              simulator{headers: d.Config.AllowSimulationHeaders, catalog: d.Catalog, attempts: d.State},
		fixtures:         d.Fixtures,
		state:            d.State,
		sealer:           d.Sealer,
		tracer:           d.Tracer,
		metrics:          d.Metrics,
		drain:            d.Drain,
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
// generate the answer (or take the fixture's), respond. A step that
// refuses the request returns an *apierr.Error for the one writeError.
//
// A stream parks this goroutine for its whole length, with every frame below it on the stack;
// its stack must stay within 8 KB or each open stream holds 16 (TestParkedStreamStack,
// docs/performance.md). So the steps that go deep — decoding, generating — are calls of their
// own that have returned before the stream parks.
func (h *chatHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := observability.RecordFrom(r.Context())
	rec.Chat, rec.Model = true, observability.ModelOther
	if h.dialect == anthropicMessages {
		setRequestIDHeader(w)
	}
	req, facts, err := h.decode(w, r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	model, err := h.resolve(req, facts, rec)
	if err != nil {
		writeError(w, r, err)
		return
	}
	hit, err := h.script(r, req, rec)
	if err != nil {
		if err != errClientLeft { // no one to answer
			writeError(w, r, err)
		}
		return
	}
	sim, err := h.sim.decide(r, model, facts.seed, hit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	rec.Attempt = sim.attempt

	ctx, span := h.tracer.Start(r.Context(), h.spanNames[model.ID])
	describeChatRequest(span, model, req, hit)
	defer span.End() // also on a panic: the span still reaches the buffer
	if h.dialect != anthropicMessages {
		w.Header()["Openai-Version"] = openAIVersion
	}
	reportPlan(ctx, w, span, h.metrics, model.ID, sim)
	if sim.plan.Sleep && !h.wait(ctx, sim.plan.Wait) {
		return // the client left
	}
	if f := sim.plan.Fault; f != nil && f.BeforeOutput() {
		recordFault(ctx, span, h.metrics, model.ID, f.Kind)
		if f.Kind == simulation.Timeout && !h.wait(ctx, f.For) {
			return // the client gave up first, as clients do
		}
		writeError(w, r, faultError(f))
		setErrorType(span, rec)
		return
	}

	c := h.generate(req, sim, facts, span, rec, hit)
	if c.Stream {
		streamChat(ctx, w, c)
	} else {
		h.respond(ctx, w, r, c)
	}
	setChatResponseAttributes(span, c, rec)
}

// chatCall is one executed chat completion: what the generator made of the request, the two
// request flags the answer needs, and the response identity shared by every chunk of a stream.
type chatCall struct {
	ID           string
	Created      int64
	Model        *catalog.Model // the model that answers: the requested one or a fallback
	Stream       bool
	IncludeUsage bool
	Result       generate.Result // Generate's for JSON; Prepare's for a stream: lazy prose, settled by streamChat
	Timings      *simulation.Timings
	Fault        *simulation.Fault // a mid-stream fault to strike, or nil
	Span         trace.Span
	// Echo is what a Responses API answer repeats of its request; nil for a chat completion.
	Echo *protocol.ResponseEcho
	// Reasoning is a Responses answer's reasoning item, first in its output; nil when the model
	// does not reason (reasoning.go).
	Reasoning *protocol.OutputItem
	// Thinking is a Messages answer's thinking block, first in its content; nil when the model
	// does not think (thinking.go).
	Thinking *protocol.ContentBlock
	h        *chatHandler // shared by every call; not copied into each
}

// requestFacts are what reading a request learns beside the request itself.
type requestFacts struct {
	seed         uint64 // the latency jitter's seed: the same request waits the same
	promptTokens int    // counted once, for the context window and the usage
	echo         *protocol.ResponseEcho
}

// decode reads the body and decodes it strictly, in the contract's order: media type, size and
// arrival (readBody), then JSON and fields.
//
//go:noinline
func (h *chatHandler) decode(w http.ResponseWriter, r *http.Request) (*protocol.ChatRequest, requestFacts, error) {
	if err := readBody(w, r, h.maxBody); err != nil {
		return nil, requestFacts{}, err
	}
	buf := takeBody(r)
	defer putBuffer(buf)
	var req *protocol.ChatRequest
	var echo *protocol.ResponseEcho
	var aerr *apierr.Error
	switch h.dialect {
	case responsesAPI:
		req, echo, aerr = protocol.DecodeResponsesRequest(buf.Bytes(), h.limits)
	case anthropicMessages:
		if aerr = checkAnthropicVersion(r); aerr == nil {
			req, aerr = protocol.DecodeMessagesRequest(buf.Bytes(), h.limits)
		}
	default:
		req, aerr = protocol.DecodeChatRequest(buf.Bytes(), h.limits)
	}
	if aerr != nil {
		return nil, requestFacts{}, aerr
	}
	if note, ok := observability.RecordFrom(r.Context()).Note.(*callNote); ok {
		note.noteShape(req)
	}
	return req, requestFacts{seed: fnv64a(buf.Bytes()), promptTokens: generate.PromptTokens(req), echo: echo}, nil
}

// resolve finds the request's model and checks that it can serve it: executable, with the
// capabilities asked for, a budget within its output limit (budget.go), and a context window
// that holds the prompt with its budget (refused
// as OpenAI refuses it; a fallback model's window cuts its answer in Generate). The record gets
// the model's id whenever it is in the catalog: a bounded label even when the request fails.
//
//go:noinline
func (h *chatHandler) resolve(req *protocol.ChatRequest, facts requestFacts, rec *observability.Record) (*catalog.Model, error) {
	model, ok := h.catalog.Lookup(req.Model)
	if !ok {
		// The id is not echoed: it is client text, and the catalog is one GET away.
		return nil, apierr.New(apierr.ModelNotFound, "model", "The model does not exist in this mock's catalog; GET /v1/models lists the executable models.")
	}
	rec.Model = model.ID
	switch {
	case !model.Executable():
		return nil, apierr.New(apierr.ModelNotExecutable, "model", "The model "+model.ID+" is external provider metadata and never executes here; use a mock model from GET /v1/models.")
	case len(req.Tools) > 0 && !model.Capabilities.Tools && !offeredOnly(req):
		return nil, apierr.New(apierr.ToolsNotSupported, "tools", "The model "+model.ID+" does not support tools; mock-tools does.")
	case req.Stream && !model.Capabilities.Streaming:
		return nil, apierr.New(apierr.InvalidValue, "stream", "The model "+model.ID+" does not support streaming.")
	}
	if aerr := h.checkBudget(model, req); aerr != nil {
		return nil, aerr
	}
	if aerr := generate.CheckContext(facts.promptTokens, h.contextBudget(req), model.ContextWindow); aerr != nil {
		return nil, aerr
	}
	if aerr := h.checkReasoning(model, req); aerr != nil {
		return nil, aerr
	}
	return model, nil
}

// generate makes the answer of the model that serves the request. A stream's prose is made as it
// is sent (generate.Prepare): an open stream holds each choice's position, not its answer, and
// the first chunk does not wait for the whole answer to be made.
//
//go:noinline
func (h *chatHandler) generate(req *protocol.ChatRequest, sim *simulated, facts requestFacts, span trace.Span, rec *observability.Record, hit *fixtures.Hit) *chatCall {
	served := sim.served
	in := generate.Input{
		Model: served.ID, Behavior: served.Behavior, DefaultTokens: served.DefaultTokens, Request: req,
		TokenCeiling: h.tokenCeiling, MaxResponseBytes: h.maxResponseBytes,
		ContextWindow: served.ContextWindow, PromptTokens: facts.promptTokens,
	}
	reasoning := reasoningTokens(served, req, hit)
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
	var id string
	var reasoningItem *protocol.OutputItem
	var thinking *protocol.ContentBlock
	switch {
	case facts.echo != nil:
		id = responseID(facts.seed, served.ID)
		reasoningItem = h.reasoningItem(id, facts.seed, served, req, &res, hit)
	case h.dialect == anthropicMessages:
		id = messageID(facts.seed, served.ID)
		thinking = h.thinkingBlock(facts.seed, served, req, &res, hit)
	default:
		id = newCompletionID()
	}
	return &chatCall{
		ID:      id,
		Created: time.Now().Unix(),
		Model:   served,
		// Not the request: a parked stream would keep the whole prompt alive with it.
		Stream:       req.Stream,
		IncludeUsage: req.IncludeUsage,
		Result:       res,
		Timings:      simulation.NewTimings(sim.latency, facts.seed),
		Fault:        sim.plan.Fault, // nil, or a fault that strikes mid-stream
		Span:         span,
		Echo:         facts.echo,
		Reasoning:    reasoningItem,
		Thinking:     thinking,
		h:            h,
	}
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

// openAIVersion is the Openai-Version header OpenAI's answers carry, one slice for every answer
// (as answerContentType).
var openAIVersion = []string{"2020-10-01"}

// jsonContentType accepts application/json and application/*+json with any parameters. A
// missing Content-Type is not JSON: a browser sends a body without one cross-origin, with no
// preflight (a no-cors fetch of a Blob), so reading it as JSON let any web page post to the
// mock (CONTRACT.md, November 2026).
func jsonContentType(ct string) bool {
	if ct == "application/json" { // what clients send: no parameters to parse
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
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

// fnv64aString goes on hashing s into h, an FNV-1a state.
func fnv64aString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func newCompletionID() string {
	const prefix = "chatcmpl-"
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	var out [len(prefix) + 2*len(b)]byte
	copy(out[:], prefix)
	hex.Encode(out[len(prefix):], b[:])
	return string(out[:])
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
