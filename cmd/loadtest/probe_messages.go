package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"mockgateway/internal/chatclient"
)

// Anthropic's Messages dialect (POST /v1/messages) under load: the chat requests' message, the
// same answer, with the header every Anthropic client sends.

const messagesPath = "/v1/messages"

var (
	messagesJSONRequest   = `{"model":"mock-echo","max_tokens":1024,"messages":[{"role":"user","content":"` + userMessage + `"}]}`
	messagesStreamRequest = `{"model":"mock-echo","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"` + userMessage + `"}]}`
	anthropicHeaders      = map[string]string{"Anthropic-Version": "2023-06-01"}
)

// messagesShape is what one Messages stream carried.
type messagesShape struct {
	Bytes     int  `json:"bytes"`
	Events    int  `json:"events"`     // every data frame
	Deltas    int  `json:"deltas"`     // text_delta events with text
	Stopped   bool `json:"stopped"`    // ended with message_stop
	DoneFrame bool `json:"done_frame"` // a data: [DONE] (a Messages stream has none)
}

func messagesShapeOf(body []byte) (messagesShape, error) {
	s := messagesShape{Bytes: len(body)}
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
		var e struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return s, fmt.Errorf("event %d is not JSON: %.80q", s.Events, ev.Data)
		}
		switch {
		case e.Type == "content_block_delta" && e.Delta.Type == "text_delta" && e.Delta.Text != "":
			s.Deltas++
		case e.Type == "message_stop":
			s.Stopped = true
		case e.Type == "error":
			return s, fmt.Errorf("an error event: %.200s", ev.Data)
		}
	}
}

// messagesProbeResult is mockgateway's answer to the two Messages requests.
type messagesProbeResult struct {
	JSONBytes int           `json:"json_bytes"`
	Stream    messagesShape `json:"stream"`
}

// probeMessages checks that /v1/messages answers the load test's requests with the chat probe's
// text and tokens, before any load.
func probeMessages(ctx context.Context, s *server) (messagesProbeResult, error) {
	var p messagesProbeResult
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	do := func(body string) ([]byte, error) {
		return postOK(ctx, client, chatclient.Request{URL: s.url(messagesPath), Body: []byte(body), Header: anthropicHeaders})
	}
	_, chatJSON, err := post(ctx, client, s, jsonRequest)
	if err != nil {
		return p, fmt.Errorf("chat JSON probe: %v", err)
	}
	b, err := do(messagesJSONRequest)
	if err != nil {
		return p, fmt.Errorf("the Messages JSON probe: %v", err)
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
	var msg struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(chatJSON, &chat) != nil || len(chat.Choices) == 0 || json.Unmarshal(b, &msg) != nil || len(msg.Content) != 1 {
		return p, fmt.Errorf("the Messages JSON probe: not the shape of one text block: %.200s", b)
	}
	if msg.Content[0].Text != chat.Choices[0].Message.Content || msg.Usage.OutputTokens != chat.Usage.CompletionTokens {
		return p, fmt.Errorf("the Messages JSON probe: %q in %d tokens, chat: %q in %d", msg.Content[0].Text, msg.Usage.OutputTokens,
			chat.Choices[0].Message.Content, chat.Usage.CompletionTokens)
	}
	if b, err = do(messagesStreamRequest); err != nil {
		return p, fmt.Errorf("the Messages stream probe: %v", err)
	}
	if p.Stream, err = messagesShapeOf(b); err != nil {
		return p, fmt.Errorf("the Messages stream probe: %v", err)
	}
	if !p.Stream.Stopped || p.Stream.DoneFrame || p.Stream.Deltas != wantContentTokens {
		return p, fmt.Errorf("the Messages stream probe: %d text deltas, message_stop=%v, [DONE]=%v; want %d, true, false",
			p.Stream.Deltas, p.Stream.Stopped, p.Stream.DoneFrame, wantContentTokens)
	}
	return p, nil
}
