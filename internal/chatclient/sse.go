// Package chatclient owns the client side of the chat API as the repository's test and demo
// tools speak it (the traffic generator, cmd/loadtest, the redaction audit): sending a request,
// reading a server-sent-event stream event by event, and telling what the stream carried —
// chunks, content, tool calls, usage, error frames, [DONE]. It is plain net/http on purpose:
// these tools must be able to send what an SDK refuses to and to see the wire as it is.
package chatclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxEvent bounds one event; a longer one is an error, not an allocation without end.
const MaxEvent = 16 << 20

// Event is one server-sent event.
type Event struct {
	// Data is the payload of its data lines, joined by "\n" as the SSE rules say.
	Data []byte
	// DataLines is how many data lines it had; 0 for an event of comments only.
	DataLines int
	// Exact is true when the event was one "data: <payload>" line and nothing else: the only
	// form mockgateway writes.
	Exact bool
}

// Done is whether the event is the stream's final data: [DONE].
func (e Event) Done() bool { return string(e.Data) == "[DONE]" }

// Reader reads the events of an SSE body one at a time.
type Reader struct {
	br *bufio.Reader
}

// NewReader reads events from r, a response body.
func NewReader(r io.Reader) *Reader { return &Reader{br: bufio.NewReaderSize(r, 16<<10)} }

// ErrEventTooLong is returned for an event over MaxEvent bytes.
var ErrEventTooLong = errors.New("chatclient: server-sent event over 16 MiB")

// Next returns the next event that has data, skipping events of comments only (": keep-alive").
// At the end of the body it returns io.EOF; an event cut short by the end is dropped, as the
// SSE rules say, and reported as io.ErrUnexpectedEOF. A transport error (a cut connection) is
// returned as it is.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	lines, size := 0, 0
	for {
		line, err := r.readLine()
		size += len(line)
		if size > MaxEvent {
			return Event{}, ErrEventTooLong
		}
		if err != nil {
			if errors.Is(err, io.EOF) && lines > 0 {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 { // the blank line that ends an event
			if ev.DataLines > 0 {
				ev.Data = data.Bytes()
				ev.Exact = ev.Exact && lines == 1
				return ev, nil
			}
			lines, size, ev = 0, 0, Event{}
			continue
		}
		lines++
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // comments, event:, id:, retry: — nothing these tools read
		}
		if ev.DataLines == 0 {
			ev.Exact = bytes.HasPrefix(value, []byte(" "))
		} else {
			data.WriteByte('\n')
		}
		ev.DataLines++
		data.Write(bytes.TrimPrefix(value, []byte(" ")))
	}
}

// readLine returns one line without its line ending ("\n" or "\r\n").
func (r *Reader) readLine() ([]byte, error) {
	var out []byte
	for {
		part, err := r.br.ReadSlice('\n')
		out = append(out, part...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(out) > MaxEvent {
				return nil, ErrEventTooLong
			}
			continue
		}
		if err != nil {
			if len(out) > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // a last line without its newline
			}
			return nil, err
		}
		out = bytes.TrimSuffix(out[:len(out)-1], []byte("\r"))
		return out, nil
	}
}
