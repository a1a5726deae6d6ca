package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"mockgateway/internal/chatclient"
)

// loadDialect is one dialect the load test measures on mockgateway beside chat, in the same
// rounds: its route and headers, its two requests (the chat requests' one user message, so the
// same answer: "echo:" + 15 words, 16 output tokens), and how to read its answer and its stream.
type loadDialect struct {
	name string // as the report names it
	// kind names its load kinds, kind+"-json" and kind+"-stream", and its figures in the JSON.
	kind   string
	header map[string]string // what its clients send beside the body (nil: nothing)
	json   loadRequest
	stream loadRequest
	// answer reads a JSON answer's text and output tokens; ok is false unless it holds one
	// message of one text.
	answer func(body []byte) (text string, tokens int, ok bool)
	// event reads one stream event: a text delta with text, the event that ends the stream, or
	// a failure the stream reports (an error event).
	event func(data []byte) (delta, final bool, failure string, err error)
	final string // the name of the event that ends its stream, for the report
}

// loadRequest is one request of a dialect: its path (and query) and its body. The two requests
// of a dialect may have two paths, where the path names the method.
type loadRequest struct {
	path, body string
}

// loadDialects is the table of the dialects the load test measures beside chat, one row each.
func loadDialects() []loadDialect {
	return []loadDialect{
		{
			// A stream of named events: created, in_progress, output_item.added,
			// content_part.added, 16 output_text.delta, output_text.done, content_part.done,
			// output_item.done, completed (no [DONE]).
			name: "Responses", kind: "responses",
			json:   loadRequest{"/v1/responses", `{"model":"mock-echo","input":[{"role":"user","content":"` + userMessage + `"}]}`},
			stream: loadRequest{"/v1/responses", `{"model":"mock-echo","stream":true,"input":[{"role":"user","content":"` + userMessage + `"}]}`},
			answer: responsesAnswer, event: responsesEvent, final: "response.completed",
		},
		{
			// Anthropic's Messages API, with the header every Anthropic client sends.
			name: "Messages", kind: "messages", header: map[string]string{"Anthropic-Version": "2023-06-01"},
			json:   loadRequest{"/v1/messages", `{"model":"mock-echo","max_tokens":1024,"messages":[{"role":"user","content":"` + userMessage + `"}]}`},
			stream: loadRequest{"/v1/messages", `{"model":"mock-echo","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"` + userMessage + `"}]}`},
			answer: messagesAnswer, event: messagesEvent, final: "message_stop",
		},
		{
			// Google's Gemini API: the model and the method in the path, the key in
			// x-goog-api-key; a stream of data: lines, the last with its finishReason.
			name: "Gemini", kind: "gemini", header: map[string]string{"X-Goog-Api-Key": "loadtest"},
			json:   loadRequest{"/v1beta/models/mock-echo:generateContent", `{"contents":[{"role":"user","parts":[{"text":"` + userMessage + `"}]}]}`},
			stream: loadRequest{"/v1beta/models/mock-echo:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"` + userMessage + `"}]}]}`},
			answer: geminiAnswer, event: geminiEvent, final: "the finishReason",
		},
	}
}

// geminiResponse is a GenerateContentResponse as the load test reads it: the first candidate's
// parts, its finish and the output tokens.
type geminiResponse struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	Usage struct {
		CandidatesTokenCount int `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
	Error json.RawMessage `json:"error"`
}

func geminiAnswer(body []byte) (string, int, bool) {
	var r geminiResponse
	if json.Unmarshal(body, &r) != nil || len(r.Candidates) != 1 || len(r.Candidates[0].Content.Parts) != 1 {
		return "", 0, false
	}
	return r.Candidates[0].Content.Parts[0].Text, r.Usage.CandidatesTokenCount, true
}

func geminiEvent(data []byte) (delta, final bool, failure string, err error) {
	var r geminiResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return false, false, "", err
	}
	if r.Error != nil {
		return false, false, "an error", nil
	}
	if len(r.Candidates) == 0 {
		return false, false, "", nil
	}
	c := r.Candidates[0]
	return len(c.Content.Parts) > 0 && c.Content.Parts[0].Text != "", c.FinishReason != "", "", nil
}

func responsesAnswer(body []byte) (string, int, bool) {
	var resp struct {
		Output []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &resp) != nil || len(resp.Output) != 1 || len(resp.Output[0].Content) != 1 {
		return "", 0, false
	}
	return resp.Output[0].Content[0].Text, resp.Usage.OutputTokens, true
}

func responsesEvent(data []byte) (delta, final bool, failure string, err error) {
	var e struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return false, false, "", err
	}
	switch e.Type {
	case "error", "response.failed":
		failure = "a " + e.Type
	}
	return e.Type == "response.output_text.delta" && e.Delta != "", e.Type == "response.completed", failure, nil
}

func messagesAnswer(body []byte) (string, int, bool) {
	var msg struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.Content) != 1 {
		return "", 0, false
	}
	return msg.Content[0].Text, msg.Usage.OutputTokens, true
}

func messagesEvent(data []byte) (delta, final bool, failure string, err error) {
	var e struct {
		Type  string `json:"type"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return false, false, "", err
	}
	if e.Type == "error" {
		failure = "an error"
	}
	return e.Type == "content_block_delta" && e.Delta.Type == "text_delta" && e.Delta.Text != "", e.Type == "message_stop", failure, nil
}

