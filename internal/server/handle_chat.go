package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/apierr"
	"mockgateway/internal/catalog"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// handleChat serves POST /v1/chat/completions: decode strictly, resolve the model, generate
// deterministically, then answer as one JSON body or as an SSE stream (stream.go).
//
// A stream parks this goroutine for its whole length with every frame below it on the stack, and
// the stack must stay within 8 KB at its deepest or each open stream holds 16 KB. So the frames
// here are kept small, and the deep work runs in calls of its own: decoding in readChatRequest,
// the rest up to the answer in startChat, whose locals are gone by the time the stream parks.
func handleChat(d Deps) http.Handler {
	limits := protocol.Limits{MaxTokensCeiling: d.Config.MaxTokens, MaxChoices: d.Config.MaxChoices}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := observability.RecordFrom(r.Context())
		rec.Chat = true
		rec.Model = observability.ModelOther
		req, model, facts, err := readChatRequest(w, r, d.Catalog, limits, d.Config.MaxBodyBytes)
		if model != nil {
			rec.Model = model.ID // a catalog id: a bounded label even when the request fails
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		ctx, c := startChat(w, r, &d, req, model, facts)
		if c == nil {
			return // answered already: an error, a fault, or a client that left
		}
		defer c.Span.End()
		if c.Stream {
			streamChat(ctx, w, c)
		} else {
			respondChat(ctx, w, r, c)
		}
		setChatResponseAttributes(c.Span, c, rec)
	})
	// takesBody: v1Guard reads the body before the request takes a concurrency slot.
	return &takesBody{maxBody: d.Config.MaxBodyBytes, next: serve}
}

// startChat does everything between a valid request and its answer: it applies the simulation,
// starts the chat span and generates. It returns nil once it has answered the request itself.
//
//go:noinline
func startChat(w http.ResponseWriter, r *http.Request, dp *Deps, req *protocol.ChatRequest, model *catalog.Model, facts requestFacts) (context.Context, *chatCall) {
	d := *dp
	rec := observability.RecordFrom(r.Context())
	rec.Stream = req.Stream
	sim, serr := simulate(r, d, model, facts.seed)
	if serr != nil {
		writeError(w, r, serr)
		return nil, nil
	}

	ctx, span := d.Tracer.Start(r.Context(), "chat "+model.ID, trace.WithAttributes(chatRequestAttributes(model, req)...))
	handedOver := false
	defer func() {
		if !handedOver {
			span.End() // answered here, or a panic on the way: the span still reaches the buffer
		}
	}()
	w.Header().Set("Openai-Version", "2020-10-01")

	plan := sim.plan
	reportPlan(ctx, w, span, d, model.ID, sim)
	if plan.Sleep && plan.Wait > 0 && !pauseJSON(ctx, d, plan.Wait) {
		return nil, nil
	}
	if f := plan.Fault; f != nil && f.BeforeOutput() {
		recordFault(ctx, span, d, model.ID, f.Kind)
		serveFault(ctx, w, r, d, f)
		setErrorType(span, rec)
		return nil, nil
	}
	served := sim.served

	in := generate.Input{
		Model: served.ID, Behavior: served.Behavior, DefaultTokens: served.DefaultTokens, Request: req,
		TokenCeiling: d.Config.MaxTokens, MaxResponseBytes: d.Config.MaxResponseBytes,
		ContextWindow: served.ContextWindow, PromptTokens: facts.promptTokens,
	}
	var res generate.Result
	if req.Stream {
		// Prose is made as it is sent: an open stream holds each choice's position, not its
		// answer, and the first chunk does not wait for the whole answer to be made.
		res = generate.Prepare(in)
	} else {
		res = generate.Generate(in)
	}
	rec.PromptTokens = res.PromptTokens
	rec.CompletionTokens = res.CompletionTokens    // a stream counts what it sent (streamChat)
	rec.FinishReason = res.Choices[0].FinishReason // "" for a lazy choice until streamChat settles it

	handedOver = true // handleChat ends the span once the answer is written
	return ctx, &chatCall{
		ID:      newCompletionID(),
		Created: time.Now().Unix(),
		Model:   served,
		// Not the request: a parked stream would keep the whole prompt alive with it.
		Stream:       req.Stream,
		IncludeUsage: req.IncludeUsage,
		Result:       res,
		Timings:      simulation.NewTimings(sim.latency, facts.seed),
		Fault:        plan.Fault, // nil, or a fault that strikes mid-stream
		Span:         span,
		Deps:         dp,
	}
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
	Deps         *Deps // shared by every call; not copied into each
}

