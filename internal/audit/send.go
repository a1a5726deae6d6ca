package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mockgateway/internal/chatclient"
)

// oversized sends bodies over the size limit, growing until one gets a 413, then once more
// without a Content-Length at that size.
func (t *traffic) oversized(ctx context.Context) {
	sizes := []int{1<<20 + 64<<10, 8<<20 + 64<<10}
	for _, size := range sizes {
		b := t.newProbe(fmt.Sprintf("oversized body (%s, with Content-Length)", sizeText(int64(size))), http.MethodPost, chatPath)
		b.p.Body = b.bigBody(size)
		b.headers(headerOpts{}).expect("413 request_too_large")
		t.send(ctx, b.p)
		if b.p.Status == http.StatusRequestEntityTooLarge {
			t.maxBody = int64(size)
			break
		}
	}
	size := sizes[0]
	if t.maxBody > 0 {
		size = int(t.maxBody)
	}
	b := t.newProbe(fmt.Sprintf("oversized body (%s, chunked)", sizeText(int64(size))), http.MethodPost, chatPath)
	b.p.Body = b.bigBody(size)
	b.p.Chunked = true
	b.headers(headerOpts{}).expect("413 request_too_large")
	t.send(ctx, b.p)
}

// bigBody is a valid chat request of about size bytes with canaries at the start, the middle and
// the end of its one message.
func (b builder) bigBody(size int) []byte {
	start, mid, end := b.c("oversized body (start of the message)"), b.c("oversized body (middle)"), b.c("oversized body (end)")
	filler := strings.Repeat("lorem ipsum dolor sit amet ", (size/2)/27+1)
	content := start + " " + filler + " " + mid + " " + filler + " " + end
	data, _ := json.Marshal(obj{"model": b.t.echoModel, "messages": []any{obj{"role": "user", "content": content}}})
	return data
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// sendAll sends every probe not yet sent, one at a time.
func (t *traffic) sendAll(ctx context.Context) {
	for _, p := range t.probes {
		if p.Outcome != "" || ctx.Err() != nil {
			continue
		}
		t.send(ctx, p)
	}
}

const maxErrorBody = 1 << 20

// send makes the request and records what came back.
func (t *traffic) send(ctx context.Context, p *probe) {
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if p.Body != nil {
		if p.Chunked {
			body = io.MultiReader(bytes.NewReader(p.Body)) // hides the length: chunked encoding
		} else {
			body = bytes.NewReader(p.Body)
		}
	}
	req, err := http.NewRequestWithContext(rctx, p.Method, t.base+p.Path, body)
	if err != nil {
		p.Outcome = "not sent: " + t.can.Mask(err.Error())
		return
	}
	req.Header = p.Header
	if p.Host != "" {
		req.Host = p.Host
	}
	if p.Chunked {
		req.ContentLength = -1
	}
	start := time.Now()
	resp, err := t.client.Do(req)
	p.Elapsed = time.Since(start)
	if err != nil {
		p.Outcome, p.Reached = classify(err, rctx, timeout)
		return
	}
	defer resp.Body.Close()
	p.Reached = true
	p.Status = resp.StatusCode
	p.RespHeader = resp.Header.Clone()
	stream := chatclient.IsStream(resp.Header)
	if p.Mode == readFirstEvent {
		_, _ = chatclient.NewReader(resp.Body).Next()
		cancel()
		p.Outcome = "closed by the client after the first event"
		return
	}
	data, rerr := readLimited(resp.Body, 32<<20)
	var sse chatclient.Stream
	end := "[DONE]"
	if stream && p.dialect != nil && p.dialect.event != nil {
		sse, end = readNamedEvents(data, p.dialect.event), p.dialect.end
		p.SSEErrors = sse.ErrorFrames
	} else if stream {
		sse = readEvents(data)
		p.SSEErrors = sse.ErrorFrames
	}
	switch {
	case rerr != nil && rctx.Err() != nil:
		p.Outcome = fmt.Sprintf("the client gave up after %s while reading", timeout)
	case rerr != nil:
		p.Outcome = "response cut by the server while reading"
	case stream && !sse.Done:
		p.Outcome = "stream ended without " + end
	case stream:
		p.Outcome = "stream read to " + end
	default:
		p.Outcome = "response read"
	}
	if p.Status >= 400 {
		p.ErrBody = data[:min(len(data), maxErrorBody)]
		if code, ok := chatclient.ErrorCode(p.ErrBody); ok {
			p.ErrorCode = reportableCode(code)
		} else if d := p.dialect; d != nil && d.errorType != nil {
			if typ, ok := d.errorType(p.ErrBody); ok {
				p.ErrorCode = reportableCode(typ) // the dialect's envelope names a type, not the code
			}
		}
	} else if !stream {
		p.okBody = data
	}
	if len(p.SSEErrors) > 0 && p.ErrorCode == "" {
		p.ErrorCode = reportableCode(sse.ErrorCode)
	}
}

// readEvents reads every event of a stream. A frame that breaks the stream's shape does not end
// the reading: what follows it may still hold an error frame to search.
func readEvents(data []byte) chatclient.Stream {
	var s chatclient.Stream
	done := false
	rd := chatclient.NewReader(bytes.NewReader(data))
	for {
		ev, err := rd.Next()
		if err != nil {
			s.Done = done
			return s
		}
		s.Done = false // frames after a [DONE] are read all the same
		_ = s.Add(ev)
		done = done || s.Done
	}
}

// namedEvent reads one event of a stream of named events whose data carries its type: whether
// it ends the stream, and whether it reports a failure, with the failure's code.
type namedEvent func(data []byte) (end, failed bool, code string, err error)

// readNamedEvents reads every event of a stream of named events (it has no [DONE]). An event
// that reports a failure, or is not JSON, is kept as an error frame and searched, as what a
// failing stream says; the other events carry the answer and what the client sent to be echoed,
// and are not.
func readNamedEvents(data []byte, read namedEvent) chatclient.Stream {
	var s chatclient.Stream
	rd := chatclient.NewReader(bytes.NewReader(data))
	for {
		ev, err := rd.Next()
		if err != nil {
			return s
		}
		s.Events++
		end, failed, code, err := read(ev.Data)
		if err != nil {
			s.ErrorFrames = append(s.ErrorFrames, append([]byte(nil), ev.Data...))
			continue
		}
		if failed {
			if len(s.ErrorFrames) == 0 {
				s.ErrorCode = code
			}
			s.ErrorFrames = append(s.ErrorFrames, append([]byte(nil), ev.Data...))
		}
		s.Done = s.Done || end
		s.Chunks++
	}
}

// reportableCode keeps an error code the report may print: a normalized code is lower-case
// letters and underscores. Anything else came from the target, could be a canary or a key, and
// the report names only its shape (the body itself is searched like every other source).
func reportableCode(code string) string {
	if len(code) > 64 {
		return "(not a normalized code)"
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return "(not a normalized code)"
		}
	}
	return code
}

// classify describes a request that got no response, and whether the service received it.
func classify(err error, rctx context.Context, timeout time.Duration) (string, bool) {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "no connection: " + op.Err.Error(), false
	}
	if rctx.Err() == context.DeadlineExceeded {
		return fmt.Sprintf("the client gave up after %s (no response yet)", timeout), true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "EOF") {
		return "connection closed by the server without a response", true
	}
	if strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe") {
		return "connection reset by the server without a response", true
	}
	return "no response: " + err.Error(), true
}

func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return data, err
	}
	if int64(len(data)) > max {
		return data[:max], fmt.Errorf("over %s", sizeText(max))
	}
	return data, nil
}