// dialectShape is what one stream of a dialect carried.
type dialectShape struct {
	Bytes     int  `json:"bytes"`
	Events    int  `json:"events"`     // every data frame
	Deltas    int  `json:"deltas"`     // text deltas with text
	Ended     bool `json:"ended"`      // ended with the dialect's final event
	DoneFrame bool `json:"done_frame"` // a data: [DONE] (these dialects' streams have none)
}

func (d loadDialect) shapeOf(body []byte) (dialectShape, error) {
	s := dialectShape{Bytes: len(body)}
	rd := chatclient.NewReader(bytes.NewReader(body))
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, err
		}
		s.Events++
		if ev.Done() {
			s.DoneFrame = true
			continue
		}
		delta, final, failure, err := d.event(ev.Data)
		switch {
		case err != nil:
			return s, fmt.Errorf("event %d is not JSON: %.80q", s.Events, ev.Data)
		case failure != "":
			return s, fmt.Errorf("%s event: %.200s", failure, ev.Data)
		}
		if delta {
			s.Deltas++
		}
		s.Ended = s.Ended || final // an event may carry the last text and end the stream
	}
}

// dialectLoad is a dialect's answer to its two requests, checked before any load, and its
// figures under load (nil: that kind was not run).
type dialectLoad struct {
	JSONBytes int          `json:"json_bytes"`
	Stream    dialectShape `json:"stream"`
	JSON      *loadFigures `json:"json_load,omitempty"`
	StreamRun *loadFigures `json:"stream_load,omitempty"`
}

// probe checks that the dialect answers the load test's requests with the chat probe's text and
// tokens, before any load.
func (d loadDialect) probe(ctx context.Context, s *server) (*dialectLoad, error) {
	p := &dialectLoad{}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	do := func(r loadRequest) ([]byte, error) {
		return postOK(ctx, client, chatclient.Request{URL: s.url(r.path), Body: []byte(r.body), Header: d.header})
	}
	_, chatJSON, err := post(ctx, client, s, jsonRequest)
	if err != nil {
		return p, fmt.Errorf("chat JSON probe: %v", err)
	}
	b, err := do(d.json)
	if err != nil {
		return p, fmt.Errorf("the %s JSON probe: %v", d.name, err)
	}
	p.JSONBytes = len(b)
	var chat struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	text, tokens, ok := d.answer(b)
	if json.Unmarshal(chatJSON, &chat) != nil || len(chat.Choices) == 0 || !ok {
		return p, fmt.Errorf("the %s JSON probe: not the shape of one message: %.200s", d.name, b)
	}
	if text != chat.Choices[0].Message.Content || tokens != chat.Usage.CompletionTokens {
		return p, fmt.Errorf("the %s JSON probe: %q in %d tokens, chat: %q in %d", d.name, text, tokens,
			chat.Choices[0].Message.Content, chat.Usage.CompletionTokens)
	}
	if b, err = do(d.stream); err != nil {
		return p, fmt.Errorf("the %s stream probe: %v", d.name, err)
	}
	if p.Stream, err = d.shapeOf(b); err != nil {
		return p, fmt.Errorf("the %s stream probe: %v", d.name, err)
	}
	if !p.Stream.Ended || p.Stream.DoneFrame || p.Stream.Deltas != wantContentTokens {
		return p, fmt.Errorf("the %s stream probe: %d text deltas, %s=%v, [DONE]=%v; want %d, true, false",
			d.name, p.Stream.Deltas, d.final, p.Stream.Ended, p.Stream.DoneFrame, wantContentTokens)
	}
	return p, nil
}

// dialectKindsHelp describes the dialects' load kinds for --load-kinds.
func dialectKindsHelp() string {
	var parts []string
	for _, d := range loadDialects() {
		parts = append(parts, fmt.Sprintf("%s-json and %s-stream (POST %s, mockgateway)", d.kind, d.kind, d.json.path))
	}
	return strings.Join(parts, ", ")
}

// messagesDialect is the table's row of Anthropic's Messages API, whose headers the hostile
// cases of that API send too.
func messagesDialect() loadDialect {
	for _, d := range loadDialects() {
		if d.kind == "messages" {
			return d
		}
	}
	panic("loadtest: no messages row in loadDialects")
}