// requestFacts are what reading a request learns beside the request itself.
type requestFacts struct {
	seed         uint64 // the latency jitter's seed: the same request waits the same
	promptTokens int    // counted once, for the context window and the usage
}

// readChatRequest applies the checks in the contract's order: media type, size and arrival
// (readBody), JSON and fields, then the model, what it supports and its context window. The
// model is returned whenever the id is in the catalog.
//
//go:noinline
func readChatRequest(w http.ResponseWriter, r *http.Request, cat *catalog.Catalog, limits protocol.Limits, maxBody int64) (*protocol.ChatRequest, *catalog.Model, requestFacts, error) {
	var none requestFacts
	if err := readBody(w, r, maxBody); err != nil {
		return nil, nil, none, err
	}
	buf := takeBody(r)
	defer putBuffer(buf)
	req, aerr := protocol.DecodeChatRequest(buf.Bytes(), limits)
	if aerr != nil {
		return nil, nil, none, aerr
	}
	model, ok := cat.Lookup(req.Model)
	if !ok {
		// The id is not echoed: it is client text, and the catalog is one GET away.
		return nil, nil, none, apierr.New(apierr.ModelNotFound, "model", "The model does not exist in this mock's catalog; GET /v1/models lists the executable models.")
	}
	if !model.Executable() {
		return nil, model, none, apierr.New(apierr.ModelNotExecutable, "model", "The model "+model.ID+" is external provider metadata and never executes here; use a mock model from GET /v1/models.")
	}
	if len(req.Tools) > 0 && !model.Capabilities.Tools {
		return nil, model, none, apierr.New(apierr.ToolsNotSupported, "tools", "The model "+model.ID+" does not support tools; mock-tools does.")
	}
	if req.Stream && !model.Capabilities.Streaming {
		return nil, model, none, apierr.New(apierr.InvalidValue, "stream", "The model "+model.ID+" does not support streaming.")
	}
	// A prompt (with the budget asked for) that the model's window cannot hold is refused as
	// OpenAI refuses it; the window of a fallback model cuts its answer in Generate.
	facts := requestFacts{seed: fnv64a(buf.Bytes()), promptTokens: generate.PromptTokens(req)}
	if aerr := generate.CheckContext(facts.promptTokens, req.MaxTokens, model.ContextWindow); aerr != nil {
		return nil, model, none, aerr
	}
	return req, model, facts, nil
}

