package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"mockgateway/internal/chatclient"
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
	h := map[string]string{"User-Agent": "mockgateway-traffic", "X-Request-Id": c.requestID()}
	if c.g.cfg.APIKey != "" {
		h["Authorization"] = "Bearer " + c.g.cfg.APIKey
	}
	for k, v := range r.header {
		h[k] = v
	}
	resp, err := chatclient.Request{Method: r.method, URL: c.g.cfg.Target + r.path, Body: r.body, Header: h}.Send(ctx, c.g.client)
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
		if got, _ := chatclient.ErrorCode(raw); got != code {
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

// stream sends a streaming request and reads the answer until [DONE], the end of the body, or
// stopAfter chunks (stopAfter > 0: the caller is about to hang up). A non-200 answer is
// unexpected.
func (c *call) stream(ctx context.Context, r request, stopAfter int) (chatclient.Stream, error) {
	resp, err := c.send(ctx, r)
	if err != nil {
		return chatclient.Stream{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
		return chatclient.Stream{}, unexpected("stream: status %d, want 200", resp.StatusCode)
	}
	if !chatclient.IsStream(resp.Header) {
		return chatclient.Stream{}, unexpected("stream: content type %q", resp.Header.Get("Content-Type"))
	}
	res, err := chatclient.Read(resp.Body, stopAfter)
	if err != nil {
		return res, unexpected("%v", err)
	}
	if ctx.Err() != nil {
		// Our own hang-up (the generator stopping), not a cut by the service.
		return res, ctx.Err()
	}
	return res, nil
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
