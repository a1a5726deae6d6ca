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
			if _, route, _ := strings.Cut(r.name, " "); probeRoute(route) {
				c.probeRouteSpans++
			}
		}
	}
	c.add("traces", int64(len(traces)))
	c.add("bytes", bytesRead)
	return c
}

// probeRoute reports whether a path (its query aside) is one of the service's probe routes: the
// health probe and the metrics scrape start no span unless the service runs with --trace-probes,
// which is off by default.
func probeRoute(path string) bool {
	path, _, _ = strings.Cut(path, "?")
	return path == "/health" || path == "/metrics"
}

// tracedWant returns the traced probes whose spans a trace source can expect, given the probes it
// shows (seen) and whether it holds a span of a probe route (probeSpans): every traced probe,
// except those to a probe route once every other has shown and no probe route's span has.
//
// The spans of one service reach a source in the order they ended (the embedded buffer records a
// span as it ends; the batch exporter sends them in that order), and the traffic always ends with
// traced requests to other routes (the oversized bodies). So once every other span is in, a probe
// route's span that has not come never will: the service does not trace its probes. Until then
// it may be on its way, and is waited for like any other; a missing span of any other route
// keeps the source waiting until --wait.
func (exp *expectation) tracedWant(seen map[string]int, probeSpans bool) (want, untraced []*probe) {
	var routes []*probe
	for _, p := range exp.traced {
		if probeRoute(p.Path) {
			if seen[p.ID] > 0 {
				probeSpans = true
			}
			untraced = append(untraced, p)
		} else {
			routes = append(routes, p)
		}
	}
	if len(untraced) == 0 || probeSpans || len(missing(seen, routes)) > 0 {
		return exp.traced, nil
	}
	return routes, untraced
}

// tracedMissing returns the probes whose spans the collection can expect and does not show yet.
func tracedMissing(c *collection, exp *expectation) []*probe {
	want, _ := exp.tracedWant(c.probesSeen, c.probeRouteSpans > 0)
	return missing(c.probesSeen, want)
}

// settle fixes, once a trace source's wait is over, which probes it is judged by, and says so
// when the service does not trace its probe routes.
func (exp *expectation) settle(c *collection) {
	want, untraced := exp.tracedWant(c.probesSeen, c.probeRouteSpans > 0)
	c.want = want
	if len(untraced) > 0 {
		var ids []string
		for _, p := range untraced {
			ids = append(ids, p.ID)
		}
		c.notes = append(c.notes, fmt.Sprintf("the service does not trace its probe routes (/health and /metrics: --trace-probes is off): no span of them came while every other did, so the audit's %d request(s) to them (%s) were not waited for", len(untraced), strings.Join(ids, " ")))
	}
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
			exp.settle(c)
			return c, nil
		}
	}
}
