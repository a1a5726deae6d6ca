package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// part is one searchable piece of a record: a log field, a span attribute, a header.
type part struct {
	where string // field path, header name, "line"
	text  string
}

// record is one unit of a source: a log line, a span, a metric line, a response.
type record struct {
	id      string // how a finding names it: "line 57", `span "POST /v1/chat/completions" …`
	key     string // identity inside the source, for de-duplicating two views of one span
	traceID string // hex, when the record is a span
	name    string // the span's name, when the record is a span
	probe   string // the probe whose response this is (responses only)
	parts   []part
	// backstop records hold raw bytes already searched field by field; they only report
	// canaries no structured record of the source reported.
	backstop bool
}

// collection is what a source holds after the wait: its records and what it searched.
type collection struct {
	records []record
	counts  []count
	notes   []string
	// captured is how many probes' traffic the source shows; -1 when the source cannot be
	// correlated request by request (metrics, Prometheus), which then set capturedOK.
	probesSeen map[string]int
	capturedOK bool
	capturedBy string // what showed the audit traffic arrived, when not per probe
	// want, in a trace source, are the probes whose spans it can expect (tracedWant); nil: all
	// of the expectation's.
	want []*probe
	// probeRouteSpans counts the spans of the service's probe routes (probeRoute), whoever
	// made the request: any shows that the service traces them.
	probeRouteSpans int
	// problems are parts of the source that could not be searched or vouched for (a control
	// read that failed): the audit is incomplete, though the rest was searched.
	problems []string
}

type count struct {
	name string
	n    int64
}

func (c *collection) add(name string, n int64) {
	for i := range c.counts {
		if c.counts[i].name == name {
			c.counts[i].n += n
			return
		}
	}
	c.counts = append(c.counts, count{name, n})
}

func (c *collection) get(name string) int64 {
	for _, x := range c.counts {
		if x.name == name {
			return x.n
		}
	}
	return 0
}

// source is one place telemetry ends up.
type source interface {
	name() string     // "logs", "metrics", "traces:embedded", …
	kind() string     // logs, metrics, traces, prometheus, responses
	location() string // file, URL
	// start runs before any traffic: baselines, receivers, readers. An error means the source
	// cannot be audited.
	start(ctx context.Context) error
	// collect waits (until deadline at most) for the audit's traffic to show in the source and
	// returns everything it holds.
	collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error)
	close()
}

// expectation is what the traffic left for the sources to find.
type expectation struct {
	corr    *correlator
	probes  []*probe // probes that reached the service
	traced  []*probe // of which those that carried a traceparent
	reached int      // requests that reached the service (for counter deltas)
}

// correlator ties records to probes: by the request id (a valid x-request-id the service keeps,
// by contract) and by the trace id of the traceparent each probe sends.
type correlator struct {
	tag     string // request ids are tag + "." + probe id
	byTrace map[string]string
	byReqID map[string]string
}

func newCorrelator() (*correlator, error) {
	s, err := randomString(10, true)
	if err != nil {
		return nil, err
	}
	return &correlator{tag: "mgaudit." + s, byTrace: map[string]string{}, byReqID: map[string]string{}}, nil
}

func lowerByte(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// probesIn returns the probes a text names by request id or trace id.
func (c *correlator) probesIn(text string) []string {
	var out []string
	for from := 0; ; {
		i := strings.Index(text[from:], c.tag+".")
		if i < 0 {
			break
		}
		i += from + len(c.tag) + 1
		j := i
		for j < len(text) && isCanaryByte(text[j]) {
			j++
		}
		from = j
		if id := c.tag + "." + text[i:j]; c.byReqID[id] != "" {
			out = append(out, c.byReqID[id])
		}
	}
	if len(c.byTrace) > 0 {
		// Runs of exactly 32 hex digits (a regexp is too slow on a multi-megabyte log line).
		for i := 0; i < len(text); {
			if !isHexByte(lowerByte(text[i])) {
				i++
				continue
			}
			j := i
			for j < len(text) && isHexByte(lowerByte(text[j])) {
				j++
			}
			if j-i == 32 && (i == 0 || !isCanaryByte(lowerByte(text[i-1]))) && (j == len(text) || !isCanaryByte(lowerByte(text[j]))) {
				if p, ok := c.byTrace[strings.ToLower(text[i:j])]; ok {
					out = append(out, p)
				}
			}
			i = j
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// correlate fills probesSeen from the records.
func (c *collection) correlate(corr *correlator) {
	c.probesSeen = map[string]int{}
	for _, r := range c.records {
		if r.backstop {
			continue
		}
		var texts []string
		if r.traceID != "" {
			texts = append(texts, r.traceID)
		}
		for _, p := range r.parts {
			texts = append(texts, p.text)
		}
		for _, p := range corr.probesIn(strings.Join(texts, "\n")) {
			c.probesSeen[p]++
		}
	}
}

// auditRecords counts the records tied to the audit's traffic.
func (c *collection) auditRecords() int {
	n := 0
	for _, v := range c.probesSeen {
		n += v
	}
	return n
}

// missing returns the expected probes the source has not shown yet.
func missing(seen map[string]int, want []*probe) []*probe {
	var out []*probe
	for _, p := range want {
		if seen[p.ID] == 0 {
			out = append(out, p)
		}
	}
	return out
}

func decodeBase64Any(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("not base64")
}

// sleepUntil waits d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fetch GETs url and returns the body; any status but 200 is an error, as is a body over max.
func fetch(ctx context.Context, client *http.Client, url string, accept string, max int64) ([]byte, http.Header, error) {
	return fetchKey(ctx, client, url, accept, max, "")
}

// fetchKey is fetch with the local API key, for the target's own guarded routes (/_mock).
func fetchKey(ctx context.Context, client *http.Client, url string, accept string, max int64, apiKey string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := readLimited(resp.Body, max)
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: reading the body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, resp.Header, &statusError{url: url, status: resp.StatusCode}
	}
	return body, resp.Header, nil
}

type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string { return fmt.Sprintf("GET %s answered %d", e.url, e.status) }

func unwrapURLError(err error) error {
	if ue, ok := err.(interface{ Unwrap() error }); ok {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
