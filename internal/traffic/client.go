package traffic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// call is one client action of one scenario; it may send several requests.
type call struct {
	g        *generator
	scenario string
	seq      uint64
	variant  uint64 // drawn from the seeded generator: picks lengths, seeds, lorem lines
	n        int    // requests sent so far
}

// requestID names each request so that the service's log line, its span and this generator's
// call point at one another: traffic-<run>-<call>-<request>. It matches the service's
// x-request-id pattern, so the service keeps it.
func (c *call) requestID() string {
	return "traffic-" + c.g.runID + "-" + strconv.FormatUint(c.seq, 10) + "-" + strconv.Itoa(c.n)
}

type request struct {
	method, path string
	body         []byte
	header       map[string]string
}

// send sends one request and counts its status (or its transport error).
func (c *call) send(ctx context.Context, r request) (*http.Response, error) {
	c.n++
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.g.cfg.Target+r.path, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "mockgateway-traffic")
	req.Header.Set("X-Request-Id", c.requestID())
	if c.g.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.g.cfg.APIKey)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := c.g.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.g.stats.transportError()
		}
		return nil, err
	}
	c.g.stats.request(resp.StatusCode)
	return resp, nil
}

// maxBody bounds what the generator reads of a JSON answer.
const maxBody = 4 << 20

// errorBody is the contract's error envelope.
type errorBody struct {
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// expect sends r, reads the whole answer and checks its status and, for errors, the envelope's
// code. into, when not nil, receives a 200 answer.
func (c *call) expect(ctx context.Context, r request, status int, code string, into any) (*http.Response, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp, err
	}
	if resp.StatusCode != status {
		return resp, unexpected("%s %s: status %d, want %d", r.method, r.path, resp.StatusCode, status)
	}
	if code != "" {
		var e errorBody
		if json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Code != code {
			return resp, unexpected("%s %s: error code is not %s", r.method, r.path, code)
		}
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			return resp, unexpected("%s %s: answer is not the expected JSON", r.method, r.path)
		}
	}
	return resp, nil
}

// listModels returns the ids GET /v1/models lists.
func (c *call) listModels(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if _, err := c.expect(ctx, request{method: http.MethodGet, path: "/v1/models"}, http.StatusOK, "", &list); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// streamResult is what a client saw of a server-sent-event stream.
type streamResult struct {
	frames    int  // data frames other than [DONE] and error frames
	done      bool // [DONE] arrived
	errorCode string
	usage     bool // a chunk carried a usage object
	toolCalls bool
	finish    string       // last finish_reason seen
	choices   map[int]bool // choice indexes seen
	readErr   error        // the body ended with an error (a cut connection) before [DONE]
}

type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// readStream reads SSE frames until [DONE], the end of the body, or stopAfter frames
// (stopAfter > 0: the caller is about to hang up).
func readStream(body io.Reader, stopAfter int) (streamResult, error) {
	r := streamResult{choices: map[int]bool{}}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxBody)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // blank separators and ": keep-alive" comments
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			r.done = true
			continue
		}
		if r.done {
			return r, unexpected("a frame after [DONE]")
		}
		var ch chunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return r, unexpected("a frame that is not JSON")
		}
		if ch.Error != nil {
			r.errorCode = ch.Error.Code
			continue
		}
		r.frames++
		if len(ch.Usage) > 0 && string(ch.Usage) != "null" {
			r.usage = true
		}
		for _, choice := range ch.Choices {
			r.choices[choice.Index] = true
			if len(choice.Delta.ToolCalls) > 0 {
				r.toolCalls = true
			}
			if choice.FinishReason != nil {
				r.finish = *choice.FinishReason
			}
		}
		if stopAfter > 0 && r.frames >= stopAfter {
			return r, nil
		}
	}
	r.readErr = sc.Err()
	return r, nil
}

// stream sends a streaming request and reads the answer. A non-200 answer is unexpected.
func (c *call) stream(ctx context.Context, r request, stopAfter int) (streamResult, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return streamResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return streamResult{}, unexpected("stream: status %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return streamResult{}, unexpected("stream: content type %q", ct)
	}
	res, err := readStream(resp.Body, stopAfter)
	if err == nil && ctx.Err() != nil {
		// Our own hang-up (the generator stopping), not a cut by the service.
		return res, ctx.Err()
	}
	return res, err
}

// retryDelay is how long a client waits before retrying, from the answer's retry-after-ms or
// retry-after, capped so that a simulated long back-off does not hold a slot for long.
func retryDelay(h http.Header) time.Duration {
	const ceiling = 2 * time.Second
	d := 200 * time.Millisecond
	if ms, err := strconv.Atoi(h.Get("Retry-After-Ms")); err == nil && ms >= 0 {
		d = time.Duration(ms) * time.Millisecond
	} else if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	}
	return min(d, ceiling)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("traffic: body does not encode: %v", err)) // fixed bodies: a bug here
	}
	return b
}
