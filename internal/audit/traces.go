package audit

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// traceCollection turns span records into a collection, counting unique spans.
func traceCollection(records []record, bytesRead int64) *collection {
	c := &collection{records: records}
	c.add("spans", 0)
	seen := map[string]bool{}
	traces := map[string]bool{}
	for _, r := range records {
		if r.traceID == "" && !strings.HasPrefix(r.id, "span") {
			continue
		}
		if !seen[r.key] {
			seen[r.key] = true
			c.add("spans", 1)
			traces[r.traceID] = true
		}
	}
	c.add("traces", int64(len(traces)))
	c.add("bytes", bytesRead)
	return c
}

// tracedMissing returns the traced probes no span of the collection shows yet.
func tracedMissing(c *collection, exp *expectation) []*probe {
	return missing(c.probesSeen, exp.traced)
}

// ---- embedded: the target's GET /debug/traces ----

type embeddedTraces struct {
	url    string
	client *http.Client
	apiKey string // with a local key, /debug/traces takes it like /v1 and /_mock
}

func (s *embeddedTraces) name() string     { return "traces:embedded" }
func (s *embeddedTraces) kind() string     { return "traces" }
func (s *embeddedTraces) location() string { return s.url }
func (s *embeddedTraces) close()           {}
func (s *embeddedTraces) start(ctx context.Context) error {
	_, err := s.read(ctx)
	return err
}

func (s *embeddedTraces) read(ctx context.Context) (*collection, error) {
	body, _, err := fetchKey(ctx, s.client, s.url, "application/json", 256<<20, s.apiKey)
	if err != nil {
		return nil, err
	}
	doc, err := parseJSON(body)
	if err != nil || doc.kind != 'o' || doc.get("spans") == nil || doc.get("spans").kind != 'a' {
		return nil, fmt.Errorf("%s did not answer with {\"count\":N,\"spans\":[…]}", s.url)
	}
	spans, rest := spanRecordsFromJSON(doc, "/debug/traces")
	return traceCollection(append(spans, rest), int64(len(body))), nil
}

func (s *embeddedTraces) collect(ctx context.Context, deadline time.Time, exp *expectation) (*collection, error) {
	for {
		c, err := s.read(ctx)
		if err != nil {
			return nil, err
		}
		c.correlate(exp.corr)
		if len(tracedMissing(c, exp)) == 0 || time.Now().After(deadline) || !sleepCtx(ctx, 200*time.Millisecond) {
			return c, nil
		}
	}
}
