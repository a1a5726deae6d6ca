package chatclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Chunk is the part of a chat.completion.chunk (or of an error frame) the tools read.
type Chunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string           `json:"content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"` // an error frame's error: an ErrorBody by contract
}

// ErrorBody is the contract's error object, in an error response or an error frame.
type ErrorBody struct {
	Code    any    `json:"code"` // a string by contract; anything else is kept to be judged
	Message string `json:"message"`
}

// CodeText is the error code when it is a string, else "".
func (e ErrorBody) CodeText() string {
	s, _ := e.Code.(string)
	return s
}

// ErrorCode returns the code of an error response body, and whether the body is the contract's
// error envelope with a string code.
func ErrorCode(body []byte) (string, bool) {
	var env struct {
		Error *ErrorBody `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil {
		return "", false
	}
	code, ok := env.Error.Code.(string)
	return code, ok
}

// Stream is what a client saw of a stream, event by event.
type Stream struct {
	Events        int      // events with data, [DONE] included
	Chunks        int      // JSON events that are not error frames
	Completion    int      // of those, objects "chat.completion.chunk"
	ContentDeltas int      // choices whose delta had non-empty content
	ErrorFrames   [][]byte // the data of every error frame (a non-null top-level "error")
	ErrorCode     string   // the string code of the first error frame
	Done          bool     // data: [DONE] arrived
	Usage         bool     // a chunk carried a usage object
	ToolCalls     bool     // a delta carried tool calls
	Finish        string   // the last finish_reason seen
	Choices       map[int]bool
	// Inexact counts events other than one "data: " line: mockgateway never sends one.
	Inexact int
	// Ended is how the body ended when it did not end cleanly: a cut connection, an event
	// left unfinished. Read sets it; nil for a clean end.
	Ended error
}

// Add counts one event. An event that breaks the stream's shape (a frame after [DONE], a frame
// that is not JSON) is an error and is not counted; a caller that must see every frame may go
// on after it.
func (s *Stream) Add(ev Event) error {
	if s.Done {
		return errors.New("a frame after [DONE]")
	}
	var ch Chunk
	if !ev.Done() {
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			// A frame whose members have other types than a chunk's is still an error frame
			// when it is an object with an error: what it says must not go unread.
			var obj map[string]json.RawMessage
			if json.Unmarshal(ev.Data, &obj) != nil || !isError(obj["error"]) {
				return fmt.Errorf("a frame that is not JSON: %.80q", ev.Data)
			}
			ch = Chunk{Error: obj["error"]}
		}
	}
	s.Events++
	if !ev.Exact {
		s.Inexact++
	}
	if ev.Done() {
		s.Done = true
		return nil
	}
	if isError(ch.Error) {
		if len(s.ErrorFrames) == 0 {
			var e ErrorBody
			_ = json.Unmarshal(ch.Error, &e)
			s.ErrorCode = e.CodeText()
		}
		s.ErrorFrames = append(s.ErrorFrames, append([]byte(nil), ev.Data...))
		return nil
	}
	s.Chunks++
	if ch.Object == "chat.completion.chunk" {
		s.Completion++
	}
	if len(ch.Usage) > 0 && string(ch.Usage) != "null" {
		s.Usage = true
	}
	if s.Choices == nil {
		s.Choices = map[int]bool{}
	}
	for _, c := range ch.Choices {
		s.Choices[c.Index] = true
		if len(c.Delta.ToolCalls) > 0 {
			s.ToolCalls = true
		}
		if c.Delta.Content != nil && *c.Delta.Content != "" {
			s.ContentDeltas++
		}
		if c.FinishReason != nil {
			s.Finish = *c.FinishReason
		}
	}
	return nil
}

func isError(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// Read reads body to its end, or until stopAfter chunks have arrived (stopAfter > 0: the caller
// is about to hang up). The error is the first event that breaks the stream's shape; a body
// that ends otherwise than cleanly is in Stream.Ended.
func Read(body io.Reader, stopAfter int) (Stream, error) {
	var s Stream
	rd := NewReader(body)
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.Ended = err
			}
			return s, nil
		}
		if err := s.Add(ev); err != nil {
			return s, err
		}
		if stopAfter > 0 && s.Chunks >= stopAfter {
			return s, nil
		}
	}
}
