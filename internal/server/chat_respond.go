package server

import (
	"context"
	"net/http"
	"strconv"

	"mockgateway/internal/generate"
	"mockgateway/internal/protocol"
	"mockgateway/internal/simulation"
	"mockgateway/observability"
)

// respond writes the JSON answer after the model's simulated latency.
func (h *chatHandler) respond(ctx context.Context, w http.ResponseWriter, r *http.Request, c *chatCall) {
	rec := observability.RecordFrom(ctx)
	if !h.wait(ctx, c.Timings.Total(c.Result.CompletionTokens)) {
		return
	}
	if f := c.Fault; f != nil {
		// A mid-stream fault on a request that does not stream: an error, or a cut body.
		recordFault(ctx, c.Span, h.metrics, rec.Model, f.Kind)
		if f.Kind == simulation.StreamError {
			writeError(w, r, faultError(f))
			return
		}
	}
	body := c.answer()
	setProcessingMS(w, rec)
	if c.Fault != nil && c.Fault.Kind == simulation.StreamCut {
		cutJSON(w, body)
		return
	}
	buf, status := encodeBody(http.StatusOK, body)
	defer putBuffer(buf)
	// What is left to send is the bytes: a client that reads slowly holds them, not the
	// generated text as well.
	c.Result.DropText()
	writeJSONBytes(w, status, buf.Bytes())
}

// answer is the call's JSON answer in its dialect.
func (c *chatCall) answer() jsonAppender {
	if c.anthropic() {
		body := messageBody(c)
		return &body
	}
	if c.Echo != nil {
		body := responseBody(c)
		return &body
	}
	body := completionBody(c)
	return &body
}

// usageOf is a chat answer's usage: the reasoning tokens are part of the completion's.
func usageOf(res *generate.Result) protocol.Usage {
	u := protocol.NewUsage(res.PromptTokens, res.CompletionTokens)
	u.CompletionTokensDetails.ReasoningTokens = res.ReasoningTokens
	return u
}

// completionBody is the chat.completion of a call; its contents and arguments are the generated
// text itself, not copies.
func completionBody(c *chatCall) protocol.Completion {
	body := protocol.Completion{
		ID: c.ID, Object: "chat.completion", Created: c.Created, Model: c.Model.ID,
		Choices:           make([]protocol.CompletionChoice, len(c.Result.Choices)),
		Usage:             usageOf(&c.Result),
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
		} else if !ch.Refusal.IsNil() {
			text := ch.Refusal.Text()
			msg.Refusal = &text
		} else {
			text := ch.Text()
			msg.Content = &text
		}
		body.Choices[i] = protocol.CompletionChoice{Index: ch.Index, Message: msg, FinishReason: ch.FinishReason}
	}
	return body
}

// cutJSON sends the headers and half of the body, then drops the connection.
func cutJSON(w http.ResponseWriter, body jsonAppender) {
	b := body.AppendJSON(nil) // the bytes an uncut response would have carried
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	cutConnection(w)
}