// jsonContentType accepts application/json and application/*+json with any parameters, and a
// missing Content-Type (read as JSON, as the contract says).
func jsonContentType(ct string) bool {
	if ct == "" || ct == "application/json" { // what clients send: no parameters to parse
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

// respondChat writes the JSON response after the model's simulated latency.
func respondChat(ctx context.Context, w http.ResponseWriter, r *http.Request, c *chatCall) {
	rec := observability.RecordFrom(ctx)
	if !pauseJSON(ctx, *c.Deps, c.Timings.Total(c.Result.CompletionTokens)) {
		return
	}
	if f := c.Fault; f != nil {
		// A mid-stream fault on a request that does not stream: an error, or a cut body.
		recordFault(ctx, c.Span, *c.Deps, rec.Model, f.Kind)
		if f.Kind == simulation.StreamError {
			serveFault(ctx, w, r, *c.Deps, f)
			return
		}
	}
	body := completionBody(c)
	setProcessingMS(w, rec)
	if c.Fault != nil && c.Fault.Kind == simulation.StreamCut {
		cutJSON(w, body)
		return
	}
	buf, status := encodeBody(http.StatusOK, &body)
	defer putBuffer(buf)
	// What is left to send is the bytes: a client that reads slowly holds them, not the
	// generated text as well.
	c.Result.DropText()
	writeJSONBytes(w, status, buf.Bytes())
}

// completionBody is the chat.completion of a call; its contents and arguments are the generated
// text itself, not copies.
func completionBody(c *chatCall) protocol.Completion {
	body := protocol.Completion{
		ID: c.ID, Object: "chat.completion", Created: c.Created, Model: c.Model.ID,
		Choices:           make([]protocol.CompletionChoice, len(c.Result.Choices)),
		Usage:             protocol.NewUsage(c.Result.PromptTokens, c.Result.CompletionTokens),
		SystemFingerprint: protocol.SystemFingerprint, ServiceTier: protocol.ServiceTier,
	}
	for i, ch := range c.Result.Choices {
		msg := protocol.AssistantMessage{Role: "assistant", Annotations: []struct{}{}}
		if len(ch.ToolCalls) > 0 {
			for _, tc := range ch.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, protocol.ToolCallJSON{
					ID: tc.ID, Type: "function",
					Function: protocol.FunctionCall{Name: tc.Name, Arguments: tc.Arguments.Text()},
				})
			}
		} else {
			text := ch.Text()
			msg.Content = &text
		}
		body.Choices[i] = protocol.CompletionChoice{Index: ch.Index, Message: msg, FinishReason: ch.FinishReason}
	}
	return body
}

// cutJSON sends the headers and half of the body, then drops the connection.
func cutJSON(w http.ResponseWriter, body protocol.Completion) {
	b := body.AppendJSON(nil) // the bytes an uncut response would have carried
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	cutConnection(w)
}

// pauseJSON waits d unless the client leaves (false: nothing more can be written) or shutdown
// ends the wait early (true: answer now rather than hold the drain).
func pauseJSON(ctx context.Context, d Deps, wait time.Duration) bool {
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(min(wait, d.Config.StreamTimeout))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-d.Drain.Aborted():
		return true
	case <-ctx.Done():
		observability.RecordFrom(ctx).Status = 499 // client closed the request
		return false
	}
}

func setErrorType(span trace.Span, rec *observability.Record) {
	if rec.ErrorCode != "" {
		span.SetAttributes(attribute.String("error.type", rec.ErrorCode))
	}
}

func setProcessingMS(w http.ResponseWriter, rec *observability.Record) {
	w.Header().Set("Openai-Processing-Ms", strconv.FormatInt(time.Since(rec.Start).Milliseconds(), 10))
}

func chatRequestAttributes(m *catalog.Model, req *protocol.ChatRequest) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "mockgateway"),
		attribute.String("gen_ai.request.model", m.ID),
		attribute.Bool("gen_ai.request.stream", req.Stream),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *req.Temperature))
	}
	if req.N != 1 {
		attrs = append(attrs, attribute.Int("gen_ai.request.choice.count", req.N))
	}
	return attrs
}

//go:noinline
func setChatResponseAttributes(span trace.Span, c *chatCall, rec *observability.Record) {
	if !span.IsRecording() {
		return
	}
	finish := make([]string, len(c.Result.Choices))
	for i, ch := range c.Result.Choices {
		finish[i] = ch.FinishReason
	}
	span.SetAttributes(
		attribute.String("gen_ai.response.id", c.ID),
		attribute.String("gen_ai.response.model", c.Model.ID),
		attribute.StringSlice("gen_ai.response.finish_reasons", finish),
		attribute.Int("gen_ai.usage.input_tokens", rec.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", rec.CompletionTokens),
	)
	setErrorType(span, rec)
}
