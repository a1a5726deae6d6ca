package server

import (
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"mockgateway/internal/catalog"
	"mockgateway/internal/fixtures"
	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/observability"
)

func setErrorType(span trace.Span, rec *observability.Record) {
	if rec.ErrorCode != "" {
		span.SetAttributes(attribute.String("error.type", rec.ErrorCode))
	}
}

// setProcessingMS gives the answer the time it took to start, in the header its dialect names
// for it (dialect.Dialect.ProcessingHeader), if any.
func setProcessingMS(w http.ResponseWriter, rec *observability.Record, name string) {
	if name != "" {
		w.Header().Set(name, strconv.FormatInt(time.Since(rec.Start).Milliseconds(), 10))
	}
}

// describeChatRequest gives the chat span the request's GenAI attributes.
//
//go:noinline
func describeChatRequest(span trace.Span, m *catalog.Model, req *protocol.Request, hit *fixtures.Hit) {
	if !span.IsRecording() {
		return
	}
	scratch := observability.BorrowAttributes()
	defer scratch.Release()
	attrs := append(scratch.KeyValues(),
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "mockgateway"),
		attribute.String("gen_ai.request.model", m.ID),
		attribute.Bool("gen_ai.request.stream", req.Stream),
	)
	if hit != nil {
		attrs = append(attrs, attribute.String("mockgateway.fixture", hit.Name))
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
	span.SetAttributes(attrs...)
}

//go:noinline
func setChatResponseAttributes(span trace.Span, c *chatCall, rec *observability.Record) {
	if !span.IsRecording() {
		return
	}
	scratch := observability.BorrowAttributes()
	defer scratch.Release()
	span.SetAttributes(append(scratch.KeyValues(),
		attribute.String("gen_ai.response.id", c.ID),
		attribute.String("gen_ai.response.model", c.Model.ID),
		c.h.finishReasons(c.Result.Choices),
		attribute.Int("gen_ai.usage.input_tokens", rec.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", rec.CompletionTokens),
	)...)
	if rec.ReasoningTokens > 0 {
		span.SetAttributes(attribute.Int("gen_ai.usage.reasoning.output_tokens", rec.ReasoningTokens))
	}
	setErrorType(span, rec)
}

// finishReasons is gen_ai.response.finish_reasons. An answer with one choice gets one of the
// handler's attributes made in advance (oneFinishReason): a string-slice attribute costs three
// allocations to build (BenchmarkChatJSON).
func (h *chatHandler) finishReasons(choices []generate.Choice) attribute.KeyValue {
	if len(choices) == 1 {
		if kv, ok := h.oneFinishReason[choices[0].FinishReason]; ok {
			return kv
		}
	}
	finish := make([]string, len(choices))
	for i, ch := range choices {
		finish[i] = ch.FinishReason
	}
	return attribute.StringSlice("gen_ai.response.finish_reasons", finish)
}
